package controllers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestOpenModelSearchStopStatus: a search's early stop (arrival.search.stopAfter, default 1)
// reaches the runner's invocation as its stop rule, and a runner's document of a search that
// stopped after step 2 (step 3 cut) becomes status.results[].open.search.stoppedAfter and
// stopReason, step 3 marked cut (not the best rate even though its latency met the rule),
// and a report that says why the search stopped.
func TestOpenModelSearchStopStatus(t *testing.T) {
	e := newEnv(t)
	step, maxP99 := int64(100), metav1.Duration{Duration: 10 * time.Millisecond}
	run := e.redisRun("open-stop", 1)
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "search", Type: v1alpha1.ScenarioRedisPing,
		Arrival: &v1alpha1.ArrivalSpec{Search: &v1alpha1.SearchSpec{StartRate: 100, Step: &step,
			StepDuration: metav1.Duration{Duration: 2 * time.Second}, MaxSteps: ptrTo(int32(3)), MaxP99: &maxP99}}}}
	run = e.startedRun(run)
	var state corev1.ConfigMap
	if !e.exists(&state, e.stateName(run, 0)) || !strings.Contains(state.Data[runner.KeyInvocation], `\"stop\":{\"maxP99Ms\":10,\"after\":1}`) {
		t.Fatalf("invocation lacks the search's stop rule:\n%s", state.Data[runner.KeyInvocation])
	}
	start := e.clock.Now()
	// the 200/s step answered in 1 ms but is marked as the one that broke the rule, so the
	// stop (not the latencies) decides: step 3 is cut
	doc := openSearchDoc(t, "search", start)
	doc.Scenarios[0].SearchStop = &results.SearchStop{AfterStep: 2, Reason: "step-02: p99 12 ms > 10ms"}
	e.setRunnerState(run, 0, map[string]string{runner.KeyState: runner.StateDone, runner.KeyLoadStartedAt: start.Format(time.RFC3339Nano)}, doc)
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	if len(run.Status.Results) != 1 || run.Status.Results[0].Open == nil || run.Status.Results[0].Open.Search == nil {
		t.Fatalf("results %+v", run.Status.Results)
	}
	s := run.Status.Results[0].Open.Search
	if s.StoppedAfter != 2 || s.StopReason != "step-02: p99 12 ms > 10ms" || len(s.Steps) != 3 || !s.Steps[2].Cut || s.Steps[2].Passed || s.Steps[1].Cut {
		t.Errorf("search status %+v", s)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, run.Status.Report.ConfigMapName) {
		t.Fatal("no report ConfigMap")
	}
	if md := report.Data["report.md"]; !strings.Contains(md, "The search stopped after step-02 (step-02: p99 12 ms > 10ms)") || !strings.Contains(md, "| cut ") {
		t.Errorf("report.md:\n%s", md)
	}
}
