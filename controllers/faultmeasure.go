package controllers

import (
	"encoding/json"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// withFaultProbe asks runner 0 to run the fault probe (internal/runner/probe.go) when the run
// declares faults; the runner runs it only when its target has a Redis write endpoint.
func withFaultProbe(run *v1alpha1.BenchmarkRun, inv *plan.Invocation, index int) {
	if index != 0 || len(run.Spec.Faults) == 0 {
		return
	}
	if inv.Env == nil {
		inv.Env = map[string]string{}
	}
	inv.Env[plan.EnvFaultProbe] = lifecycle.FaultProbeKey(run.Name)
}

// measureFaults adds to status.faults what was measured around each applied fault
// (lifecycle.MeasureFaults, shared with `benchrun run`): its scenario's per-second timeline,
// and from runner 0's probe report the failover.
func measureFaults(run *v1alpha1.BenchmarkRun, obs *observation, merged *results.Document) {
	var fo func(int64) *v1alpha1.FailoverStatus
	if probe := probeReport(obs); probe != nil {
		fo = probe.Failover
	}
	lifecycle.MeasureFaults(&run.Status, run.Spec.Faults, merged, fo)
}

// probeReport is runner 0's probe report, bounded, or nil when there is none or it does not
// parse (a runner's data: never trusted to be well formed).
func probeReport(obs *observation) *runner.ProbeReport {
	if len(obs.configs) == 0 || obs.configs[0] == nil {
		return nil
	}
	raw, ok := obs.configs[0].Data[runner.KeyFaultProbe]
	if !ok {
		return nil
	}
	var p runner.ProbeReport
	if err := json.Unmarshal([]byte(raw), &p); err != nil || !p.Bound() {
		return nil
	}
	return &p
}
