package controllers

import (
	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

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
