package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// MaxStatusRows bounds status.table and status.thresholds (the CRD's maxItems); table.json
// in the report holds every row and the verdict counts every threshold.
const MaxStatusRows = 512

// The files of a suite's report (the operator's report ConfigMap keys, the local out dir's
// files).
const (
	// ReportMarkdown is the report: the combined table, the thresholds and the children.
	ReportMarkdown = "report.md"
	// ReportTable is the combined table as JSON, every row.
	ReportTable = "table.json"
	// ReportChart is the CPS chart: grouped bars per scenario, one per variant.
	ReportChart = "cps.svg"
	// ReportPercentiles is the overlaid percentile curves (PercentileChart), when a child
	// run has results.
	ReportPercentiles = "percentiles.svg"
)

// ReportRunLabel is the bench.benchrun.io/run label value of a suite's report ConfigMap:
// the manager-scope admission policy admits only run-labelled ConfigMaps, and the dot keeps
// it apart from every BenchmarkRun's (run names hold no dots), so a run of the suite's name
// never sees the suite's report as an object of its own.
func ReportRunLabel(suiteName string) string { return "suite." + suiteName }

// Conclude fills the suite's status from its ended children (outcomes in run order): the
// combined table, the verdict and the thresholds, both lists cut to MaxStatusRows. It
// returns the whole table, for the report's table.json. The operator and `benchrun run`
// both call it, so a suite gives the same table in a cluster and on a laptop.
func Conclude(s *v1alpha1.BenchmarkSuite, outs []Outcome) []v1alpha1.SuiteRow {
	table := Table(&s.Spec, outs)
	s.Status.Verdict, s.Status.Thresholds = Evaluate(&s.Spec, outs)
	s.Status.Table = table[:min(len(table), MaxStatusRows)]
	s.Status.Thresholds = s.Status.Thresholds[:min(len(s.Status.Thresholds), MaxStatusRows)]
	return table
}

// ReportFiles is the suite's report of a concluded suite (outs: its ended children, as given
// to Conclude): report.md (RenderMarkdown with the seed shapes after the combined table),
// table.json (every row of table), cps.svg (CPSChart) and percentiles.svg (PercentileChart,
// when a child has results).
func ReportFiles(s *v1alpha1.BenchmarkSuite, table []v1alpha1.SuiteRow, outs []Outcome) (map[string][]byte, error) {
	shapes, err := shapesMarkdown(&s.Spec, outs)
	if err != nil {
		return nil, err
	}
	var md bytes.Buffer
	if err := renderMarkdown(&md, s, shapes); err != nil {
		return nil, err
	}
	tj, err := json.MarshalIndent(table, "", "  ")
	if err != nil {
		return nil, err
	}
	svg, err := CPSChart(s)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{ReportMarkdown: md.Bytes(), ReportTable: tj, ReportChart: svg}
	pct, ok, err := PercentileChart(&s.Spec, outs)
	if err != nil {
		return nil, err
	}
	if ok {
		files[ReportPercentiles] = pct
	}
	return files, nil
}

// FailedChildren counts the children that failed.
func FailedChildren(children []v1alpha1.SuiteChild) int {
	n := 0
	for _, c := range children {
		if c.Phase == v1alpha1.PhaseFailed {
			n++
		}
	}
	return n
}

// ThresholdSummary names the broken thresholds, the first in full (or says all held).
func ThresholdSummary(ths []v1alpha1.SuiteThresholdResult) string {
	broken := 0
	first := ""
	for _, t := range ths {
		if !t.Passed {
			if broken == 0 {
				first = strings.TrimSpace(fmt.Sprintf("%s %s '%s': observed %.4g, limit %.4g %s", t.Variant, t.Scenario, t.Expr, t.Observed, t.Limit, t.Message))
			}
			broken++
		}
	}
	if broken == 0 {
		return fmt.Sprintf("all %d thresholds held", len(ths))
	}
	return fmt.Sprintf("%d of %d thresholds broken, first: %s", broken, len(ths), first)
}

// MaxReportBytes bounds a suite's report files together (keys and contents): the operator's
// report ConfigMap must stay under the API server's 1 MiB object limit with room for its
// metadata. report.md alone is bounded well below it (at most MaxStatusRows table rows,
// MaxShapesBytes of seed shapes, MaxSuiteRuns children).
const MaxReportBytes = 900 << 10

// FitReport keeps a suite's report files within limit bytes: over it, table.json loses its
// indentation, then the charts are left out, then its rows are cut to those that fit;
// report.md says what was left out and where to find it. The largest suite the API admits
// (64 runs of 32 scenarios: 2,048 rows) wrote about 1.1 MiB before, which the API server
// refuses.
func FitReport(files map[string][]byte, table []v1alpha1.SuiteRow, limit int) (map[string][]byte, error) {
	if filesSize(files) <= limit {
		return files, nil
	}
	out := make(map[string][]byte, len(files))
	for k, v := range files {
		out[k] = v
	}
	tj, err := json.Marshal(table) // lossless first: table.json without indentation
	if err != nil {
		return nil, err
	}
	out[ReportTable] = tj
	var notes []string
	if _, ok := out[ReportChart]; ok && filesSize(out)+256 > limit {
		delete(out, ReportChart)
		delete(out, ReportPercentiles)
		notes = append(notes, "the charts (cps.svg, percentiles.svg) are left out: `benchrun report --html` draws them from the children's results")
	}
	for n := len(table); filesSize(out)+256 > limit && n > 0; {
		n = n * 3 / 4
		if tj, err = json.Marshal(table[:n]); err != nil {
			return nil, err
		}
		out[ReportTable] = tj
		if filesSize(out)+256 <= limit {
			notes = append(notes, fmt.Sprintf("table.json holds the first %d of %d rows", n, len(table)))
		}
	}
	if len(notes) > 0 {
		out[ReportMarkdown] = append(append([]byte{}, out[ReportMarkdown]...),
			[]byte("\nToo large for one ConfigMap: "+strings.Join(notes, "; ")+".\n")...)
	}
	if n := filesSize(out); n > limit {
		return nil, fmt.Errorf("suite report of %d KiB without its charts and table.json rows: more than %d KiB", n>>10, limit>>10)
	}
	return out, nil
}

// filesSize is the bytes of files' keys and contents.
func filesSize(files map[string][]byte) int {
	n := 0
	for k, v := range files {
		n += len(k) + len(v)
	}
	return n
}
