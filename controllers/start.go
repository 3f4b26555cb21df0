package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/runner"
)

// runnerOptions are the runner builder's options for the run's current generation; secrets
// are the Secret-backed environment variables the plan asks for.
func (r *BenchmarkRunReconciler) runnerOptions(run *v1alpha1.BenchmarkRun, secrets map[string]v1alpha1.SecretKeyRef) runner.Options {
	image := run.Spec.Load.Runners.Image
	if image == "" {
		image = r.Images.Runner
	}
	return runner.Options{
		Namespace: run.Namespace,
		Prefix:    prefix(run, run.Generation),
		Labels:    runLabels(run, run.Generation),
		Image:     image,
		Spec:      run.Spec.Load.Runners,
		Secrets:   secrets,
		// The operator ends the run at its timeout; this stops the runners without it.
		ActiveDeadline: lifecycle.RunTimeout(run),
	}
}

// createRunners creates the runner state ConfigMaps (each holding its k6 invocation from
// internal/plan) and their empty result ConfigMaps, the start barrier, the runners' ServiceAccount and Role, and the Job
// (→ Starting).
func (r *BenchmarkRunReconciler) createRunners(ctx context.Context, s *step) error {
	run := s.run
	n := int(s.run.Status.Runners.Desired)
	invocations := make([]string, n)
	secrets := map[string]v1alpha1.SecretKeyRef{}
	scripts, reason, err := r.customScripts(ctx, run)
	if err != nil {
		return err
	}
	if reason != "" {
		r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonScriptNotFound, reason)
		return nil
	}
	for i := range invocations {
		inv, err := plan.ForRunner(run, run.Status.Target.Endpoints, i, n, plan.WithScripts(scripts),
			plan.WithRemoteWriteDefault(r.RemoteWriteURL))
		if err != nil {
			r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonInvalidLoad, err.Error())
			return nil
		}
		withFaultProbe(run, &inv, i) // faults.go: runner 0 measures failover
		for _, se := range inv.SecretEnv {
			secrets[se.Name] = se.Secret
		}
		if invocations[i], err = runner.EncodeInvocation(inv); err != nil {
			return err
		}
	}
	o := r.runnerOptions(run, secrets)
	var objs []client.Object
	for _, cm := range runner.StateConfigMaps(o, invocations) {
		objs = append(objs, cm)
	}
	for _, cm := range runner.ResultConfigMaps(o) {
		objs = append(objs, cm)
	}
	objs = append(objs, runner.Barrier(o))
	objs = append(objs, runner.Access(o)...)
	job := runner.Job(o)
	job.Spec.Template.Annotations = map[string]string{annotationRun: run.Name}
	objs = append(objs, job)
	if err := r.createAll(ctx, run, objs); err != nil {
		return err
	}
	s.setPhase(v1alpha1.PhaseStarting, v1alpha1.ReasonRunnersCreated, "%d runners created; the load starts when every runner is ready", n)
	s.setCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, reasonWaiting, "waiting for runners")
	return nil
}

// startDelay is StartDelay or 3s: how far ahead of the release runners are told to start.
func (r *BenchmarkRunReconciler) startDelay() time.Duration {
	if r.StartDelay > 0 {
		return r.StartDelay
	}
	return 3 * time.Second
}

// startRunners waits until every runner is at the barrier, then releases it with a start
// time a few seconds ahead (→ Running). A runner failing before the start fails the run.
func (r *BenchmarkRunReconciler) startRunners(ctx context.Context, s *step) error {
	// stop.go: released by a step whose status patch was lost: the load runs, and a runner that
	// stored its partial document since failed during the load, not before it.
	if err := r.catchUpRelease(ctx, s); err != nil || s.run.Status.Phase == v1alpha1.PhaseRunning {
		return err
	}
	obs, err := r.observeRunners(ctx, s)
	if err != nil {
		return err
	}
	if len(obs.failed) > 0 {
		msg := "runner failed before the load started: " + obs.failedText()
		s.setCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, v1alpha1.ReasonRunnerFailed, msg)
		r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerFailed, msg)
		return nil
	}
	n := int(s.run.Status.Runners.Desired)
	if obs.ready < n {
		msg := fmt.Sprintf("%d/%d runners ready", obs.ready, n)
		if w := obs.waitingText(); w != "" {
			msg += "; " + w
		}
		if reason, stuck := r.runnersStuck(s, obs); stuck {
			msg = "runners not ready in time: " + msg
			s.setCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, reason, msg)
			r.finish(s, v1alpha1.PhaseFailed, reason, msg)
			return nil
		}
		s.setCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, reasonWaiting, msg)
		return nil
	}
	startAt, err := r.releaseBarrier(ctx, s)
	if err != nil {
		return err
	}
	s.run.Status.LoadStartTime = &metav1.Time{Time: startAt}
	s.setCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, v1alpha1.ReasonAllReady, fmt.Sprintf("%d runners ready; load starts at %s", n, startAt.Format(time.RFC3339Nano)))
	s.setPhase(v1alpha1.PhaseRunning, v1alpha1.ReasonLoadStarted, "barrier released: %d runners start at %s", n, startAt.Format(time.RFC3339Nano))
	return nil
}

// releaseBarrier writes startAt into the barrier ConfigMap, or returns the one already
// written (an operator restart between the release and the status patch).
func (r *BenchmarkRunReconciler) releaseBarrier(ctx context.Context, s *step) (time.Time, error) {
	var b corev1.ConfigMap
	key := client.ObjectKey{Namespace: s.run.Namespace, Name: runner.BarrierName(prefix(s.run, s.run.Generation))}
	if err := r.Get(ctx, key, &b); err != nil {
		return time.Time{}, err
	}
	if !ownedBy(&b, s.run) { // an earlier run's barrier: never its start time
		return time.Time{}, r.removeForeign(ctx, s.run, &b)
	}
	if t, err := time.Parse(time.RFC3339Nano, b.Data[runner.KeyStartAt]); err == nil {
		return t, nil
	}
	startAt := r.now().UTC().Add(r.startDelay())
	before := b.DeepCopy()
	if b.Data == nil {
		b.Data = map[string]string{}
	}
	b.Data[runner.KeyStartAt] = startAt.Format(time.RFC3339Nano)
	if err := r.Patch(ctx, &b, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return time.Time{}, err
	}
	return startAt, nil
}

// customScripts reads the sources of the run's script scenarios from their ConfigMaps
// (lifecycle.ScriptSources). A missing ConfigMap or key is the user's error: it comes back
// as a reason, not an error.
func (r *BenchmarkRunReconciler) customScripts(ctx context.Context, run *v1alpha1.BenchmarkRun) (map[string]string, string, error) {
	scripts, err := lifecycle.ScriptSources(run, func(name string) (map[string]string, bool, error) {
		var cm corev1.ConfigMap
		err := r.uncached().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, &cm)
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return cm.Data, err == nil, err
	})
	if lifecycle.IsScriptError(err) {
		return nil, err.Error(), nil
	}
	return scripts, "", err
}
