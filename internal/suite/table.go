package suite

import (
	"fmt"
	"math"
	"slices"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/verdict"
)

// Outcome is one ended child run: where it stands in the suite and its results.
type Outcome struct {
	// Variant is the child's variant.
	Variant string
	// Sweep is its sweep point as text (PointString).
	Sweep string
	// Repetition counts from 1.
	Repetition int32
	// Failed is true for a child that failed: it is counted in every row's Failed, and its
	// results (partial) are not in the figures.
	Failed bool
	// Results are the child's status.results.
	Results []v1alpha1.ScenarioResult
}

// key selects the per-run figures of one row.
type key struct{ variant, sweep, scenario string }

// perRun is the successful runs' results of one row.
func perRun(outs []Outcome, k key) (res []v1alpha1.ScenarioResult, failed int32) {
	for _, o := range outs {
		if o.Variant != k.variant || o.Sweep != k.sweep {
			continue
		}
		if o.Failed {
			failed++
			continue
		}
		for _, r := range o.Results {
			if r.Name == k.scenario {
				res = append(res, r)
			}
		}
	}
	return res, failed
}

// figures is one metric of each result.
func figures(res []v1alpha1.ScenarioResult, metric string) []float64 {
	out := make([]float64, len(res))
	for i, r := range res {
		out[i] = verdict.Figure(r, metric)
	}
	return out
}

// describe is Describe rounded to 2 decimals, zero without values (status holds no NaN).
func describe(xs []float64) v1alpha1.Stat {
	if len(xs) == 0 {
		return v1alpha1.Stat{}
	}
	s := Describe(xs)
	return v1alpha1.Stat{Mean: round2(s.Mean), SD: round2(s.SD), Low: round2(s.Low), High: round2(s.High)}
}

