package verdict

import (
	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// FromSummaries converts merged summaries (results.Summarize) to status.results, within the
// CRD's bounds (32 scenarios, 64 return values, 16 operations, 15 search steps): what the
// controller writes and what `benchrun run` compares and tabulates, one conversion for both.
func FromSummaries(scs []results.ScenarioSummary) []v1alpha1.ScenarioResult {
	out := make([]v1alpha1.ScenarioResult, 0, len(scs))
	for _, sc := range scs[:min(len(scs), 32)] {
		l := sc.LatencyMs
		res := v1alpha1.ScenarioResult{
			Name: sc.Name, Type: sc.Type, Calls: sc.Calls, Errors: sc.Errors, CPS: sc.CPS,
			LatencyMs: v1alpha1.LatencyMs{Mean: l.Mean, P50: l.P50, P90: l.P90, P99: l.P99, P999: l.P999, Min: l.Min,
				Max: l.Max, Median: l.Median, StdDev: l.StdDev},
			CallsPerMinute: sc.CallsPerMinute,
		}
		for _, v := range sc.ReturnValues[:min(len(sc.ReturnValues), 64)] {
			res.ReturnValues = append(res.ReturnValues, v1alpha1.ValueCount{Value: v.Value, Count: v.Count, Percent: v.Percent})
		}
		res.Operations, res.ServerCalls = operationResults(sc)
		res.Open = openResult(sc)
		if sc.Echo != nil {
			res.TransferMiBPerSec = sc.Echo.TransferMiBPerSec
		}
		out = append(out, res)
	}
	return out
}

// operationResults are a scenario's per-operation results and the target's own count, compact
// for status.
func operationResults(sc results.ScenarioSummary) ([]v1alpha1.OperationResult, *int64) {
	var ops []v1alpha1.OperationResult
	for _, op := range sc.Operations[:min(len(sc.Operations), 16)] {
		l := op.LatencyUs
		ops = append(ops, v1alpha1.OperationResult{Name: op.Name, Calls: op.Calls, CPS: op.CPS, MeanUs: l.Mean, P99Us: l.P99, P999Us: l.P999})
	}
	var server *int64
	if n := results.ObservedCalls(sc); n >= 0 && sc.Command != "" {
		server = &n
	}
	return ops, server
}

// openResult is the status form of a scenario's open-model figures (nil for a closed model).
func openResult(sc results.ScenarioSummary) *v1alpha1.OpenModelResult {
	o := sc.Open
	if o == nil {
		return nil
	}
	out := &v1alpha1.OpenModelResult{TargetRate: o.TargetRate, AchievedRatio: o.AchievedRatio, Dropped: o.Dropped,
		ServiceP50Ms: o.ServiceTimeMs.P50, ServiceP99Ms: o.ServiceTimeMs.P99}
	if s := o.Search; s != nil {
		out.Search = &v1alpha1.SearchResult{Rule: s.Rule, BestRate: s.BestRate, Steps: []v1alpha1.SearchStepResult{},
			StoppedAfter: int32(min(s.StoppedAfter, 15)), StopReason: s.StopReason}
		for _, st := range s.Steps[:min(len(s.Steps), 15)] {
			out.Search.Steps = append(out.Search.Steps, v1alpha1.SearchStepResult{TargetRate: st.TargetRate, CPS: st.CPS, AchievedRatio: st.AchievedRatio,
				P50Ms: st.P50Ms, P99Ms: st.P99Ms, Errors: st.Errors, Dropped: st.Dropped, Passed: st.Passed, Cut: st.Cut})
		}
	}
	return out
}
