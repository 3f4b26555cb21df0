package suite

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestConcludeAndReportFiles: Conclude fills the status (table, verdict, thresholds) and
// ReportFiles renders report.md, table.json (every row) and cps.svg from it, the files the
// operator's report ConfigMap and benchrun run's out dir both hold.
func TestConcludeAndReportFiles(t *testing.T) {
	s := suiteFromYAML(t, "t", twoVariants)
	var outs []Outcome
	for i, cps := range []float64{1000, 1010, 990, 1005} {
		outs = append(outs, Outcome{Variant: "a", Repetition: int32(i + 1), Results: res(cps, 1)})
		outs = append(outs, Outcome{Variant: "b", Repetition: int32(i + 1), Results: res(cps*0.8, 1.25)})
	}
	table := Conclude(s, outs)
	if len(table) != 2 || len(s.Status.Table) != 2 || s.Status.Verdict != v1alpha1.VerdictFailed || len(s.Status.Thresholds) != 2 {
		t.Fatalf("status: table %d verdict %s thresholds %d", len(s.Status.Table), s.Status.Verdict, len(s.Status.Thresholds))
	}
	if got := ThresholdSummary(s.Status.Thresholds); !strings.HasPrefix(got, "2 of 2 thresholds broken, first: b get 'cps >= -5%'") {
		t.Errorf("summary %q", got)
	}
	files, err := ReportFiles(s, table, outs)
	if err != nil {
		t.Fatal(err)
	}
	var rows []v1alpha1.SuiteRow
	if err := json.Unmarshal(files[ReportTable], &rows); err != nil || len(rows) != 2 {
		t.Errorf("table.json: %v %d rows", err, len(rows))
	}
	if md := string(files[ReportMarkdown]); !strings.Contains(md, "| get | b |  | 4 | 0 |") || !strings.Contains(md, "verdict Failed") {
		t.Errorf("report.md:\n%s", md)
	}
	if !strings.Contains(string(files[ReportChart]), "<svg") {
		t.Errorf("cps.svg: %.100s", files[ReportChart])
	}
}

// TestConcludeBoundsStatus: the status keeps MaxStatusRows rows; the returned table (for
// table.json) keeps them all.
func TestConcludeBoundsStatus(t *testing.T) {
	s := suiteFromYAML(t, "t", twoVariants)
	s.Spec.Thresholds = nil
	for range MaxStatusRows {
		s.Spec.Template.Load.Scenarios = append(s.Spec.Template.Load.Scenarios, s.Spec.Template.Load.Scenarios[0])
	}
	table := Conclude(s, nil)
	if len(table) != 2*(MaxStatusRows+1) || len(s.Status.Table) != MaxStatusRows {
		t.Errorf("table %d rows, status %d", len(table), len(s.Status.Table))
	}
}

// TestFitReportLargestSuite: the largest suite's report files (2,048 rows) are over one
// ConfigMap; FitReport compacts table.json, which makes them fit with every row. A small
// suite's files are kept as they are; TestFitReportCuts covers the lossy steps.
func TestFitReportLargestSuite(t *testing.T) {
	s := suiteFromYAML(t, "t", twoVariants)
	small := []Outcome{{Variant: "a", Repetition: 1, Results: []v1alpha1.ScenarioResult{result("get", "redis.get", 10, 5, lat(1, 1, 1, 1, 1, 1, 1))}}}
	files, err := ReportFiles(s, Conclude(s, small), small)
	if err != nil {
		t.Fatal(err)
	}
	if fit, err := FitReport(files, Table(&s.Spec, small), MaxReportBytes); err != nil || len(fit) != len(files) || string(fit[ReportMarkdown]) != string(files[ReportMarkdown]) {
		t.Errorf("a small report changed: %v", err)
	}
	outs := largest(s)
	table := Conclude(s, outs)
	if files, err = ReportFiles(s, table, outs); err != nil {
		t.Fatal(err)
	}
	before := filesSize(files)
	fit, err := FitReport(files, table, MaxReportBytes)
	if err != nil {
		t.Fatal(err)
	}
	var rows []v1alpha1.SuiteRow
	if err := json.Unmarshal(fit[ReportTable], &rows); err != nil {
		t.Fatal(err)
	}
	t.Logf("largest suite: %d rows, %d KiB of report files, %d KiB fitted, table.json %d rows", len(table), before>>10, filesSize(fit)>>10, len(rows))
	if before <= MaxReportBytes || filesSize(fit) > MaxReportBytes || len(rows) != len(table) {
		t.Errorf("largest suite: %d → %d bytes, %d rows in table.json, report.md ends %q", before, filesSize(fit), len(rows), tail(fit[ReportMarkdown]))
	}
}

// tail is the last 300 bytes of b.
func tail(b []byte) string { return string(b[max(0, len(b)-300):]) }

// TestFitReportCuts: under a tighter limit FitReport leaves out the charts, then cuts
// table.json's rows, and report.md says both; under one report.md cannot fit it errs.
func TestFitReportCuts(t *testing.T) {
	s := suiteFromYAML(t, "t", twoVariants)
	outs := largest(s)
	table := Conclude(s, outs)
	files, err := ReportFiles(s, table, outs)
	if err != nil {
		t.Fatal(err)
	}
	limit := len(files[ReportMarkdown]) + 64<<10
	fit, err := FitReport(files, table, limit)
	if err != nil {
		t.Fatal(err)
	}
	var rows []v1alpha1.SuiteRow
	if err := json.Unmarshal(fit[ReportTable], &rows); err != nil {
		t.Fatal(err)
	}
	md := string(fit[ReportMarkdown])
	if filesSize(fit) > limit || fit[ReportChart] != nil || fit[ReportPercentiles] != nil || len(rows) == 0 || len(rows) >= len(table) ||
		!strings.Contains(md, "Too large for one ConfigMap: the charts") || !strings.Contains(md, fmt.Sprintf("table.json holds the first %d of %d rows", len(rows), len(table))) {
		t.Errorf("fitted to %d: %d bytes, %d rows, report.md ends %q", limit, filesSize(fit), len(rows), tail(fit[ReportMarkdown]))
	}
	if _, err := FitReport(files, table, len(files[ReportMarkdown])/2); err == nil {
		t.Error("a limit below report.md: no error")
	}
}
