package controllers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// finishedRun drives a run through Running and lets every runner store calls calls per scenario.
func (e *env) finishedRun(run *v1alpha1.BenchmarkRun, calls int, phase v1alpha1.Phase) *v1alpha1.BenchmarkRun {
	e.t.Helper()
	run = e.startedRun(run)
	for i := range int(run.Status.Runners.Desired) {
		e.finishRunner(run, i, calls)
	}
	return e.until(run.Name, phase)
}

// TestThresholdsPass: every threshold holds → Succeeded, verdict Passed, the table in status and report.
func TestThresholdsPass(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("pass", 2)
	run.Spec.Thresholds = []v1alpha1.Threshold{{Expr: "p99 < 50"}, {Scenario: "get", Expr: "errorRate <= 0"}, {Expr: "cps > 1"}}
	run = e.finishedRun(run, 100, v1alpha1.PhaseSucceeded)
	st := run.Status
	if st.Verdict != v1alpha1.VerdictPassed || len(st.Thresholds) != 5 || !meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionThresholdsMet) {
		t.Fatalf("verdict %s thresholds %+v conditions %+v", st.Verdict, st.Thresholds, st.Conditions)
	}
	if tr := st.Thresholds[0]; tr.Scenario != "get" || tr.Limit != 50 || tr.Observed <= 0 || tr.Observed >= 50 || !tr.Passed {
		t.Fatalf("row %+v", tr)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, st.Report.ConfigMapName) || !strings.Contains(report.Data["report.md"], "Verdict: Passed") {
		t.Fatalf("report without verdict: %s", report.Data["report.md"])
	}
}

// TestThresholdsFail: a broken threshold fails the run (reason ThresholdsNotMet), results kept.
func TestThresholdsFail(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("fail", 1)
	run.Spec.Thresholds = []v1alpha1.Threshold{{Scenario: "set", Expr: "p99 < 0.5"}, {Expr: "cps > 1"}}
	run = e.finishedRun(run, 100, v1alpha1.PhaseFailed)
	st := run.Status
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionSucceeded)
	tm := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionThresholdsMet)
	if st.Verdict != v1alpha1.VerdictFailed || c == nil || c.Reason != v1alpha1.ReasonThresholdsNotMet || tm == nil || tm.Status != metav1.ConditionFalse {
		t.Fatalf("verdict %s conditions %+v", st.Verdict, st.Conditions)
	}
	if !strings.Contains(c.Message, "1 of 3 thresholds not met: set: p99 < 0.5 (observed 1.0") || len(st.Results) != 2 || st.Partial {
		t.Fatalf("message %q results %d partial %v", c.Message, len(st.Results), st.Partial)
	}
	if !meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionResultsCollected) || st.Report == nil || st.CompletionTime == nil {
		t.Fatalf("results not kept: %+v", st)
	}
	if !e.hasEvent(v1alpha1.ReasonThresholdsNotMet) {
		t.Fatalf("no ThresholdsNotMet Event in %q", e.events)
	}
	// A spec change re-runs it; the failed generation keeps its verdict in history.
	run.Spec.Thresholds[0].Expr = "p99 < 50"
	if err := k8sClient.Update(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	e.reconcile(run.Name)
	if h := e.get(run.Name).Status.History; len(h) != 1 || h[0].Verdict != v1alpha1.VerdictFailed || h[0].Phase != v1alpha1.PhaseFailed {
		t.Fatalf("history %+v", h)
	}
}

// TestAbortOnFail: runners that published no live progress (finished before their first
// publish, or an older runner image) leave an abortOnFail threshold to be evaluated at
// collection like the others: the broken threshold fails the run (live: liveabort_test.go).
func TestAbortOnFail(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("abort", 1)
	run.Spec.Thresholds = []v1alpha1.Threshold{{Expr: "max < 0.1", AbortOnFail: true, DelayAbortEval: &metav1.Duration{Duration: 10 * time.Second}}}
	run = e.finishedRun(run, 10, v1alpha1.PhaseFailed)
	if run.Status.Verdict != v1alpha1.VerdictFailed || len(run.Status.Thresholds) != 2 || run.Status.Thresholds[0].Passed {
		t.Fatalf("status %+v", run.Status)
	}
}

// TestBaselineCopiedAndSurvivesDeletion: a baseline named in the spec is copied at start;
// deleting it later changes nothing; relative thresholds and deltas use the copy.
func TestBaselineCopiedAndSurvivesDeletion(t *testing.T) {
	e := newEnv(t)
	base := e.finishedRun(e.redisRun("base", 1), 100, v1alpha1.PhaseSucceeded)
	run := e.redisRun("cand", 1)
	run.Spec.Baseline = &v1alpha1.BaselineSpec{Name: base.Name}
	run.Spec.Thresholds = []v1alpha1.Threshold{{Scenario: "get", Expr: "cps >= -5%"}, {Expr: "p99 <= +10%"}}
	e.create(run)
	run = e.until(run.Name, v1alpha1.PhaseProvisioning)
	if b := run.Status.Baseline; b == nil || b.Name != "base" || b.UID != string(base.UID) || len(b.Results) != 2 ||
		b.Results[0].CPS != base.Status.Results[0].CPS || b.Results[0].CallsPerMinute != nil {
		t.Fatalf("baseline %+v", run.Status.Baseline)
	}
	if !meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionBaselineResolved) {
		t.Fatalf("conditions %+v", run.Status.Conditions)
	}
	if err := k8sClient.Delete(e.ctx, base); err != nil {
		t.Fatal(err)
	}
	e.targetReady(run.Name)
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	e.readyRunners(run)
	run = e.until(run.Name, v1alpha1.PhaseRunning)
	e.finishRunner(run, 0, 50) // half the calls over the same 10s: CPS −50%
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	st := run.Status
	if len(st.Baseline.Deltas) != 2 || st.Baseline.Deltas[0].CPSPercent > -45 || st.Baseline.Deltas[0].CPSPercent < -55 {
		t.Fatalf("deltas %+v", st.Baseline.Deltas)
	}
	if st.Verdict != v1alpha1.VerdictFailed || st.Thresholds[0].Passed || !st.Thresholds[1].Passed {
		t.Fatalf("thresholds %+v", st.Thresholds)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, st.Report.ConfigMapName) || !strings.Contains(report.Data["report.md"], "Against baseline base") {
		t.Fatalf("report without baseline: %s", report.Data["report.md"])
	}
}