// round2 rounds to 2 decimals.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// Table is the combined table: per sweep point, per scenario of the template, per variant
// (in spec order) the figures over the successful repetitions, the failed ones counted, and
// the deltas and the CPS p-value against the reference variant's row.
func Table(spec *v1alpha1.BenchmarkSuiteSpec, outs []Outcome) []v1alpha1.SuiteRow {
	ref := Reference(spec)
	var rows []v1alpha1.SuiteRow
	for _, p := range Points(spec.Sweeps) {
		sweep := PointString(p)
		for _, sc := range spec.Template.Load.Scenarios {
			refRes, _ := perRun(outs, key{ref, sweep, sc.Name})
			for _, v := range spec.Variants {
				res, failed := perRun(outs, key{v.Name, sweep, sc.Name})
				row := v1alpha1.SuiteRow{Scenario: sc.Name, Variant: v.Name, Sweep: sweep,
					Runs: int32(len(res)), Failed: failed,
					CPS: describe(figures(res, "cps")), P50: describe(figures(res, "p50")),
					P99: describe(figures(res, "p99")), P999: describe(figures(res, "p999"))}
				for _, r := range res {
					row.Errors += r.Errors
				}
				if v.Name != ref {
					compare(&row, res, refRes, pairs(outs, key{v.Name, sweep, sc.Name}, ref))
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// compare fills a row's deltas and CPS p-value against the reference's runs (paired: the
// repetitions both ran successfully).
func compare(row *v1alpha1.SuiteRow, res, refRes []v1alpha1.ScenarioResult, paired map[int32][2]v1alpha1.ScenarioResult) {
	if len(res) == 0 || len(refRes) == 0 {
		return
	}
	cps, refCPS := figures(res, "cps"), figures(refRes, "cps")
	if m := Describe(refCPS).Mean; m != 0 {
		d := round2((Describe(cps).Mean - m) / m * 100)
		row.CPSDeltaPercent = &d
	}
	if m := Describe(figures(refRes, "p99")).Mean; m != 0 {
		d := round2((Describe(figures(res, "p99")).Mean - m) / m * 100)
		row.P99DeltaPercent = &d
	}
	if p, _ := significance(res, refRes, paired, "cps"); !math.IsNaN(p) {
		p = math.Round(p*10000) / 10000
		row.CPSPValue = &p
		row.Significant = p < SignificanceLevel
	}
}

// pairs are a row's and the reference's results of each repetition in which both ran
// successfully, by repetition: [0] the row's, [1] the reference's.
func pairs(outs []Outcome, k key, ref string) map[int32][2]v1alpha1.ScenarioResult {
	byRep := map[int32][2]*v1alpha1.ScenarioResult{}
	for _, o := range outs {
		side := -1
		switch {
		case o.Failed || o.Sweep != k.sweep:
		case o.Variant == k.variant:
			side = 0
		case o.Variant == ref:
			side = 1
		}
		for i := range o.Results {
			if side >= 0 && o.Results[i].Name == k.scenario {
				p := byRep[o.Repetition]
				p[side] = &o.Results[i]
				byRep[o.Repetition] = p
			}
		}
	}
	out := map[int32][2]v1alpha1.ScenarioResult{}
	for rep, p := range byRep {
		if p[0] != nil && p[1] != nil {
			out[rep] = [2]v1alpha1.ScenarioResult{*p[0], *p[1]}
		}
	}
	return out
}

// Tests of significance, as messages name them.
const (
	testPaired      = "paired t-test on the log ratios of each repetition"
	testMannWhitney = "Mann–Whitney U"
)

// significance is the two-sided p-value of a row's per-run figures of metric against the
// reference's, and the test that gave it: the paired t-test on log ratios (PairedLogRatio)
// when every successful run of both sides has its pair of the same repetition (at least 2),
// else Mann–Whitney U on the pooled runs (at least 2 a side). NaN when neither applies.
func significance(res, refRes []v1alpha1.ScenarioResult, paired map[int32][2]v1alpha1.ScenarioResult, metric string) (float64, string) {
	if n := len(paired); n >= 2 && n == len(res) && n == len(refRes) {
		reps := make([]int32, 0, n)
		for rep := range paired {
			reps = append(reps, rep)
		}
		slices.Sort(reps)
		xs, ys := make([]float64, n), make([]float64, n)
		for i, rep := range reps {
			xs[i], ys[i] = verdict.Figure(paired[rep][0], metric), verdict.Figure(paired[rep][1], metric)
		}
		if _, p := PairedLogRatio(xs, ys); !math.IsNaN(p) {
			return p, testPaired
		}
	}
	if len(res) >= 2 && len(refRes) >= 2 {
		_, p := MannWhitney(figures(res, metric), figures(refRes, metric))
		return p, testMannWhitney
	}
	return math.NaN(), ""
}

// Evaluate checks every suite threshold on every scenario it applies to, at every sweep
// point: the variant's mean over its successful runs against an absolute limit or the
// reference's mean scaled by the percentage. A broken threshold with significance passes
// when the p-value against the reference (significance) is not below 0.05 ("no significant
// difference"). A variant without a successful run fails the threshold. No thresholds: "".
func Evaluate(spec *v1alpha1.BenchmarkSuiteSpec, outs []Outcome) (v1alpha1.Verdict, []v1alpha1.SuiteThresholdResult) {
	if len(spec.Thresholds) == 0 {
		return "", nil
	}
	ref := Reference(spec)
	result := v1alpha1.VerdictPassed
	var table []v1alpha1.SuiteThresholdResult
	for _, th := range spec.Thresholds {
		for _, p := range Points(spec.Sweeps) {
			sweep := PointString(p)
			for _, sc := range spec.Template.Load.Scenarios {
				if th.Scenario != "" && th.Scenario != sc.Name {
					continue
				}
				tr := evaluateOne(th, ref, outs, key{th.Variant, sweep, sc.Name})
				if !tr.Passed {
					result = v1alpha1.VerdictFailed
				}
				table = append(table, tr)
			}
		}
	}
	return result, table
}

// evaluateOne evaluates one threshold on one row.
func evaluateOne(th v1alpha1.SuiteThreshold, ref string, outs []Outcome, k key) v1alpha1.SuiteThresholdResult {
	tr := v1alpha1.SuiteThresholdResult{Variant: k.variant, Scenario: k.scenario, Sweep: k.sweep, Expr: th.Expr}
	e, err := verdict.Parse(th.Expr)
	if err != nil {
		tr.Message = err.Error()
		return tr
	}
	res, failed := perRun(outs, k)
	if len(res) == 0 {
		tr.Message = fmt.Sprintf("variant %s has no successful run with scenario %s (%d failed)", k.variant, k.scenario, failed)
		return tr
	}
	xs := figures(res, e.Metric)
	observed := Describe(xs).Mean
	tr.Observed = round4(observed)
	limit := e.Value
	var refXs []float64
	var refRes []v1alpha1.ScenarioResult
	if e.Relative {
		refRes, _ = perRun(outs, key{ref, k.sweep, k.scenario})
		if len(refRes) == 0 {
			tr.Message = fmt.Sprintf("the reference variant %s has no successful run with scenario %s", ref, k.scenario)
			return tr
		}
		refXs = figures(refRes, e.Metric)
		limit = Describe(refXs).Mean * (1 + e.Value/100)
	}
	tr.Limit = round4(limit)
	tr.Passed = verdict.Holds(observed, e.Op, limit)
	if th.Significance && e.Relative {
		p, test := significance(res, refRes, pairs(outs, k, ref), e.Metric)
		if !math.IsNaN(p) {
			p = round4(p)
			tr.PValue = &p
		}
		if !tr.Passed && (math.IsNaN(p) || p >= SignificanceLevel) {
			tr.Passed = true
			if test == "" {
				test = "too few runs for a test"
			}
			tr.Message = fmt.Sprintf("broken by the means, but no significant difference from %s (%s p=%.3g ≥ 0.05, %d vs %d runs)", ref, test, p, len(xs), len(refXs))
		}
	}
	return tr
}

// round4 rounds to 4 decimals.
func round4(v float64) float64 { return math.Round(v*10000) / 10000 }
