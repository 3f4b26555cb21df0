// Package verdict evaluates a BenchmarkRun's thresholds on its merged per-scenario figures,
// optionally relative to a baseline's figures, and computes the deltas against the baseline.
// It is pure: the controller and `benchrun run` feed it results and use its table.
package verdict

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// exprRE is the grammar the CRD's CEL rule enforces: metric, operator, absolute value or signed percentage.
var exprRE = regexp.MustCompile(`^\s*(cps|errorRate|mean|p50|p90|p99|p999|max)\s*(<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)?|[+-][0-9]+(?:\.[0-9]+)?%)\s*$`)

// Expr is a parsed threshold expression.
type Expr struct {
	// Metric is cps, errorRate, mean, p50, p90, p99, p999 or max.
	Metric string
	// Op is <, <=, > or >=.
	Op string
	// Value is the absolute limit, or the signed percentage when Relative.
	Value float64
	// Relative means Value is a percentage of the baseline's figure.
	Relative bool
}

// Parse parses `<metric> <op> <value>` (value absolute, or signed with % relative to the baseline).
func Parse(expr string) (Expr, error) {
	m := exprRE.FindStringSubmatch(expr)
	if m == nil {
		return Expr{}, fmt.Errorf("threshold %q: want '<metric> <op> <value>' with metric cps, errorRate, mean, p50, p90, p99, p999 or max, op <, <=, > or >=, such as 'p99 < 5' or 'cps >= -5%%'", expr)
	}
	e := Expr{Metric: m[1], Op: m[2]}
	v := m[3]
	if v[len(v)-1] == '%' {
		e.Relative, v = true, v[:len(v)-1]
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return Expr{}, fmt.Errorf("threshold %q: %w", expr, err)
	}
	e.Value = f
	return e, nil
}

// Figure is a scenario's value of a metric.
func Figure(r v1alpha1.ScenarioResult, metric string) float64 {
	switch metric {
	case "cps":
		return r.CPS
	case "errorRate":
		if r.Calls <= 0 {
			if r.Errors > 0 {
				return 1
			}
			return 0
		}
		return float64(r.Errors) / float64(r.Calls)
	case "mean":
		return r.LatencyMs.Mean
	case "p50":
		return r.LatencyMs.P50
	case "p90":
		return r.LatencyMs.P90
	case "p99":
		return r.LatencyMs.P99
	case "p999":
		return r.LatencyMs.P999
	case "max":
		return r.LatencyMs.Max
	}
	return math.NaN()
}

// Holds reports whether observed op limit holds (op is <, <=, > or >=; false for any other).
func Holds(observed float64, op string, limit float64) bool {
	switch op {
	case "<":
		return observed < limit
	case "<=":
		return observed <= limit
	case ">":
		return observed > limit
	case ">=":
		return observed >= limit
	}
	return false
}

// Evaluate checks every threshold on every scenario it applies to (its scenario, or all
// scenarios of results in order) and returns the verdict and the table. A threshold that
// cannot be evaluated (no result for its scenario, a relative one without a baseline figure,
// a malformed expression) fails with a message: never a silent pass. No thresholds: "".
func Evaluate(ths []v1alpha1.Threshold, res, baseline []v1alpha1.ScenarioResult) (v1alpha1.Verdict, []v1alpha1.ThresholdResult) {
	if len(ths) == 0 {
		return "", nil
	}
	verdict := v1alpha1.VerdictPassed
	var table []v1alpha1.ThresholdResult
	for _, th := range ths {
		for _, name := range scenariosFor(th, res) {
			tr := evaluateOne(th, name, res, baseline)
			if !tr.Passed {
				verdict = v1alpha1.VerdictFailed
			}
			table = append(table, tr)
		}
	}
	return verdict, table
}

// scenariosFor lists the scenarios a threshold applies to.
func scenariosFor(th v1alpha1.Threshold, res []v1alpha1.ScenarioResult) []string {
	if th.Scenario != "" {
		return []string{th.Scenario}
	}
	names := make([]string, 0, len(res))
	for _, r := range res {
		names = append(names, r.Name)
	}
	if len(names) == 0 {
		return []string{"*"}
	}
	return names
}

// evaluateOne evaluates one threshold on one scenario.
func evaluateOne(th v1alpha1.Threshold, name string, res, baseline []v1alpha1.ScenarioResult) v1alpha1.ThresholdResult {
	tr := v1alpha1.ThresholdResult{Scenario: name, Expr: th.Expr}
	e, err := Parse(th.Expr)
	if err != nil {
		tr.Message = err.Error()
		return tr
	}
	cur, ok := find(res, name)
	if !ok {
		tr.Message = fmt.Sprintf("no result for scenario %q", name)
		return tr
	}
	tr.Observed = round(Figure(cur, e.Metric), 4)
	limit := e.Value
	if e.Relative {
		base, ok := find(baseline, name)
		if !ok {
			tr.Message = fmt.Sprintf("relative threshold: the baseline has no result for scenario %q", name)
			return tr
		}
		limit = Figure(base, e.Metric) * (1 + e.Value/100)
	}
	tr.Limit = round(limit, 4)
	tr.Passed = Holds(Figure(cur, e.Metric), e.Op, limit)
	return tr
}

// find returns the result of a scenario.
func find(res []v1alpha1.ScenarioResult, name string) (v1alpha1.ScenarioResult, bool) {
	for _, r := range res {
		if r.Name == name {
			return r, true
		}
	}
	return v1alpha1.ScenarioResult{}, false
}

// round rounds to n decimals.
func round(v float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(v*p) / p
}

// percent is (cur − base) / base × 100 with 2 decimals, 0 when base is 0.
func percent(cur, base float64) float64 {
	if base == 0 {
		return 0
	}
	return round((cur-base)/base*100, 2)
}

// Deltas compares every scenario present in both res and baseline: CPS % and p99 %.
func Deltas(res, baseline []v1alpha1.ScenarioResult) []v1alpha1.ScenarioDelta {
	var out []v1alpha1.ScenarioDelta
	for _, r := range res {
		b, ok := find(baseline, r.Name)
		if !ok {
			continue
		}
		out = append(out, v1alpha1.ScenarioDelta{Name: r.Name, CPSPercent: percent(r.CPS, b.CPS),
			P99Percent: percent(r.LatencyMs.P99, b.LatencyMs.P99)})
	}
	return out
}

// Trim copies results without per-minute counts and return values (what a baseline keeps).
func Trim(res []v1alpha1.ScenarioResult) []v1alpha1.ScenarioResult {
	out := make([]v1alpha1.ScenarioResult, 0, len(res))
	for _, r := range res {
		r.CallsPerMinute, r.ReturnValues = nil, nil
		out = append(out, r)
	}
	return out
}
