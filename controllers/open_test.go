package controllers

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// openSearchDoc is a runner's document of a 3-step search: 100 and 200 calls/s answered in
// 1 ms, 300 calls/s answered 50 ms after they were due (queued) with 30 dropped.
func openSearchDoc(t *testing.T, name string, start time.Time) *results.Document {
	t.Helper()
	rec := results.NewRecorder(name, string(v1alpha1.ScenarioRedisPing))
	rec.SetTargetRate(200)
	for step, rate := range []int{100, 200, 300} {
		op := rec.Op(results.StepName(step + 1))
		op.SetTargetRate(float64(rate))
		base := start.Add(time.Duration(step) * 2 * time.Second)
		for c := range 2 * rate {
			due := base.Add(time.Duration(c) * time.Second / time.Duration(rate))
			sent, end := due, due.Add(time.Millisecond)
			if step == 2 {
				sent, end = due.Add(49*time.Millisecond), due.Add(50*time.Millisecond)
			}
			rec.RecordOpen(due, sent, end, "PONG", "")
			op.RecordOpen(due, sent, end, "PONG", "")
		}
	}
	rec.Op(results.StepName(3)).AddDropped(30)
	rec.AddDropped(30)
	doc, err := results.NewDocument("runner-0", rec.Scenario())
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenModelStatusAndReport: an arrival search reaches the runner's invocation through the
// plan, and a runner's open-model document becomes status.results[].open (the search's best
// rate and steps, each with its achievedRatio) and a report with the step table and the SVG plot.
func TestOpenModelStatusAndReport(t *testing.T) {
	e := newEnv(t)
	step, maxP99 := int64(100), metav1.Duration{Duration: 10 * time.Millisecond}
	run := e.redisRun("open", 1)
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "search", Type: v1alpha1.ScenarioRedisPing,
		Arrival: &v1alpha1.ArrivalSpec{Search: &v1alpha1.SearchSpec{StartRate: 100, Step: &step,
			StepDuration: metav1.Duration{Duration: 2 * time.Second}, MaxSteps: ptrTo(int32(3)), MaxP99: &maxP99}}}}
	run = e.startedRun(run)
	var state corev1.ConfigMap
	if !e.exists(&state, e.stateName(run, 0)) || !strings.Contains(state.Data[runner.KeyInvocation], `\"arrival\":{\"segments\":[{\"from\":100,\"to\":100,\"durationMs\":2000,\"step\":1}`) {
		t.Fatalf("invocation lacks the search's segments:\n%s", state.Data[runner.KeyInvocation])
	}
	start := e.clock.Now()
	e.setRunnerState(run, 0, map[string]string{runner.KeyState: runner.StateDone, runner.KeyLoadStartedAt: start.Format(time.RFC3339Nano)},
		openSearchDoc(t, "search", start))
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	if len(run.Status.Results) != 1 || run.Status.Results[0].Open == nil {
		t.Fatalf("results %+v", run.Status.Results)
	}
	o := run.Status.Results[0].Open
	if o.Dropped != 30 || o.Search == nil || o.Search.BestRate != 200 || len(o.Search.Steps) != 3 ||
		!o.Search.Steps[1].Passed || o.Search.Steps[2].Passed || o.Search.Steps[2].Dropped != 30 || o.Search.Rule != "p99 <= 10ms" {
		t.Errorf("open result %+v search %+v", o, o.Search)
	}
	for i, st := range o.Search.Steps { // each step is a constant rate: its ratio is in status too
		if st.AchievedRatio <= 0.5 || st.AchievedRatio > 1.5 || math.Abs(st.AchievedRatio-st.CPS/st.TargetRate) > 0.01 {
			t.Errorf("steps[%d].achievedRatio %v, want ~%v (cps %v / target %v)", i, st.AchievedRatio, st.CPS/st.TargetRate, st.CPS, st.TargetRate)
		}
	}
	if p99 := run.Status.Results[0].LatencyMs.P99; p99 < 49 || o.ServiceP99Ms > 1.1 {
		t.Errorf("corrected p99 %v ms (want ~50), service p99 %v ms (want ~1)", p99, o.ServiceP99Ms)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, run.Status.Report.ConfigMapName) {
		t.Fatal("no report ConfigMap")
	}
	if md := report.Data["report.md"]; !strings.Contains(md, "Saturation Search search (p99 <= 10ms): highest rate meeting the rule: 200.00/s") {
		t.Errorf("report.md:\n%s", md)
	}
	if svg := report.Data["search-search.svg"]; !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, fmt.Sprintf("best %s/s", "200")) {
		t.Errorf("search-search.svg: %.300s", svg)
	}
}

// ptrTo returns a pointer to v.
func ptrTo[T any](v T) *T { return &v }
