package verdict

import (
	"fmt"
	"io"
	"strconv"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// num formats a figure without trailing zeros.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// signed formats a percentage with its sign.
func signed(v float64) string {
	if v > 0 {
		return "+" + strconv.FormatFloat(v, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "%"
}

// RenderThresholds writes the thresholds table in markdown, ending with the verdict line.
func RenderThresholds(w io.Writer, verdict v1alpha1.Verdict, table []v1alpha1.ThresholdResult) error {
	if len(table) == 0 {
		return nil
	}
	if _, err := fmt.Fprint(w, "\nThresholds:\n\n| scenario | threshold | observed | limit | result |\n|:--|:--|--:|--:|:--|\n"); err != nil {
		return err
	}
	for _, t := range table {
		res := "pass"
		if !t.Passed {
			res = "FAIL"
			if t.Message != "" {
				res += ": " + t.Message
			}
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", t.Scenario, t.Expr, num(t.Observed), num(t.Limit), res); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\nVerdict: %s\n", verdict)
	return err
}

// RenderBaseline writes the per-scenario comparison with the baseline in markdown under a
// heading such as "Against baseline redis8".
func RenderBaseline(w io.Writer, heading string, res, baseline []v1alpha1.ScenarioResult) error {
	deltas := Deltas(res, baseline)
	if len(deltas) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\n%s:\n\n| scenario | CPS | baseline CPS | CPS Δ | k99 | baseline k99 | k99 Δ |\n|:--|--:|--:|--:|--:|--:|--:|\n", heading); err != nil {
		return err
	}
	for _, d := range deltas {
		r, _ := find(res, d.Name)
		b, _ := find(baseline, d.Name)
		if _, err := fmt.Fprintf(w, "| %s | %.2f | %.2f | %s | %s | %s | %s |\n", d.Name, r.CPS, b.CPS, signed(d.CPSPercent),
			num(r.LatencyMs.P99), num(b.LatencyMs.P99), signed(d.P99Percent)); err != nil {
			return err
		}
	}
	return nil
}
