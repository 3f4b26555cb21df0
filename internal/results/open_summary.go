package results

import (
	"bufio"
	"fmt"
	"math"
	"strings"
	"time"
)

// OpenSummary is the open-model part of a scenario's summary.
type OpenSummary struct {
	// TargetRate is the intended rate in calls per second (the mean of a ramping scenario).
	TargetRate float64 `json:"targetRate"`
	// AchievedRatio is CPS / TargetRate for a constant rate (arrival.rate): the calls started
	// per second of the measured (trimmed) window over the rate asked for in it. 0 (shown "-")
	// without a target rate, for a ramp (arrival.stages: the mean rate is not what was asked
	// for in the trimmed window) and for a search, whose steps each have theirs
	// (SearchStep.AchievedRatio).
	AchievedRatio float64 `json:"achievedRatio"`
	// Dropped counts the calls due that no virtual user could start in time.
	Dropped int64 `json:"dropped"`
	// ServiceTimeMs are the service-time statistics (actual send → reply), not corrected
	// for coordinated omission; LatencyMs of the scenario is the corrected latency.
	ServiceTimeMs Latency `json:"serviceTimeMs"`
	// Search is the saturation search's outcome, for a search scenario.
	Search *SearchSummary `json:"search,omitempty"`
}

// SearchRule is a saturation search's stop rule: a step meets it when its corrected p99 is
// at most MaxP99 (when set) and its error rate, dropped calls counted as failed, is at most
// MaxErrorPercent (when set).
type SearchRule struct {
	// MaxP99 is the highest corrected p99 latency a step may have (0: no latency rule).
	MaxP99 time.Duration
	// MaxErrorPercent is the highest percentage of failed or dropped calls (nil: no rule).
	MaxErrorPercent *float64
}

// String is the rule as shown in reports, e.g. "p99 <= 10ms, (errors+dropped) <= 0.1 %".
func (r SearchRule) String() string {
	var parts []string
	if r.MaxP99 > 0 {
		parts = append(parts, "p99 <= "+r.MaxP99.String())
	}
	if r.MaxErrorPercent != nil {
		parts = append(parts, "(errors+dropped) <= "+formatG(*r.MaxErrorPercent)+" %")
	}
	return strings.Join(parts, ", ")
}

// SearchSummary is a saturation search's outcome: each step and the highest rate that met the rule.
type SearchSummary struct {
	// Rule is the stop rule as text (empty when the summary was made without it).
	Rule string `json:"rule,omitempty"`
	// BestRate is the highest step target rate (calls/s) that met the rule; 0 when none did.
	BestRate float64 `json:"bestRate"`
	// BestCPS is the achieved CPS of that step.
	BestCPS float64 `json:"bestCPS"`
	// Steps are the steps that ran, in order.
	Steps []SearchStep `json:"steps"`
	// StoppedAfter is the step after which the search stopped early because the rule was
	// broken (0: it ran every step); StopReason says why.
	StoppedAfter int    `json:"stoppedAfter,omitempty"`
	StopReason   string `json:"stopReason,omitempty"`
}

// SearchStep is one step of a saturation search.
type SearchStep struct {
	// Name is the step's operation name (step-01, ...).
	Name string `json:"name"`
	// TargetRate is the step's intended rate in calls per second.
	TargetRate float64 `json:"targetRate"`
	// CPS is the achieved calls per second (trimmed as a scenario's CPS).
	CPS float64 `json:"cps"`
	// AchievedRatio is CPS / TargetRate: each step is a constant rate (0 without a target rate).
	AchievedRatio float64 `json:"achievedRatio"`
	// Calls, Errors and Dropped count the step's calls.
	Calls   int64 `json:"calls"`
	Errors  int64 `json:"errors"`
	Dropped int64 `json:"dropped"`
	// ErrorPercent is (errors + dropped) / (calls + dropped) in percent, 2 decimals.
	ErrorPercent float64 `json:"errorPercent"`
	// P50Ms and P99Ms are the corrected latency percentiles; ServiceP99Ms the service time's p99.
	P50Ms        float64 `json:"p50Ms"`
	P99Ms        float64 `json:"p99Ms"`
	ServiceP99Ms float64 `json:"serviceP99Ms"`
	// Passed tells whether the step met the rule (false too when no rule was given).
	Passed bool `json:"passed"`
	// Cut marks a step begun after the search stopped (on some runner): it ran only until
	// the stop, or on some runners only; it never counts as meeting the rule.
	Cut bool `json:"cut,omitempty"`
}

