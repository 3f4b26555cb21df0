package controllers

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// afterFinish applies the cleanup policy to a finished run (target and runner objects;
// results, runner documents and reports stay) and deletes the run ttlSecondsAfterFinished
// after it finished.
func (r *BenchmarkRunReconciler) afterFinish(ctx context.Context, s *step) (ctrl.Result, error) {
	run := s.run
	if cleanupWanted(run) {
		n, err := r.deleteGeneration(ctx, run, run.Generation, true)
		if err != nil {
			return ctrl.Result{}, err
		}
		if n > 0 {
			s.event(corev1.EventTypeNormal, v1alpha1.ReasonCleanedUp, "deleted %d target and runner objects (policy %s); results kept", n, policy(run))
		}
	}
	if run.Status.LoadStartTime == nil {
		// Runners still waiting at the barrier of a run that never started: stop them
		// whatever the policy (they hold their nodes and will never be released).
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: runner.JobName(prefix(run, run.Generation))}}
		if err := r.Delete(ctx, job, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	res := ctrl.Result{}
	if ttl := run.Spec.Cleanup.TTLSecondsAfterFinished; ttl != nil && run.Status.CompletionTime != nil {
		left := run.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(r.now())
		if left <= 0 {
			r.Recorder.Eventf(run, corev1.EventTypeNormal, v1alpha1.ReasonExpired, "deleting the run %ds after it finished", *ttl)
			return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, run, client.PropagationPolicy("Background")))
		}
		res.RequeueAfter = left
	}
	res, err := r.patchStatus(ctx, s, res)
	if err != nil {
		return res, err
	}
	return res, r.syncFinalizer(ctx, run)
}

// policy is the cleanup policy, OnSuccess by default.
func policy(run *v1alpha1.BenchmarkRun) v1alpha1.CleanupPolicy {
	if p := run.Spec.Cleanup.Policy; p != "" {
		return p
	}
	return v1alpha1.CleanupOnSuccess
}

// cleanupWanted tells whether the finished run's objects are to be deleted.
func cleanupWanted(run *v1alpha1.BenchmarkRun) bool {
	switch policy(run) {
	case v1alpha1.CleanupAlways:
		return true
	case v1alpha1.CleanupOnSuccess:
		return run.Status.Phase == v1alpha1.PhaseSucceeded
	}
	return false
}