// TestBaselineSelectorNewestSucceeded: a selector picks the newest Succeeded matching run,
// never a failed one nor the run itself.
func TestBaselineSelectorNewestSucceeded(t *testing.T) {
	e := newEnv(t)
	labelled := func(name string) *v1alpha1.BenchmarkRun {
		r := e.redisRun(name, 1)
		r.Labels = map[string]string{"app": "cache"}
		return r
	}
	e.finishedRun(labelled("old"), 100, v1alpha1.PhaseSucceeded)
	e.clock.Step(time.Hour)
	e.finishedRun(labelled("newer"), 80, v1alpha1.PhaseSucceeded)
	e.clock.Step(time.Hour)
	bad := labelled("broken")
	bad.Spec.Thresholds = []v1alpha1.Threshold{{Expr: "p99 < 0.001"}}
	e.finishedRun(bad, 100, v1alpha1.PhaseFailed)
	run := labelled("next")
	run.Spec.Baseline = &v1alpha1.BaselineSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}}
	run.Spec.Load.Scenarios = append(run.Spec.Load.Scenarios, v1alpha1.Scenario{Name: "ping", Type: v1alpha1.ScenarioRedisPing})
	e.create(run)
	run = e.until(run.Name, v1alpha1.PhaseProvisioning)
	if run.Status.Baseline == nil || run.Status.Baseline.Name != "newer" {
		t.Fatalf("baseline %+v", run.Status.Baseline)
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionBaselineResolved); c == nil ||
		!strings.Contains(c.Message, "no figures for scenario(s) ping (no deltas for them)") {
		t.Fatalf("condition %+v", c)
	}
}

// TestBaselineMissing: a named baseline that does not exist fails the run before anything is
// deployed; a selector matching nothing is fine without relative thresholds, and fails with them.
func TestBaselineMissing(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("orphan", 1)
	run.Spec.Baseline = &v1alpha1.BaselineSpec{Name: "nope"}
	e.create(run)
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != "BaselineNotFound" || !strings.Contains(c.Message, `spec.baseline.name: BenchmarkRun "nope" not found`) {
		t.Fatalf("condition %+v", c)
	}
	if e.exists(&corev1.ConfigMap{}, e.stateName(run, 0)) || run.Status.Target.Endpoints != nil {
		t.Fatal("objects created for a run without its baseline")
	}

	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"ref": "none"}}
	free := e.redisRun("free", 1)
	free.Spec.Baseline = &v1alpha1.BaselineSpec{Selector: sel}
	e.create(free)
	free = e.until(free.Name, v1alpha1.PhaseProvisioning)
	if c := meta.FindStatusCondition(free.Status.Conditions, v1alpha1.ConditionBaselineResolved); c == nil || c.Reason != "NoBaseline" {
		t.Fatalf("condition %+v", c)
	}

	rel := e.redisRun("relative", 1)
	rel.Spec.Baseline = &v1alpha1.BaselineSpec{Selector: sel}
	rel.Spec.Thresholds = []v1alpha1.Threshold{{Expr: "cps >= -5%"}}
	e.create(rel)
	rel = e.until(rel.Name, v1alpha1.PhaseFailed)
	if c := meta.FindStatusCondition(rel.Status.Conditions, v1alpha1.ConditionSucceeded); c == nil || c.Reason != "BaselineNotFound" {
		t.Fatalf("condition %+v", c)
	}
}

// TestBaselineInvalidSelector: a selector the API server accepts but that cannot select (a
// value that is no label value; operator In without values is refused at admission now) fails
// the run at once with the reason.
func TestBaselineInvalidSelector(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("badsel", 1)
	run.Spec.Baseline = &v1alpha1.BaselineSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"not a label value!"}}}}}
	e.create(run)
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded); c == nil || c.Reason != "InvalidBaseline" ||
		!strings.Contains(c.Message, "spec.baseline.selector: ") {
		t.Fatalf("condition %+v", c)
	}
}

// TestBaselineStillRunning: a named baseline that has not finished makes the run wait in Pending.
func TestBaselineStillRunning(t *testing.T) {
	e := newEnv(t)
	base := e.startedRun(e.redisRun("slowbase", 1))
	run := e.redisRun("waiter", 1)
	run.Spec.Baseline = &v1alpha1.BaselineSpec{Name: base.Name}
	e.create(run)
	for range 3 {
		e.reconcile(run.Name)
	}
	run = e.get(run.Name)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionBaselineResolved)
	if run.Status.Phase != v1alpha1.PhasePending || c == nil || !strings.Contains(c.Message, "waiting for baseline slowbase") {
		t.Fatalf("phase %s condition %+v", run.Status.Phase, c)
	}
	e.finishRunner(base, 0, 10)
	e.until(base.Name, v1alpha1.PhaseSucceeded)
	if run = e.until(run.Name, v1alpha1.PhaseProvisioning); run.Status.Baseline == nil {
		t.Fatal("baseline not copied once finished")
	}
}
