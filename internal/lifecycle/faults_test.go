package lifecycle

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// TestFaultTimeline: two runners record a 1 s stall 10 s into their scenario (no call
// completes in it, the calls in flight complete after it with ~1 s latency, some fail);
// MeasureFaults gives the merged per-second calls, errors and p99 around the fault, marks the
// fault that was never due NotApplied, and the report shows the per-second table.
func TestFaultTimeline(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	fault := start.Add(10 * time.Second)
	var docs []*results.Document
	for r := range 2 {
		rec := results.NewRecorder("get", "redis.get")
		rec.SetWindows(results.FaultWindows(start, []time.Duration{10 * time.Second}))
		for ms := range 20_000 {
			at := start.Add(time.Duration(ms) * time.Millisecond)
			switch {
			case at.Before(fault):
				rec.Record(at, 500*time.Microsecond, "v", "")
			case at.Before(fault.Add(time.Second)): // stalled: the calls sent are answered at fault+1s, one in 50 failed
				if ms%50 == 0 {
					rec.Record(at, fault.Add(time.Second+time.Millisecond).Sub(at), "", "timeout")
				} else if ms%10 == 0 {
					rec.Record(at, fault.Add(time.Second+time.Millisecond).Sub(at), "v", "")
				}
				if false {
					rec.Record(at, fault.Add(time.Second+time.Millisecond).Sub(at), "", "timeout")
				}
			default:
				rec.Record(at, 2*time.Millisecond, "v", "")
			}
		}
		doc, err := results.NewDocument("r"+string(rune('0'+r)), rec.Scenario())
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
	}
	merged, err := results.Merge(docs...)
	if err != nil {
		t.Fatal(err)
	}
	st := v1alpha1.BenchmarkRunStatus{Faults: []v1alpha1.FaultStatus{{Index: 0, Scenario: "get", Action: "kill", Role: "master",
		Offset: "10s", Outcome: v1alpha1.FaultApplied, AppliedTime: &metav1.MicroTime{Time: fault.Add(20 * time.Millisecond)}}}}
	faults := []v1alpha1.Fault{{Scenario: "get", Offset: metav1.Duration{Duration: 10 * time.Second}, Action: "kill", Role: "master"},
		{Scenario: "get", Offset: metav1.Duration{Duration: time.Hour}, Action: "kill", Role: "master"}}
	MeasureFaults(&st, faults, merged, nil)
	if len(st.Faults) != 2 || st.Faults[1].Outcome != v1alpha1.FaultNotApplied {
		t.Fatalf("faults: %+v", st.Faults)
	}
	tl := st.Faults[0].Timeline
	if len(tl) != FaultTimelineLen || tl[0].Second != -5 || tl[5].Second != 0 {
		t.Fatalf("timeline: %+v", tl)
	}
	before, gap, after := tl[4], tl[5], tl[6]
	if before.Calls != 2000 || before.Errors != 0 || before.P99Micros != 500 {
		t.Errorf("the second before the fault: %+v", before)
	}
	if gap.Calls != 0 || gap.P99Micros != 0 {
		t.Errorf("the stalled second: %+v", gap)
	}
	if after.Calls != 2196 || after.Errors != 40 || after.P99Micros < 800_000 || after.P99Micros > 1_010_000 {
		t.Errorf("the second after the stall: %+v", after)
	}
	var md strings.Builder
	RenderFaults(&md, &st)
	for _, want := range []string{"| second | calls | errors | p99 (ms) | max (ms) |", "| -1 | 2000 | 0 | 0.50 | 0.50 |", "| 0 (fault) | 0 | 0 | - | - |", "NotApplied: the load ended"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
}

// TestFaultDueAfterRamp: the issue-25 case. A kill at offset 2 s in the scenario after a 2 × 4 s
// ramp (load.duration 4 s) is due at 8 s + grace + 2 s = 12 s, not at 8 s (which was before that
// scenario began); the run timeout counts the ramp's 8 s.
func TestFaultDueAfterRamp(t *testing.T) {
	sec := func(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Second} }
	run := &v1alpha1.BenchmarkRun{Spec: v1alpha1.BenchmarkRunSpec{
		Load: v1alpha1.LoadSpec{Duration: sec(4), Scenarios: []v1alpha1.Scenario{
			{Name: "ramp", Type: v1alpha1.ScenarioRedisGet, Arrival: &v1alpha1.ArrivalSpec{Stages: []v1alpha1.ArrivalStage{{Target: 10, Duration: sec(4)}, {Target: 20, Duration: sec(4)}}}},
			{Name: "steady", Type: v1alpha1.ScenarioRedisGet},
		}},
		Faults: []v1alpha1.Fault{{Scenario: "steady", Offset: sec(2), Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleMaster}},
	}}
	start := time.Unix(1000, 0)
	due, ok := FaultDue(run, 0, start)
	if !ok || due.Sub(start) != 12*time.Second {
		t.Errorf("fault due at +%v (%v), want +12s", due.Sub(start), ok)
	}
	if got, want := RunTimeout(run), DefaultTargetReady+12*time.Second+runSlack; got != want {
		t.Errorf("run timeout %v, want %v", got, want)
	}
}
