package controllers

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// stopWait bounds how long a generation stopped during its load (a spec edit or a deletion)
// waits for its runners to store what they measured; below deletingGrace, so a deleted run
// still has time to keep its report.
const stopWait = 20 * time.Second

// stopPoll is how often a stopping generation is re-checked (the runners' state ConfigMaps
// also trigger a reconcile when they change).
const stopPoll = time.Second

// reasonStopping marks the LoadComplete condition of a generation whose runners were stopped
// because the run was edited or deleted; its transition time starts stopWait.
const reasonStopping = v1alpha1.ReasonStopping

// stopRunners stops the runners of the run's observed generation when it is stopped during its
// load, and tells whether to wait for them. Their Job is deleted: the pods get SIGTERM, k6 stops
// and each runner agent stores its partial document before it exits. The caller waits until
// every runner has finished or stopWait has passed since the stop (the LoadComplete condition
// with reason Stopping, kept in the status, so a restarted manager waits no longer).
func (r *BenchmarkRunReconciler) stopRunners(ctx context.Context, s *step, why string) (wait bool, err error) {
	run, st := s.run, &s.run.Status
	if err := r.catchUpRelease(ctx, s); err != nil {
		return false, err
	}
	if st.Phase != v1alpha1.PhaseRunning || st.Runners == nil || st.ObservedGeneration == 0 {
		return false, nil // no load running: nothing more will be stored
	}
	old := run.DeepCopy()
	old.Generation = st.ObservedGeneration
	obs, err := r.observeRunners(ctx, &step{run: old, before: old, now: s.now})
	if err != nil {
		return false, err
	}
	if obs.done+len(obs.failed) >= int(st.Runners.Desired) {
		return false, nil
	}
	if c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ConditionLoadComplete); c != nil && c.Reason == reasonStopping {
		return s.now.Sub(c.LastTransitionTime.Time) < stopWait, nil
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: runner.JobName(prefix(run, st.ObservedGeneration))}}
	if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return false, err
	}
	apimeta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionLoadComplete) // the transition time starts the wait
	s.setCondition(v1alpha1.ConditionLoadComplete, metav1.ConditionFalse, reasonStopping,
		fmt.Sprintf("%s: %d/%d runners finished; the others are stopped and have up to %s to store what they measured",
			why, obs.done+len(obs.failed), st.Runners.Desired, stopWait))
	return true, nil
}

// catchUpRelease moves a Starting generation whose barrier was released already (the step that
// released it was cut before its status patch: a manager killed, an answer lost) to Running,
// with the barrier's start time: its runners are loading, and a generation stopped now must
// be stopped and collected as a running one, not have its objects deleted under them.
func (r *BenchmarkRunReconciler) catchUpRelease(ctx context.Context, s *step) error {
	run, st := s.run, &s.run.Status
	if st.Phase != v1alpha1.PhaseStarting || st.ObservedGeneration == 0 || st.Runners == nil {
		return nil
	}
	var b corev1.ConfigMap
	key := client.ObjectKey{Namespace: run.Namespace, Name: runner.BarrierName(prefix(run, st.ObservedGeneration))}
	if err := r.uncached().Get(ctx, key, &b); err != nil {
		return client.IgnoreNotFound(err)
	}
	startAt, err := time.Parse(time.RFC3339Nano, b.Data[runner.KeyStartAt])
	if err != nil || !ownedBy(&b, run) {
		return nil // not released (or an earlier run's): no load runs
	}
	st.LoadStartTime = &metav1.Time{Time: startAt}
	s.setCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, v1alpha1.ReasonAllReady, fmt.Sprintf("%d runners ready; load starts at %s",
		st.Runners.Desired, startAt.Format(time.RFC3339Nano)))
	s.setPhase(v1alpha1.PhaseRunning, v1alpha1.ReasonLoadStarted, "barrier released: runners started at %s", startAt.Format(time.RFC3339Nano))
	return nil
}
