package verdict

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

func res(name string, cps, p99 float64, calls, errs int64) v1alpha1.ScenarioResult {
	return v1alpha1.ScenarioResult{Name: name, CPS: cps, Calls: calls, Errors: errs,
		LatencyMs: v1alpha1.LatencyMs{Mean: p99 / 4, P50: p99 / 5, P90: p99 / 2, P99: p99, P999: p99 * 2, Max: p99 * 10}}
}

func TestParse(t *testing.T) {
	for expr, want := range map[string]Expr{
		"p99 < 5":          {Metric: "p99", Op: "<", Value: 5},
		" cps>=10000.5 ":   {Metric: "cps", Op: ">=", Value: 10000.5},
		"cps >= -5%":       {Metric: "cps", Op: ">=", Value: -5, Relative: true},
		"p999 <= +10%":     {Metric: "p999", Op: "<=", Value: 10, Relative: true},
		"errorRate > 0.01": {Metric: "errorRate", Op: ">", Value: 0.01},
	} {
		got, err := Parse(expr)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", expr, got, err, want)
		}
	}
	for _, bad := range []string{"p95 < 5", "p99 = 5", "p99 < 5ms", "cps >= 5%", "p99x < 1", "", "p99 <"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestEvaluate(t *testing.T) {
	cur := []v1alpha1.ScenarioResult{res("get", 9600, 4, 1000, 2), res("set", 5000, 8, 1000, 0)}
	base := []v1alpha1.ScenarioResult{res("get", 10000, 5, 1000, 0)}
	ths := []v1alpha1.Threshold{
		{Expr: "p99 < 10"},                           // both pass
		{Scenario: "get", Expr: "cps >= -5%"},        // 9600 >= 9500 pass
		{Scenario: "get", Expr: "p99 <= -30%"},       // 4 <= 3.5 fail
		{Scenario: "get", Expr: "errorRate < 0.001"}, // 0.002 fail
		{Scenario: "set", Expr: "cps >= -5%"},        // no baseline for set: fail with message
	}
	v, table := Evaluate(ths, cur, base)
	if v != v1alpha1.VerdictFailed || len(table) != 6 {
		t.Fatalf("verdict %s, %d rows: %+v", v, len(table), table)
	}
	want := []bool{true, true, true, false, false, false}
	for i, tr := range table {
		if tr.Passed != want[i] {
			t.Errorf("row %d %+v: passed %v, want %v", i, tr, tr.Passed, want[i])
		}
	}
	if table[2].Limit != 9500 || table[2].Observed != 9600 {
		t.Errorf("relative limit: %+v", table[2])
	}
	if !strings.Contains(table[5].Message, "baseline has no result for scenario \"set\"") {
		t.Errorf("message: %q", table[5].Message)
	}
	if v, _ := Evaluate(ths[:2], cur, base); v != v1alpha1.VerdictPassed {
		t.Errorf("verdict %s, want Passed", v)
	}
	if v, table := Evaluate(nil, cur, base); v != "" || table != nil {
		t.Errorf("no thresholds: %s %v", v, table)
	}
	// A scenario without results (a partial run) fails its threshold, never passes silently.
	v, table = Evaluate([]v1alpha1.Threshold{{Scenario: "gone", Expr: "cps > 1"}}, cur, nil)
	if v != v1alpha1.VerdictFailed || !strings.Contains(table[0].Message, "no result") {
		t.Errorf("missing scenario: %s %+v", v, table)
	}
	v, _ = Evaluate([]v1alpha1.Threshold{{Expr: "cps > 1"}}, nil, nil)
	if v != v1alpha1.VerdictFailed {
		t.Errorf("no results at all: %s", v)
	}
}

func TestDeltasAndRender(t *testing.T) {
	cur := []v1alpha1.ScenarioResult{res("get", 9600, 4, 1000, 0), res("set", 5000, 8, 1000, 0)}
	base := []v1alpha1.ScenarioResult{res("get", 10000, 5, 1000, 0)}
	d := Deltas(cur, base)
	if len(d) != 1 || d[0].CPSPercent != -4 || d[0].P99Percent != -20 {
		t.Fatalf("deltas %+v", d)
	}
	var b bytes.Buffer
	v, table := Evaluate([]v1alpha1.Threshold{{Scenario: "get", Expr: "cps >= -5%"}}, cur, base)
	if err := RenderThresholds(&b, v, table); err != nil {
		t.Fatal(err)
	}
	if err := RenderBaseline(&b, "Against baseline redis8", cur, base); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| get | cps >= -5% | 9600 | 9500 | pass |", "Verdict: Passed", "Against baseline redis8", "| get | 9600.00 | 10000.00 | -4.00% | 4 | 5 | -20.00% |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}
