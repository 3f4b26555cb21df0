package suite

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/charts"
	"github.com/benchrun/benchrun/internal/results"
)

// RenderMarkdown writes the suite's report from its status: the combined table (variants as
// rows per scenario), the thresholds and the children. ReportFiles' report.md adds the seed
// shapes after the combined table (they need the children's results).
func RenderMarkdown(w io.Writer, s *v1alpha1.BenchmarkSuite) error {
	return renderMarkdown(w, s, "")
}

// renderMarkdown is RenderMarkdown with shapes (markdown) after the combined table.
func renderMarkdown(w io.Writer, s *v1alpha1.BenchmarkSuite, shapes string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# BenchmarkSuite %s\n\n", results.MarkdownText(s.Name))
	fmt.Fprintf(&b, "Phase %s · %s child runs · reference %s · repeat %d", s.Status.Phase, s.Status.Progress,
		results.MarkdownText(Reference(&s.Spec)), max(s.Spec.Repeat, 1))
	if s.Status.Verdict != "" {
		fmt.Fprintf(&b, " · verdict %s", s.Status.Verdict)
	}
	b.WriteString("\n\n## Combined table\n\n")
	b.WriteString("Figures are the mean over the successful repetitions; ± is the 95 % confidence interval's half-width (Student's t); p is the two-sided p-value of the per-run CPS against the reference: a paired t-test on the log ratios of each repetition's runs when every run has its pair, else Mann–Whitney U.\n\n")
	b.WriteString("| Scenario | Variant | Sweep | Runs | Failed | CPS | ΔCPS | p | p50 ms | p99 ms | Δp99 | p999 ms | Errors |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range s.Status.Table {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n",
			results.MarkdownText(r.Scenario), results.MarkdownText(r.Variant), results.MarkdownText(r.Sweep), r.Runs,
			failedCell(r.Failed), statCell(r.CPS, r.Runs), deltaCell(r.CPSDeltaPercent), pCell(r),
			statCell(r.P50, r.Runs), statCell(r.P99, r.Runs), deltaCell(r.P99DeltaPercent), statCell(r.P999, r.Runs), r.Errors)
	}
	b.WriteString(shapes)
	if len(s.Status.Thresholds) > 0 {
		b.WriteString("\n## Thresholds\n\n| Variant | Scenario | Sweep | Threshold | Observed | Limit | p | Passed | Note |\n|---|---|---|---|---:|---:|---:|---|---|\n")
		for _, t := range s.Status.Thresholds {
			p := ""
			if t.PValue != nil {
				p = fmt.Sprintf("%.4g", *t.PValue)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %.4g | %.4g | %s | %v | %s |\n", results.MarkdownText(t.Variant),
				results.MarkdownText(t.Scenario), results.MarkdownText(t.Sweep), results.MarkdownText(t.Expr), t.Observed, t.Limit, p, t.Passed,
				results.MarkdownText(t.Message))
		}
	}
	b.WriteString("\n## Child runs\n\n| Run | Variant | Sweep | Repetition | Phase | Reason |\n|---|---|---|---:|---|---|\n")
	for _, c := range s.Status.Children {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s |\n", results.MarkdownText(c.Name), results.MarkdownText(c.Variant),
			results.MarkdownText(c.Sweep), c.Repetition, c.Phase, results.MarkdownText(c.Reason))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// failedCell marks failed repetitions so they are never missed.
func failedCell(n int32) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("**%d FAILED**", n)
}

// statCell is "mean ± half-width" ("—" without runs, the mean alone with one).
func statCell(s v1alpha1.Stat, runs int32) string {
	switch runs {
	case 0:
		return "—"
	case 1:
		return fmt.Sprintf("%.2f", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", s.Mean, (s.High-s.Low)/2)
}

// deltaCell is a signed percentage ("" for the reference).
func deltaCell(d *float64) string {
	if d == nil {
		return ""
	}
	return fmt.Sprintf("%+.2f%%", *d)
}

// pCell is the p-value, marked when significant.
func pCell(r v1alpha1.SuiteRow) string {
	if r.CPSPValue == nil {
		return ""
	}
	if r.Significant {
		return fmt.Sprintf("**%.3g**", *r.CPSPValue)
	}
	return fmt.Sprintf("%.3g", *r.CPSPValue)
}

// CPSChart is the grouped bar chart of the table's CPS: one group per scenario (and sweep
// point), one bar per variant, the 95 % confidence interval as error bars; a variant
// without a successful run leaves a gap.
func CPSChart(s *v1alpha1.BenchmarkSuite) ([]byte, error) {
	var cats []string
	index := map[string]int{}
	for _, r := range s.Status.Table {
		c := r.Scenario
		if r.Sweep != "" {
			c += " " + r.Sweep
		}
		if _, ok := index[c]; !ok {
			index[c] = len(cats)
			cats = append(cats, c)
		}
	}
	chart := charts.BarChart{Title: "CPS by variant (95 % CI)", X: charts.Axis{Title: "scenario"},
		Y: charts.Axis{Title: "calls/s"}, Categories: cats}
	for _, v := range s.Spec.Variants {
		bs := charts.BarSeries{Name: v.Name, Values: nans(len(cats)), Low: nans(len(cats)), High: nans(len(cats))}
		for _, r := range s.Status.Table {
			if r.Variant != v.Name || r.Runs == 0 {
				continue
			}
			k := r.Scenario
			if r.Sweep != "" {
				k += " " + r.Sweep
			}
			i := index[k]
			bs.Values[i] = r.CPS.Mean
			if r.Runs > 1 {
				bs.Low[i], bs.High[i] = r.CPS.Low, r.CPS.High
			}
		}
		chart.Series = append(chart.Series, bs)
	}
	var buf bytes.Buffer
	err := chart.Render(&buf)
	return buf.Bytes(), err
}

// nans is n NaNs.
func nans(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
