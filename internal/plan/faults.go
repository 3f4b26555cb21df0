package plan

import (
	"encoding/json"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// EnvFaultProbe is set in runner 0's invocation when a run declares spec.faults on a target
// with a Redis write endpoint: it turns on the agent's fault probe (internal/runner/probe.go); its
// value is the list key the probe appends its markers to.
const EnvFaultProbe = "BENCHRUN_FAULT_PROBE"

// EnvFaultWindows is set in every runner's invocation when a run declares spec.faults: JSON
// {scenario: [offset ms, ...]}, each fault's offset from its scenario's start. The runner
// keeps per-second figures (calls completed, errors, latency) in a window around each
// (results.FaultWindows), so the results show every fault's per-second timeline.
const EnvFaultWindows = results.FaultWindowsEnv

// FaultWindows is the value of EnvFaultWindows for run ("" without faults).
func FaultWindows(run *v1alpha1.BenchmarkRun) string {
	if len(run.Spec.Faults) == 0 {
		return ""
	}
	m := map[string][]int64{}
	for _, f := range run.Spec.Faults {
		m[f.Scenario] = append(m[f.Scenario], f.Offset.Milliseconds())
	}
	b, _ := json.Marshal(m) // a map of strings to numbers always marshals
	return string(b)
}

// addFaultWindows sets EnvFaultWindows in inv when run declares faults.
func addFaultWindows(inv *Invocation, run *v1alpha1.BenchmarkRun) {
	if w := FaultWindows(run); w != "" {
		inv.Env[EnvFaultWindows] = w
	}
}
