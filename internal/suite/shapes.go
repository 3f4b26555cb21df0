package suite

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/charts"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/workload"
)

// The seed shapes of a suite's report (issue 24: the users' own tables, variants as rows),
// drawn only from the children's status.results: the ya CPS and execution time tables, the
// echo comparison (tcp.echo scenarios) and the packetd-style sweep table (suites with
// sweeps). A row's figures are the mean over its successful runs (Min and Max: the extremes).

// MaxShapesBytes bounds the seed shapes' part of report.md, so the report stays well within
// its ConfigMap (controllers' maxReportBytes, 900 KiB, with the combined table, table.json
// and the charts beside it); larger shapes are left out with a note (table.json has every row).
const MaxShapesBytes = 128 << 10

// MaxPercentileCurves bounds the curves of the percentile chart (its legend stays readable).
const MaxPercentileCurves = 32

// missing is the cell of a figure the child results do not hold (no successful run).
const missing = "-"

// shapeRow is one variant at one sweep point: its scenarios' figures over the successful runs.
type shapeRow struct {
	variant string
	point   []SweepValue
	sweep   string
	failed  int32
	// results are the mean results by scenario name; a scenario without a successful run
	// is absent.
	results map[string]v1alpha1.ScenarioResult
}

// shapeRows are the rows of the seed shapes: every variant (spec order), each at every sweep
// point in turn.
func shapeRows(spec *v1alpha1.BenchmarkSuiteSpec, outs []Outcome) []shapeRow {
	var rows []shapeRow
	for _, v := range spec.Variants {
		for _, p := range Points(spec.Sweeps) {
			row := shapeRow{variant: v.Name, point: p, sweep: PointString(p), results: map[string]v1alpha1.ScenarioResult{}}
			for _, sc := range spec.Template.Load.Scenarios {
				res, failed := perRun(outs, key{v.Name, row.sweep, sc.Name})
				row.failed = failed
				if len(res) > 0 {
					row.results[sc.Name] = meanResult(res)
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// meanResult is the mean of a row's results: calls, CPS and every latency figure averaged,
// Min the smallest and Max the largest, errors summed.
func meanResult(res []v1alpha1.ScenarioResult) v1alpha1.ScenarioResult {
	out := v1alpha1.ScenarioResult{Name: res[0].Name, Type: res[0].Type, LatencyMs: v1alpha1.LatencyMs{Min: res[0].LatencyMs.Min, Max: res[0].LatencyMs.Max}}
	n := float64(len(res))
	var calls float64
	for _, r := range res {
		l := r.LatencyMs
		calls += float64(r.Calls)
		out.Errors += r.Errors
		out.CPS += r.CPS / n
		out.LatencyMs.Mean += l.Mean / n
		out.LatencyMs.P50 += l.P50 / n
		out.LatencyMs.P90 += l.P90 / n
		out.LatencyMs.P99 += l.P99 / n
		out.LatencyMs.P999 += l.P999 / n
		out.LatencyMs.Median += l.Median / n
		out.LatencyMs.StdDev += l.StdDev / n
		out.LatencyMs.Min = min(out.LatencyMs.Min, l.Min)
		out.LatencyMs.Max = max(out.LatencyMs.Max, l.Max)
	}
	out.Calls = int64(calls/n + 0.5)
	out.Operations = meanOperations(res)
	out.TransferMiBPerSec = meanTransfer(res)
	l := &out.LatencyMs
	for _, f := range []*float64{&out.CPS, &l.Mean, &l.P50, &l.P90, &l.P99, &l.P999, &l.Median, &l.StdDev} {
		*f = round2(*f)
	}
	return out
}

// meanTransfer is the mean transfer rate of res, 0 (unknown) when one of them has none (a
// child of an older operator).
func meanTransfer(res []v1alpha1.ScenarioResult) float64 {
	var sum float64
	for _, r := range res {
		if r.TransferMiBPerSec <= 0 {
			return 0
		}
		sum += r.TransferMiBPerSec
	}
	return round2(sum / float64(len(res)))
}

// variantCell is a row's variant, its failed runs marked so they are never missed.
func variantCell(r shapeRow) string {
	if r.failed == 0 {
		return results.MarkdownText(r.variant)
	}
	return fmt.Sprintf("%s (**%d FAILED**)", results.MarkdownText(r.variant), r.failed)
}

// lead is a row's first cells: the variant and, with sweeps, its sweep point.
func lead(r shapeRow, sweeps bool) []string {
	if !sweeps {
		return []string{variantCell(r)}
	}
	return []string{variantCell(r), results.MarkdownText(r.sweep)}
}

// leadHeaders are the headers of lead's cells.
func leadHeaders(sweeps bool) []string {
	if !sweeps {
		return []string{"Variant"}
	}
	return []string{"Variant", "Sweep"}
}

// rightOf is the alignment of n columns after k left-aligned ones, right-aligned except the
// column indexes in left.
func rightOf(k, n int, left ...int) []bool {
	out := make([]bool, k+n)
	for i := k; i < k+n; i++ {
		out[i] = true
	}
	for _, i := range left {
		out[k+i] = false
	}
	return out
}

// writeShapes writes the seed shapes that fit the suite's scenario types: the ya tables
// always, the echo comparison with tcp.echo scenarios, the Pegasus table with ycsb
// scenarios, the sweep table with sweeps.
func writeShapes(b *bytes.Buffer, spec *v1alpha1.BenchmarkSuiteSpec, outs []Outcome) error {
	rows := shapeRows(spec, outs)
	sweeps := len(spec.Sweeps) > 0
	b.WriteString("\n## Seed shapes\n\nThe users' own tables with the variants as rows, from the child runs' results: a row's figures are the mean over its successful runs (Min and Max the extremes), `-` where it has none; failed runs are marked on the variant.\n\n")
	if err := writeYaCPS(b, spec, rows, sweeps); err != nil {
		return err
	}
	if err := writeYaTimes(b, spec, rows, sweeps); err != nil {
		return err
	}
	if err := writeEcho(b, spec, rows, sweeps); err != nil {
		return err
	}
	if err := writePegasus(b, spec, rows, sweeps); err != nil {
		return err
	}
	if sweeps {
		return writeSweepTable(b, spec, rows)
	}
	return nil
}

// writeYaCPS writes ya's CPS table: a row per variant (and sweep point), a CPS column per
// scenario.
func writeYaCPS(b *bytes.Buffer, spec *v1alpha1.BenchmarkSuiteSpec, rows []shapeRow, sweeps bool) error {
	b.WriteString("Average CPS (Calls Per Second) per Function:\n\n")
	headers := leadHeaders(sweeps)
	for _, sc := range spec.Template.Load.Scenarios {
		headers = append(headers, results.MarkdownText(sc.Name))
	}
	var cells [][]string
	for _, r := range rows {
		row := lead(r, sweeps)
		for _, sc := range spec.Template.Load.Scenarios {
			cell := missing
			if res, ok := r.results[sc.Name]; ok {
				cell = results.FormatThousands(res.CPS, 2)
			}
			row = append(row, cell)
		}
		cells = append(cells, row)
	}
	return results.WriteMarkdownTable(b, headers, rightOf(len(lead(shapeRow{}, sweeps)), len(spec.Template.Load.Scenarios)), cells)
}

// writeYaTimes writes ya's "Function Execution Time Statistics" with a row per variant
// (and sweep point) and scenario.
func writeYaTimes(b *bytes.Buffer, spec *v1alpha1.BenchmarkSuiteSpec, rows []shapeRow, sweeps bool) error {
	b.WriteString("\nFunction Execution Time Statistics:\n\n")
	headers := append(leadHeaders(sweeps), "Scenario", "Mean", "k50", "k90", "k99", "k999", "Count", "Min", "Max", "Median")
	k := len(leadHeaders(sweeps)) + 1
	var cells [][]string
	for _, r := range rows {
		for _, sc := range spec.Template.Load.Scenarios {
			row := append(lead(r, sweeps), results.MarkdownText(sc.Name))
			res, ok := r.results[sc.Name]
			if !ok {
				cells = append(cells, append(row, dashes(9)...))
				continue
			}
			l := res.LatencyMs
			g := results.FormatG
			cells = append(cells, append(row, g(l.Mean), g(l.P50), g(l.P90), g(l.P99), g(l.P999),
				results.FormatInt(res.Calls), g(l.Min), g(l.Max), g(l.Median)))
		}
	}
	return results.WriteMarkdownTable(b, headers, rightOf(k, 9, 5), cells)
}

// dashes is n missing cells.
func dashes(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = missing
	}
	return out
}

// echoScenarios are the template's tcp.echo scenarios.
func echoScenarios(spec *v1alpha1.BenchmarkSuiteSpec) []v1alpha1.Scenario {
	var out []v1alpha1.Scenario
	for _, sc := range spec.Template.Load.Scenarios {
		if d, _ := workload.Of(string(sc.Type)); d.Echo {
			out = append(out, sc)
		}
	}
	return out
}

// writeEcho writes the echo-server comparison (seed 002's summary) of the tcp.echo
// scenarios: a row per variant (and sweep point) and scenario.
func writeEcho(b *bytes.Buffer, spec *v1alpha1.BenchmarkSuiteSpec, rows []shapeRow, sweeps bool) error {
	echo := echoScenarios(spec)
	if len(echo) == 0 {
		return nil
	}
	b.WriteString("\nTCP Echo Statistics (Requests/sec is the trimmed CPS; Transfer/sec the bytes echoed back per second, - from an older operator):\n\n")
	headers := append(leadHeaders(sweeps), "Scenario", "Messages", "Requests/sec", "Latency min (ms)", "Latency max (ms)", "Latency mean (ms)", "Latency std (ms)", "Transfer/sec (MiB)")
	k := len(leadHeaders(sweeps)) + 1
	var cells [][]string
	for _, r := range rows {
		for _, sc := range echo {
			row := append(lead(r, sweeps), results.MarkdownText(sc.Name))
			res, ok := r.results[sc.Name]
			if !ok {
				cells = append(cells, append(row, dashes(7)...))
				continue
			}
			l := res.LatencyMs
			transfer := missing // a child of an older operator has no transfer rate
			if res.TransferMiBPerSec > 0 {
				transfer = strconv.FormatFloat(res.TransferMiBPerSec, 'f', 2, 64)
			}
			cells = append(cells, append(row, strconv.FormatInt(res.Calls, 10), strconv.FormatFloat(res.CPS, 'f', 2, 64),
				results.FormatG(l.Min), results.FormatG(l.Max), results.FormatG(l.Mean), results.FormatG(l.StdDev), transfer))
		}
	}
	return results.WriteMarkdownTable(b, headers, rightOf(k, 7), cells)
}

// writeSweepTable writes the packetd-style sweep table: a row per variant, sweep point and
// scenario, the sweep fields as columns (WORKERS, BODYSIZE, …), then the calls, QPS, p99 and
// errors.
func writeSweepTable(b *bytes.Buffer, spec *v1alpha1.BenchmarkSuiteSpec, rows []shapeRow) error {
	b.WriteString("\nSweep table (packetd's shape; QPS is the trimmed CPS):\n\n")
	headers := []string{"VARIANT", "SCENARIO"}
	for _, sw := range spec.Sweeps {
		headers = append(headers, strings.ToUpper(string(sw.Field)))
	}
	headers = append(headers, "REQUEST", "QPS", "P99(ms)", "ERRORS")
	var cells [][]string
	for _, r := range rows {
		for _, sc := range spec.Template.Load.Scenarios {
			row := []string{variantCell(r), results.MarkdownText(sc.Name)}
			for _, v := range r.point {
				cell := strconv.FormatInt(v.Value, 10)
				if v.Field == v1alpha1.SweepBodySize {
					cell = results.FormatBodySize(v.Value)
				}
				row = append(row, cell)
			}
			res, ok := r.results[sc.Name]
			if !ok {
				cells = append(cells, append(row, dashes(4)...))
				continue
			}
			cells = append(cells, append(row, strconv.FormatInt(res.Calls, 10), strconv.FormatFloat(res.CPS, 'f', 3, 64),
				results.FormatG(res.LatencyMs.P99), strconv.FormatInt(res.Errors, 10)))
		}
	}
	return results.WriteMarkdownTable(b, headers, rightOf(2, len(spec.Sweeps)+4), cells)
}

// shapesMarkdown is the seed shapes' part of report.md, or a note when it is over
// MaxShapesBytes.
func shapesMarkdown(spec *v1alpha1.BenchmarkSuiteSpec, outs []Outcome) (string, error) {
	var b bytes.Buffer
	if err := writeShapes(&b, spec, outs); err != nil {
		return "", err
	}
	if b.Len() > MaxShapesBytes {
		return fmt.Sprintf("\n## Seed shapes\n\nLeft out: %d KiB, more than the report's %d KiB for them (table.json has every row of the combined table).\n",
			b.Len()>>10, MaxShapesBytes>>10), nil
	}
	return b.String(), nil
}

// PercentileChart is the overlaid percentile curves of the suite: one per variant (and sweep
// point) and scenario with a successful run, through the percentiles the child results hold
// (min, p50, p90, p99, p999, max; the mean over the runs) on a logarithmic latency axis, like
// a run's HDR plot; at most MaxPercentileCurves curves (the title says when cut). ok is false
// when no row has a run.
func PercentileChart(spec *v1alpha1.BenchmarkSuiteSpec, outs []Outcome) (svg []byte, ok bool, err error) {
	var series []charts.Series
	total := 0
	for _, r := range shapeRows(spec, outs) {
		for _, sc := range spec.Template.Load.Scenarios {
			res, has := r.results[sc.Name]
			if !has {
				continue
			}
			total++
			if len(series) == MaxPercentileCurves {
				continue
			}
			name := r.variant + " · " + sc.Name
			if r.sweep != "" {
				name += " " + r.sweep
			}
			l := res.LatencyMs
			s := charts.Series{Name: name}
			for _, p := range []charts.Point{{X: 0, Y: l.Min}, {X: 50, Y: l.P50}, {X: 90, Y: l.P90}, {X: 99, Y: l.P99}, {X: 99.9, Y: l.P999}, {X: 100, Y: l.Max}} {
				if p.Y > 0 { // a log axis has no 0 (a sub-5 µs minimum rounds to 0.00 ms)
					s.Points = append(s.Points, p)
				}
			}
			series = append(series, s)
		}
	}
	if len(series) == 0 {
		return nil, false, nil
	}
	title := "Latency by percentile, per variant and scenario"
	if total > len(series) {
		title += fmt.Sprintf(" (first %d of %d curves)", len(series), total)
	}
	var buf bytes.Buffer
	err = charts.PercentileChart{Title: title, YTitle: "latency (ms)", LogY: true, Series: series}.Render(&buf)
	return buf.Bytes(), true, err
}