// openSummary is the open-model summary of s, nil for a closed-model scenario.
func openSummary(s *Scenario, opts Options) *OpenSummary {
	if s.ServiceTime == nil {
		return nil
	}
	o := &OpenSummary{TargetRate: round2(s.TargetRate), Dropped: s.Dropped, ServiceTimeMs: latency(s.ServiceTime, s.Calls)}
	rule, hasRule := opts.Search[s.Name]
	var steps []SearchStep
	for i := range s.Operations {
		if op := &s.Operations[i]; strings.HasPrefix(op.Name, "step-") {
			steps = append(steps, searchStep(op, rule, hasRule, opts))
		}
	}
	if s.TargetRate > 0 && len(steps) == 0 && !hasRule && !opts.Ramps[s.Name] {
		o.AchievedRatio = ratio(cps(s, opts), s.TargetRate) // a constant rate
	}
	if len(steps) == 0 {
		return o
	}
	o.Search = &SearchSummary{Steps: steps}
	if hasRule {
		o.Search.Rule = rule.String()
	}
	if st := s.SearchStop; st != nil {
		o.Search.StoppedAfter, o.Search.StopReason = st.AfterStep, st.Reason
		for i := range steps {
			if steps[i].Name > StepName(st.AfterStep) {
				steps[i].Cut, steps[i].Passed = true, false
			}
		}
	}
	for _, st := range steps {
		if st.Passed && st.TargetRate > o.Search.BestRate {
			o.Search.BestRate, o.Search.BestCPS = st.TargetRate, st.CPS
		}
	}
	return o
}

// ratio is achieved / target, 4 decimals.
func ratio(achieved, target float64) float64 { return math.Round(achieved/target*10000) / 10000 }

// ratioText is a ratio as shown in the tables: "-" when not defined (0).
func ratioText(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f", r)
}

// searchStep summarizes one step (an operation of the search scenario) and applies the rule.
func searchStep(op *Scenario, rule SearchRule, hasRule bool, opts Options) SearchStep {
	stepOpts := opts
	stepOpts.WarmUp, stepOpts.CoolDown = 0, 0 // the run's warm-up applies to the scenario, not a step
	c := cps(op, stepOpts)
	st := SearchStep{Name: op.Name, TargetRate: round2(op.TargetRate), CPS: round2(c),
		Calls: op.Calls, Errors: op.Errors, Dropped: op.Dropped}
	if op.TargetRate > 0 {
		st.AchievedRatio = ratio(c, op.TargetRate)
	}
	if n := op.Calls + op.Dropped; n > 0 {
		st.ErrorPercent = round2(float64(op.Errors+op.Dropped) * 100 / float64(n))
	}
	if op.Calls > 0 {
		l := latency(&op.Latency, op.Calls)
		st.P50Ms, st.P99Ms = l.P50, l.P99
		if op.ServiceTime != nil {
			st.ServiceP99Ms = latency(op.ServiceTime, op.Calls).P99
		}
	}
	if hasRule {
		st.Passed, _ = rule.Check(op)
	}
	return st
}

