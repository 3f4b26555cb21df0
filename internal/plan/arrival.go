package plan

import (
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// Arrival is one runner's open-model schedule (scripts/k6/benchrun.js hands it to the Go
// hot path, k6/x/benchrun's client.open): rates are this runner's share in calls per second.
type Arrival struct {
	// Segments follow one another: a constant rate, linear ramps or search steps.
	Segments []ArrivalSegment `json:"segments"`
	// MaxVUs is the number of connections (workers) of this runner.
	MaxVUs int `json:"maxVUs"`
	// Stop, for a saturation search, ends it early (k6x/benchrun SearchStop).
	Stop *ArrivalStop `json:"stop,omitempty"`
}

// ArrivalStop is a saturation search's stop rule, judged by each runner on its own calls.
type ArrivalStop struct {
	// MaxP99Ms is the highest corrected p99 of a step in milliseconds (0: no latency rule).
	MaxP99Ms float64 `json:"maxP99Ms,omitempty"`
	// MaxErrorPercent is the highest share of failed and dropped calls (nil: no error rule).
	MaxErrorPercent *float64 `json:"maxErrorPercent,omitempty"`
	// After is how many steps in a row must break the rule.
	After int `json:"after"`
}

// ArrivalSegment is a linear piece of the rate (From == To: constant).
type ArrivalSegment struct {
	// From and To are the rates at the segment's start and end, calls per second.
	From float64 `json:"from"`
	To   float64 `json:"to"`
	// DurationMs is the segment's length.
	DurationMs int64 `json:"durationMs"`
	// Step is the 1-based saturation-search step (0: not a search).
	Step int `json:"step,omitempty"`
}

// arrivalFor is runner index of count's share of an arrival scenario lasting d: every rate
// (calls per timeUnit) is split with share64, so the runners' rates add up exactly.
func arrivalFor(a *v1alpha1.ArrivalSpec, d time.Duration, index, count int) *Arrival {
	if a == nil {
		return nil
	}
	out := &Arrival{MaxVUs: v1alpha1.DefaultArrivalMaxVUs}
	if a.MaxVUs != nil {
		out.MaxVUs = int(*a.MaxVUs)
	}
	unit := a.Unit().Seconds()
	perSecond := func(rate int64) float64 { return float64(share64(rate, index, count)) / unit }
	switch {
	case a.Rate != nil:
		r := perSecond(*a.Rate)
		out.Segments = []ArrivalSegment{{From: r, To: r, DurationMs: d.Milliseconds()}}
	case a.Search != nil:
		for i, rate := range a.Search.Rates() {
			r := perSecond(rate)
			out.Segments = append(out.Segments, ArrivalSegment{From: r, To: r, DurationMs: a.Search.StepDuration.Milliseconds(), Step: i + 1})
		}
		out.Stop = searchStop(a.Search)
	default:
		from := 0.0
		for _, st := range a.Stages {
			to := perSecond(st.Target)
			out.Segments = append(out.Segments, ArrivalSegment{From: from, To: to, DurationMs: st.Duration.Milliseconds()})
			from = to
		}
	}
	return out
}

// searchStop is a search's early stop (nil with stopAfter 0).
func searchStop(s *v1alpha1.SearchSpec) *ArrivalStop {
	after := v1alpha1.DefaultSearchStopAfter
	if s.StopAfter != nil {
		after = int(*s.StopAfter)
	}
	if after < 1 {
		return nil
	}
	st := &ArrivalStop{After: after, MaxErrorPercent: s.MaxErrorPercent}
	if s.MaxP99 != nil {
		st.MaxP99Ms = float64(s.MaxP99.Microseconds()) / 1000
	}
	return st
}

// searchRules are the stop rules of the run's saturation searches, by scenario name.
func searchRules(run *v1alpha1.BenchmarkRun) map[string]results.SearchRule {
	var out map[string]results.SearchRule
	for _, s := range run.Spec.Load.Scenarios {
		if s.Arrival == nil || s.Arrival.Search == nil {
			continue
		}
		if out == nil {
			out = map[string]results.SearchRule{}
		}
		var r results.SearchRule
		if p := s.Arrival.Search.MaxP99; p != nil {
			r.MaxP99 = p.Duration
		}
		r.MaxErrorPercent = s.Arrival.Search.MaxErrorPercent
		out[s.Name] = r
	}
	return out
}

// allOpen tells whether every scenario is an open model (then workers × tasksPerWorker are unused).
func allOpen(scenarios []v1alpha1.Scenario) bool {
	for _, s := range scenarios {
		if s.Arrival == nil {
			return false
		}
	}
	return true
}

// rampScenarios names the run's open-model scenarios with arrival.stages (a changing rate).
func rampScenarios(run *v1alpha1.BenchmarkRun) map[string]bool {
	var out map[string]bool
	for _, s := range run.Spec.Load.Scenarios {
		if s.Arrival != nil && len(s.Arrival.Stages) > 0 {
			if out == nil {
				out = map[string]bool{}
			}
			out[s.Name] = true
		}
	}
	return out
}
