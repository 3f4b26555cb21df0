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
