package controllers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results"
)

// bigResults is 32 scenario results with minutes-long per-minute series and 64 long return
// values each.
func bigResults(minutes int) []v1alpha1.ScenarioResult {
	var rs []v1alpha1.ScenarioResult
	for i := range 32 {
		r := v1alpha1.ScenarioResult{Name: fmt.Sprintf("s%02d", i), Calls: 1, CallsPerMinute: make([]int64, minutes)}
		for k := range r.CallsPerMinute {
			r.CallsPerMinute[k] = 612_345 + int64(k)
		}
		for k := range 64 {
			r.ReturnValues = append(r.ReturnValues, v1alpha1.ValueCount{Value: strings.Repeat("v", 120) + fmt.Sprint(k), Count: 1})
		}
		rs = append(rs, r)
	}
	return rs
}

// TestFitStatus: a status over budget drops history series first, then old history
// records, then the current series, and ends within maxStatusBytes; a small one is untouched.
func TestFitStatus(t *testing.T) {
	small := &v1alpha1.BenchmarkRunStatus{Results: bigResults(3)[:2]}
	if got := fitStatus(small); len(got) != 0 || len(small.Results[0].CallsPerMinute) != 3 {
		t.Fatalf("small status trimmed: %v", got)
	}
	st := &v1alpha1.BenchmarkRunStatus{Results: bigResults(2880)}
	for g := range 10 {
		st.History = append(st.History, v1alpha1.RunRecord{Generation: int64(10 - g), Results: bigResults(2880)})
	}
	before := statusSize(st)
	trimmed := fitStatus(st)
	after := statusSize(st)
	t.Logf("status %d KiB → %d KiB: %q", before>>10, after>>10, trimmed)
	if after > maxStatusBytes || len(trimmed) == 0 || strings.Contains(strings.Join(trimmed, ";"), "still") {
		t.Fatalf("status of %d KiB after trimming %q", after>>10, trimmed)
	}
	if len(st.Results) != 32 || st.Results[0].Calls != 1 {
		t.Fatal("current results lost")
	}
	if len(st.History) > 0 && st.History[0].Generation != 10 {
		t.Fatalf("the newest history record was dropped first: %d", st.History[0].Generation)
	}
}

// TestReportData: a report within maxReportBytes is one ConfigMap; a larger one moves the
// per-minute series to parts (each within the limit) and names them in report.md.
func TestReportData(t *testing.T) {
	sum := results.Summary{}
	for i := range 32 {
		sc := results.ScenarioSummary{Name: fmt.Sprintf("s%02d", i), Calls: 1, CallsPerMinute: make([]int64, 2880)}
		for k := range sc.CallsPerMinute {
			sc.CallsPerMinute[k] = 612_345
		}
		sum.Scenarios = append(sum.Scenarios, sc)
	}
	small := sum
	small.Scenarios = sum.Scenarios[:1]
	if data, parts, err := reportData("t", small, "", "[]", "r-report", nil); err != nil || len(parts) != 0 || dataSize(data) > maxReportBytes {
		t.Fatalf("small report: %d parts, %v", len(parts), err)
	}
	plots, err := lifecycle.Charts(sum, nil) // the charts of 32 scenarios × 48 h
	if err != nil {
		t.Fatal(err)
	}
	data, parts, err := reportData("t", sum, "", "[]", "r-report", plots)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(data[lifecycle.ChartCPS], "<svg") {
		t.Errorf("the report over budget lost its CPS chart (%d KiB)", dataSize(data)>>10)
	}
	if len(parts) == 0 || dataSize(data) > maxReportBytes || !strings.Contains(data["report.md"], parts[0].name) {
		t.Fatalf("%d parts, main %d KiB", len(parts), dataSize(data)>>10)
	}
	n := 0
	for _, p := range parts {
		if dataSize(p.data) > maxReportBytes {
			t.Errorf("part %s of %d KiB", p.name, dataSize(p.data)>>10)
		}
		var ss []scenarioSeries
		if err := json.Unmarshal([]byte(p.data[reportSeriesKey]), &ss); err != nil {
			t.Fatal(err)
		}
		n += len(ss)
	}
	if n != 32 {
		t.Errorf("%d series in the parts", n)
	}
	t.Logf("report of 32 × 2,880 minutes: main %d KiB, %d parts", dataSize(data)>>10, len(parts))

	// A thousand runners without results, each with a long reason: summarised.
	for i := range 1024 {
		sum.PartialReasons = append(sum.PartialReasons, fmt.Sprintf("runner-%d: no result stored (%s)", i, strings.Repeat("x", 1000)))
	}
	sum.Partial = true
	data, _, err = reportData("t", sum, "", "[]", "r-report", plots)
	if err != nil || dataSize(data) > maxReportBytes || !strings.Contains(data["results.json"], "and 960 more reasons") {
		t.Fatalf("report with 1,024 reasons: %v", err)
	}
}