// Check tells whether a step (op: its operation, Dropped counted) meets the rule, and when
// not, why (e.g. "p99 212 ms > 10ms").
func (r SearchRule) Check(op *Scenario) (ok bool, why string) {
	if op.Calls == 0 {
		return false, fmt.Sprintf("no call answered (%d dropped)", op.Dropped)
	}
	if p99us := quantile(&op.Latency, op.Calls, 0.99); r.MaxP99 > 0 && p99us > float64(r.MaxP99.Microseconds()) {
		return false, fmt.Sprintf("p99 %s ms > %s", formatG(round2(p99us/1000)), r.MaxP99)
	}
	if r.MaxErrorPercent != nil && float64(op.Errors+op.Dropped)*100 > *r.MaxErrorPercent*float64(op.Calls+op.Dropped) {
		pct := float64(op.Errors+op.Dropped) * 100 / float64(op.Calls+op.Dropped)
		return false, fmt.Sprintf("(errors+dropped) %s %% > %s %%", formatG(round2(pct)), formatG(*r.MaxErrorPercent))
	}
	return true, ""
}

// openTable returns the open-model table of the scenarios run at an arrival rate, or nil.
func openTable(scs []ScenarioSummary) *table {
	t := &table{
		headers: []string{"", "target/s", "CPS", "ratio", "dropped", "k50", "k99", "service k50", "service k99"},
		right:   []bool{false, true, true, true, true, true, true, true, true},
	}
	for _, sc := range scs {
		o := sc.Open
		if o == nil {
			continue
		}
		t.rows = append(t.rows, []string{sc.Name, FormatThousands(o.TargetRate, 2), FormatThousands(sc.CPS, 2),
			ratioText(o.AchievedRatio), formatInt(o.Dropped), formatG(sc.LatencyMs.P50), formatG(sc.LatencyMs.P99),
			formatG(o.ServiceTimeMs.P50), formatG(o.ServiceTimeMs.P99)})
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

// searchTable returns the step table of a saturation search.
func searchTable(s *SearchSummary) *table {
	t := &table{
		headers: []string{"step", "target/s", "CPS", "ratio", "k50", "k99", "service k99", "calls", "errors", "dropped", "met rule"},
		right:   []bool{false, true, true, true, true, true, true, true, true, true, false},
	}
	for _, st := range s.Steps {
		met := "no"
		if st.Passed {
			met = "yes"
		} else if st.Cut {
			met = "cut"
		}
		t.rows = append(t.rows, []string{st.Name, FormatThousands(st.TargetRate, 2), FormatThousands(st.CPS, 2), ratioText(st.AchievedRatio),
			formatG(st.P50Ms), formatG(st.P99Ms), formatG(st.ServiceP99Ms), formatInt(st.Calls), formatInt(st.Errors),
			formatInt(st.Dropped), met})
	}
	return t
}

// writeOpenMarkdown writes the open-model tables (after the closed-model ones): latency k50/k99
// are corrected for coordinated omission (intended start → reply), service k50/k99 are not.
func writeOpenMarkdown(bw *bufio.Writer, scs []ScenarioSummary) {
	t := openTable(scs)
	if t == nil {
		return
	}
	bw.WriteString("\nOpen Model (arrival rate; k50/k99 in ms from each call's intended start, service from its actual send):\n\n")
	t.write(bw)
	for _, sc := range scs {
		if sc.Open == nil || sc.Open.Search == nil {
			continue
		}
		s := sc.Open.Search
		rule := s.Rule
		if rule == "" {
			rule = "no rule given"
		}
		best := "no step met the rule"
		if s.BestRate > 0 {
			best = fmt.Sprintf("highest rate meeting the rule: %s/s (achieved %s CPS)", FormatThousands(s.BestRate, 2), FormatThousands(s.BestCPS, 2))
		}
		fmt.Fprintf(bw, "\nSaturation Search %s (%s): %s\n\n", sc.Name, rule, best)
		searchTable(s).write(bw)
		if s.StoppedAfter > 0 {
			fmt.Fprintf(bw, "\nThe search stopped after %s (%s); a step marked cut began before the stop and ran only until it.\n",
				StepName(s.StoppedAfter), MarkdownText(s.StopReason)) // written by a runner
		}
	}
}
