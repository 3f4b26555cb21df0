package controllers

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/target"
)

// provision deploys the target (Pending → Provisioning) and waits until it is ready (ready:
// the caller creates the runners in the same step). A target not ready within
// timeouts.targetReady fails the run.
func (r *BenchmarkRunReconciler) provision(ctx context.Context, s *step) (ready bool, err error) {
	run, st := s.run, &s.run.Status
	t, err := r.buildTarget(run)
	if err != nil {
		r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonInvalidTarget, err.Error())
		return false, nil
	}
	if st.Phase == v1alpha1.PhasePending {
		if msg, err := r.checkHeTuApp(ctx, run); err != nil || msg != "" {
			if msg != "" {
				r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonInvalidTarget, msg)
			}
			return false, err
		}
		objs, err := t.Objects()
		if err != nil {
			r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonInvalidTarget, err.Error())
			return false, nil
		}
		sharePIDs(run, t, objs) // faultpause.go: pods a pause fault acts on share their process namespace

		if err := r.networkPolicies(ctx, run, t); err != nil { // netpol.go: before any pod exists
			return false, err
		}
		staged, _ := t.(target.Staged)
		now := make([]client.Object, 0, len(objs))
		for _, obj := range objs {
			if staged == nil || !staged.Deferred(obj) {
				now = append(now, obj)
			}
		}
		if err := r.createAll(ctx, run, now); err != nil {
			return false, err
		}
		st.Target.Endpoints = t.Endpoints()
		s.setPhase(v1alpha1.PhaseProvisioning, v1alpha1.ReasonProvisioning, "deploying the %s target (%s): %d objects", t.Kind(), t.Provider(), len(objs))
		s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, reasonWaiting, "target objects created")
	}
	if err := r.createDeferred(ctx, run, t); err != nil {
		return false, err
	}
	ready, reason, err := t.Ready(ctx, r.readyReader()) // the operator's StatefulSets are not cached
	if err != nil {
		return false, fmt.Errorf("target readiness: %w", err)
	}
	if !ready {
		// A target that will never be ready (e.g. a proxy that refused the password) fails now.
		if msg, err := r.targetFailure(ctx, t); err != nil {
			return false, err
		} else if msg != "" {
			s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, v1alpha1.ReasonTargetFailed, msg)
			r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetFailed, msg)
			return false, nil
		}
		// Why it is not ready, when Kubernetes said so: e.g. pods rejected by PodSecurity
		// (FailedCreate on a StatefulSet) would otherwise show as "0/3 ready" until the timeout.
		if w := r.targetWarning(ctx, run, t.Workloads()); w != "" {
			reason += "; last warning: " + w
		}
		timeout := lifecycle.TargetReadyTimeout(run)
		if s.now.Sub(st.StartTime.Time) >= timeout {
			msg := fmt.Sprintf("target not ready after %s: %s", timeout, reason)
			s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, v1alpha1.ReasonTimeout, msg)
			r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetNotReady, msg)
			return false, nil
		}
		s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, reasonWaiting, reason)
		return false, nil
	}
	st.Target.ReadyTime = &s.now
	s.setCondition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonReady,
		fmt.Sprintf("%s target ready after %s", t.Kind(), s.now.Sub(st.StartTime.Time)))
	return true, nil
}

// createDeferred creates the deferred objects of a staged target once the others serve
// (idempotent: existing objects are left alone).
func (r *BenchmarkRunReconciler) createDeferred(ctx context.Context, run *v1alpha1.BenchmarkRun, t target.Target) error {
	staged, ok := t.(target.Staged)
	if !ok {
		return nil
	}
	objs, err := t.Objects()
	if err != nil {
		return err
	}
	sharePIDs(run, t, objs)
	var deferred []client.Object
	for _, obj := range objs {
		if staged.Deferred(obj) {
			deferred = append(deferred, obj)
		}
	}
	if len(deferred) == 0 {
		return nil
	}
	if ready, _, err := staged.BaseReady(ctx, r.Client); err != nil || !ready {
		return err
	}
	for _, obj := range deferred {
		if got := obj.DeepCopyObject().(client.Object); r.Get(ctx, client.ObjectKeyFromObject(obj), got) == nil && ownedBy(got, run) {
			continue // created by an earlier reconcile
		}
		if err := r.create(ctx, run, obj); err != nil {
			return err
		}
	}
	return nil
}