// TestPermanent: the API errors that retrying cannot heal.
func TestPermanent(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{kerrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", nil), true},
		{kerrors.NewRequestEntityTooLargeError("too large"), true},
		{kerrors.NewForbidden(gr, "x", errors.New("no")), true},
		{kerrors.NewBadRequest("bad"), true},
		{fmt.Errorf("%w: report too big", errPermanent), true},
		{kerrors.NewConflict(gr, "x", errors.New("c")), false},
		{kerrors.NewServiceUnavailable("later"), false},
		{kerrors.NewTimeoutError("slow", 1), false},
		{errors.New("connection refused"), false},
	} {
		if got := permanent(c.err); got != c.want {
			t.Errorf("permanent(%v) = %v", c.err, got)
		}
	}
}

// TestConditionMessageBounded: a condition message listing many runners' failures is cut
// under the API's 32768-character limit, on a UTF-8 boundary.
func TestConditionMessageBounded(t *testing.T) {
	s := &step{run: &v1alpha1.BenchmarkRun{}}
	s.setCondition(v1alpha1.ConditionSucceeded, "False", "PartialResults", strings.Repeat("runner-1: é failed; ", 4000))
	m := s.run.Status.Conditions[0].Message
	if len(m) > maxConditionMessage+16 || !strings.HasSuffix(m, "…(cut)") || !utf8.ValidString(m) {
		t.Fatalf("message of %d bytes", len(m))
	}
}

// TestReportDataWithCharts measures the report ConfigMap of 32 scenarios × 24 h with its
// charts drawn from the merged document: it fits one ConfigMap with every chart.
func TestReportDataWithCharts(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	var scs []results.Scenario
	for i := range 32 {
		rec := results.NewRecorder(fmt.Sprintf("scenario-%02d", i), "redis.get")
		for s := 0; s < 86_400; s += 20 {
			rec.Record(start.Add(time.Duration(s)*time.Second), time.Duration(100+(s*7+i*13)%5000)*time.Microsecond, fmt.Sprint(s%5), "")
		}
		scs = append(scs, rec.Scenario())
	}
	doc, err := results.NewDocument("runner-0", scs...)
	if err != nil {
		t.Fatal(err)
	}
	sum := results.Summarize(doc, results.DefaultOptions())
	plots, err := lifecycle.Charts(sum, doc)
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, b := range plots {
		size += len(b)
	}
	data, parts, err := reportData("t", sum, "", "[]", "r-report", plots)
	if err != nil {
		t.Fatal(err)
	}
	bare, bareParts, err := reportData("t", sum, "", "[]", "r-report", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report of 32 scenarios × 24 h: %d KiB in 1+%d ConfigMaps, %d KiB of it %d charts; without charts %d KiB in 1+%d",
		dataSize(data)>>10, len(parts), size>>10, len(plots), dataSize(bare)>>10, len(bareParts))
	for name := range plots {
		if data[name] == "" {
			t.Errorf("chart %s left out", name)
		}
	}
}
