package plan

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/workload"
)

// TestFaultWindowsEnv: every runner of a run with faults is told their offsets by scenario
// (what its k6 output reads back with results.ParseFaultOffsets); a run without faults is not.
func TestFaultWindowsEnv(t *testing.T) {
	run := hetuRun()
	for i := range 2 {
		inv, err := ForRunner(run, hetuEndpoints, i, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := inv.Env[EnvFaultWindows]; ok {
			t.Fatalf("runner %d of a run without faults: %s", i, inv.Env[EnvFaultWindows])
		}
	}
	run.Spec.Faults = []v1alpha1.Fault{
		{Scenario: "get", Offset: metav1.Duration{Duration: 20 * time.Second}, Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleMaster},
		{Scenario: "upsert", Offset: metav1.Duration{Duration: 1500 * time.Millisecond}, Action: v1alpha1.FaultRestart, Role: v1alpha1.FaultRoleHeTu},
		{Scenario: "get", Offset: metav1.Duration{Duration: 40 * time.Second}, Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleMaster},
	}
	for i := range 2 {
		inv, err := ForRunner(run, hetuEndpoints, i, 2)
		if err != nil {
			t.Fatal(err)
		}
		got, err := results.ParseFaultOffsets(inv.Env[EnvFaultWindows])
		if err != nil || len(got) != 2 || len(got["get"]) != 2 || got["get"][1] != 40*time.Second || got["upsert"][0] != 1500*time.Millisecond {
			t.Errorf("runner %d: %v, %v (env %q)", i, got, err, inv.Env[EnvFaultWindows])
		}
	}
	if _, err := results.ParseFaultOffsets("{"); err == nil {
		t.Error("a malformed value parsed")
	}
}

// TestScenarioWindowsMatchSchedule: the scenario windows faults are timed by
// (workload.ScenarioWindows, lifecycle.FaultDue) are the runners' schedule (the plan's startMs
// and durationMs), for a ramp, a search, a constant rate and closed scenarios with and without
// their own duration. The issue-25 case: a 2 × 4 s ramp with load.duration 4 s puts the next
// scenario at 10 s (8 s + grace), not 6 s.
func TestScenarioWindowsMatchSchedule(t *testing.T) {
	sec := func(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Second} }
	d := func(n int) *metav1.Duration { v := sec(n); return &v }
	rate, factor, steps := int64(100), 2.0, int32(3)
	run := hetuRun()
	run.Spec.Load.Duration = sec(4)
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{
		{Name: "ramp", Type: v1alpha1.ScenarioHeTuGet, Arrival: &v1alpha1.ArrivalSpec{Stages: []v1alpha1.ArrivalStage{{Target: 100, Duration: sec(4)}, {Target: 200, Duration: sec(4)}}}},
		{Name: "after", Type: v1alpha1.ScenarioHeTuGet},
		{Name: "search", Type: v1alpha1.ScenarioHeTuGet, Arrival: &v1alpha1.ArrivalSpec{Search: &v1alpha1.SearchSpec{StartRate: 10, Factor: &factor, StepDuration: sec(3), MaxSteps: &steps}}},
		{Name: "rate", Type: v1alpha1.ScenarioHeTuGet, Duration: d(7), Arrival: &v1alpha1.ArrivalSpec{Rate: &rate}},
		{Name: "own", Type: v1alpha1.ScenarioHeTuGet, Duration: d(5)},
	}
	inv, err := ForRunner(run, hetuEndpoints, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var spec Spec
	if err := json.Unmarshal([]byte(inv.Env[EnvPlan]), &spec); err != nil {
		t.Fatal(err)
	}
	windows := workload.ScenarioWindows(&run.Spec)
	for _, sc := range spec.Scenarios {
		w := windows[sc.Name]
		if w.Start.Milliseconds() != sc.StartMs || w.Duration.Milliseconds() != sc.DurationMs {
			t.Errorf("%s: window %v+%v, schedule %d ms + %d ms", sc.Name, w.Start, w.Duration, sc.StartMs, sc.DurationMs)
		}
	}
	if w := windows["after"]; w.Start != 10*time.Second {
		t.Errorf("the scenario after a 2 × 4 s ramp starts at %v, want 10s", w.Start)
	}
}
