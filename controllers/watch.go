package controllers

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
)

// watchRunners follows the load (Running) until every runner finished or failed
// (→ Collecting). Failed runners do not stop the others: their results are kept.
func (r *BenchmarkRunReconciler) watchRunners(ctx context.Context, s *step) error {
	if err := r.applyFaults(ctx, s); err != nil { // faults.go: spec.faults due by now
		return err
	}
	obs, err := r.observeRunners(ctx, s)
	if err != nil {
		return err
	}
	r.updateRunnerCounts(s, obs)
	if err := r.sampleUsage(ctx, s); err != nil {
		return err
	}
	if took, err := r.followLive(ctx, s, obs); took || err != nil { // liveabort.go
		return err
	}
	n := int(s.run.Status.Runners.Desired)
	if obs.done+len(obs.failed) < n {
		s.setCondition(v1alpha1.ConditionLoadComplete, metav1.ConditionFalse, reasonWaiting, fmt.Sprintf("%d/%d runners finished", obs.done, n))
		return nil
	}
	if len(obs.failed) > 0 {
		s.setCondition(v1alpha1.ConditionLoadComplete, metav1.ConditionFalse, v1alpha1.ReasonRunnerFailed, obs.failedText())
	} else {
		s.setCondition(v1alpha1.ConditionLoadComplete, metav1.ConditionTrue, v1alpha1.ReasonAllFinished, fmt.Sprintf("%d runners finished", n))
	}
	s.enterCollecting(v1alpha1.ReasonCollecting, "merging the results of %d runners", obs.done)
	return nil
}

// updateRunnerCounts writes status.runners.
func (r *BenchmarkRunReconciler) updateRunnerCounts(s *step, obs *observation) {
	rs := s.run.Status.Runners
	rs.Ready, rs.Succeeded, rs.Failed = int32(obs.ready), int32(obs.done), int32(len(obs.failed))
	if obs.started == int(rs.Desired) {
		rs.StartSkew = obs.skew.Round(time.Millisecond).String()
		if obs.skew < time.Millisecond {
			rs.StartSkew = obs.skew.Round(time.Microsecond).String()
		}
	}
}

// runTimedOut ends a run that exceeded timeouts.run (default: the scenarios' total duration
// + targetReady + 10m): before the load it fails; during the load what runners stored is
// collected as partial results.
func (r *BenchmarkRunReconciler) runTimedOut(s *step) bool {
	run := s.run
	if run.Status.StartTime == nil || run.Status.Phase == v1alpha1.PhaseCollecting || run.Status.Phase == v1alpha1.PhaseQueued {
		return false
	}
	timeout := lifecycle.RunTimeout(run)
	if s.now.Sub(run.Status.StartTime.Time) < timeout {
		return false
	}
	msg := fmt.Sprintf("the run did not finish within %s", timeout)
	if run.Status.Phase == v1alpha1.PhaseRunning {
		s.setCondition(v1alpha1.ConditionLoadComplete, metav1.ConditionFalse, v1alpha1.ReasonRunTimeout, msg)
		s.enterCollecting(v1alpha1.ReasonRunTimeout, "%s; collecting what the runners stored", msg)
		return true
	}
	r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonRunTimeout, msg)
	return true
}
