package suite

import (
	"encoding/json"
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
