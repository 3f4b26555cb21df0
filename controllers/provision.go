package controllers

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// defaultTargetReady is timeouts.targetReady when unset.
const defaultTargetReady = 10 * time.Minute

// provision deploys the target (Pending → Provisioning) and waits until it is ready; then
// the runners are created (→ Starting). A target not ready within timeouts.targetReady
// fails the run.
func (r *BenchmarkRunReconciler) provision(ctx context.Context, s *step) error {
	run, st := s.run, &s.run.Status
	t, err := r.buildTarget(run)
	if err != nil {
		r.finish(s, v1alpha1.PhaseFailed, "InvalidTarget", err.Error())
		return nil
	}
	if st.Phase == v1alpha1.PhasePending {
		objs, err := t.Objects()
		if err != nil {
			r.finish(s, v1alpha1.PhaseFailed, "InvalidTarget", err.Error())
			return nil
		}
		for _, obj := range objs {
			if err := r.create(ctx, run, obj); err != nil {
				return err
			}
		}
		st.Target.Endpoints = t.Endpoints()
		s.setPhase(v1alpha1.PhaseProvisioning, "Provisioning", "deploying the %s target (%s): %d objects", t.Kind(), t.Provider(), len(objs))
		s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, reasonWaiting, "target objects created")
	}
	ready, reason, err := t.Ready(ctx, r.Client)
	if err != nil {
		return fmt.Errorf("target readiness: %w", err)
	}
	if !ready {
		// A target that will never be ready (e.g. a proxy that refused the password) fails now.
		if msg, err := r.targetFailure(ctx, t); err != nil {
			return err
		} else if msg != "" {
			s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, "TargetFailed", msg)
			r.finish(s, v1alpha1.PhaseFailed, "TargetFailed", msg)
			return nil
		}
		// Why it is not ready, when Kubernetes said so: e.g. pods rejected by PodSecurity
		// (FailedCreate on a StatefulSet) would otherwise show as "0/3 ready" until the timeout.
		if w := r.targetWarning(ctx, run, t.Workloads()); w != "" {
			reason += "; last warning: " + w
		}
		timeout := defaultTargetReady
		if d := run.Spec.Timeouts.TargetReady; d != nil {
			timeout = d.Duration
		}
		if s.now.Sub(st.StartTime.Time) >= timeout {
			msg := fmt.Sprintf("target not ready after %s: %s", timeout, reason)
			s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, "Timeout", msg)
			r.finish(s, v1alpha1.PhaseFailed, "TargetNotReady", msg)
			return nil
		}
		s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, reasonWaiting, reason)
		return nil
	}
	st.Target.ReadyTime = &s.now
	s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, "Ready",
		fmt.Sprintf("%s target ready after %s", t.Kind(), s.now.Sub(st.StartTime.Time)))
	return r.createRunners(ctx, s)
}
