package controllers

import (
	"context"
	"math"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/progress"
	"github.com/benchrun/benchrun/internal/runner"
)

// Live progress and live abortOnFail (Running).
//
// Each runner publishes its live progress document in its (cached) state ConfigMap
// (internal/runner/live.go). followLive merges them — decoded defensively, only the run's
// own scenario names, one accumulator per scenario — into status.live (at most every
// liveStatusInterval) and evaluates the abortOnFail thresholds once their delayAbortEval has
// passed since the load started. When one is broken it writes stopAt into the barrier (the
// runners stop k6 gracefully and store their partial documents) and sets LoadComplete=False
// with reason AbortedOnThreshold and a message naming the threshold and the live value; runners
// still loading after half of abortFlushTimeout (an older image ignores stopAt) have their Job
// deleted (SIGTERM: they store what they measured too); once every runner finished, or
// abortFlushTimeout passed, the run collects what was stored and ends Failed with that reason
// (collect.go takes a false LoadComplete's reason).

// abortFlushTimeout bounds how long stopped runners may take to store their partial
// documents (k6's graceful stop and the upload) before the run collects what is stored.
var abortFlushTimeout = 90 * time.Second

// liveStatusInterval is how often status.live is refreshed at most.
const liveStatusInterval = 5 * time.Second

// maxLiveScenarios bounds status.live.scenarios (the API's MaxItems).
const maxLiveScenarios = 32

// followLive refreshes status.live and applies abortOnFail; it returns true when it took
// this step over (an abort requested now or under way), so the caller does nothing else.
func (r *BenchmarkRunReconciler) followLive(ctx context.Context, s *step, obs *observation) (bool, error) {
	st := &s.run.Status
	if c := abortCondition(st); c != nil {
		waited := s.now.Sub(c.LastTransitionTime.Time)
		if obs.done+len(obs.failed) >= int(st.Runners.Desired) || waited >= abortFlushTimeout {
			s.enterCollecting(v1alpha1.ReasonAbortedOnThreshold, "%s; collecting what the runners stored", c.Message)
		} else if waited >= abortFlushTimeout/2 {
			return true, r.deleteRunnerJob(ctx, s) // runners ignoring stopAt (an older image) get SIGTERM
		}
		return true, nil
	}
	live, merged, ignored := mergeProgress(s.run, obs)
	setLive(s, live, merged, ignored)
	followRemoteWrite(s, obs) // remotewrite.go: LiveMetrics condition
	if !progress.HasAbortOnFail(s.run.Spec.Thresholds) || st.LoadStartTime == nil || merged == 0 {
		return false, nil
	}
	since := s.now.Sub(st.LoadStartTime.Time)
	var base []v1alpha1.ScenarioResult
	if st.Baseline != nil {
		base = st.Baseline.Results
	}
	tr, broken := progress.Broken(s.run.Spec.Thresholds, live, base, since)
	if !broken {
		return false, nil
	}
	if err := r.requestStop(ctx, s); err != nil {
		return false, err
	}
	msg := progress.AbortMessage(tr, since)
	s.setCondition(v1alpha1.ConditionThresholdsMet, metav1.ConditionFalse, v1alpha1.ReasonAbortedOnThreshold, msg)
	// LoadComplete is already False (Waiting): removed first, so its transition time is the
	// abort's and starts the flush wait.
	apimeta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionLoadComplete)
	s.setCondition(v1alpha1.ConditionLoadComplete, metav1.ConditionFalse, v1alpha1.ReasonAbortedOnThreshold, msg)
	return true, nil
}

// abortCondition is the LoadComplete condition of a run aborted on a threshold, else nil.
func abortCondition(st *v1alpha1.BenchmarkRunStatus) *metav1.Condition {
	c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ConditionLoadComplete)
	if c == nil || c.Reason != v1alpha1.ReasonAbortedOnThreshold {
		return nil
	}
	return c
}

// mergeProgress merges the runners' progress documents; a document refused by the decoder
// (too large, malformed, absurd figures) is ignored and counted.
func mergeProgress(run *v1alpha1.BenchmarkRun, obs *observation) (live []v1alpha1.ScenarioResult, merged, ignored int) {
	allowed := map[string]bool{}
	for _, sc := range run.Spec.Load.Scenarios {
		allowed[sc.Name] = true
	}
	m := progress.NewMerger(allowed)
	for _, cm := range obs.configs {
		if cm == nil {
			continue
		}
		raw, ok := cm.Data[progress.Key]
		if !ok {
			continue
		}
		d, err := progress.Decode(raw)
		if err != nil {
			ignored++
			continue
		}
		m.Add(d)
		merged++
	}
	return m.Results(), merged, ignored
}

// setLive writes status.live, at most every liveStatusInterval (every status patch costs a
// write and a watch event), always when it appears or its runner counts change.
func setLive(s *step, live []v1alpha1.ScenarioResult, merged, ignored int) {
	st := &s.run.Status
	if merged == 0 && ignored == 0 {
		return
	}
	if l := st.Live; l != nil && int(l.Runners) == merged && int(l.Ignored) == ignored && s.now.Sub(l.UpdatedAt.Time) < liveStatusInterval {
		return
	}
	ls := &v1alpha1.LiveStatus{UpdatedAt: s.now, Runners: int32(merged), Ignored: int32(ignored)}
	for _, r := range live {
		if (r.Calls == 0 && r.Errors == 0) || len(ls.Scenarios) == maxLiveScenarios {
			continue
		}
		ls.Scenarios = append(ls.Scenarios, v1alpha1.LiveScenario{Name: r.Name, Calls: r.Calls, Errors: r.Errors,
			CPS: math.Round(r.CPS*100) / 100, P99Ms: math.Round(r.LatencyMs.P99*1000) / 1000})
	}
	st.Live = ls
}

// deleteRunnerJob deletes the run's runner Job: its pods get SIGTERM, on which a runner agent
// stops k6 and stores its partial document within the pods' grace period.
func (r *BenchmarkRunReconciler) deleteRunnerJob(ctx context.Context, s *step) error {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: s.run.Namespace, Name: runner.JobName(prefix(s.run, s.run.Generation))}}
	return client.IgnoreNotFound(r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)))
}

// requestStop writes stopAt into the barrier ConfigMap, which every runner watches.
func (r *BenchmarkRunReconciler) requestStop(ctx context.Context, s *step) error {
	var b corev1.ConfigMap
	key := client.ObjectKey{Namespace: s.run.Namespace, Name: runner.BarrierName(prefix(s.run, s.run.Generation))}
	if err := r.Get(ctx, key, &b); err != nil {
		return err
	}
	if b.Data[runner.KeyStop] != "" {
		return nil
	}
	before := b.DeepCopy()
	if b.Data == nil {
		b.Data = map[string]string{}
	}
	b.Data[runner.KeyStop] = s.now.UTC().Format(time.RFC3339Nano)
	return r.Patch(ctx, &b, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}
