package lifecycle

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/charts"
	"github.com/benchrun/benchrun/internal/results"
)

// chartHostileName is a scenario name with HTML and table syntax in it.
const chartHostileName = `get<script>alert(1)</script>&"|x`

// svgElements parses an SVG document and counts its data elements (series paths, bars, dots).
func svgElements(t *testing.T, name string, svg []byte) int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	n := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatalf("%s is not well-formed: %v", name, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Local == "class" && (a.Value == "series" || a.Value == "bar") {
					n++
				}
			}
		}
	}
}

// faultDoc is a document of two scenarios over 40 s, the first with a fault 20 s in.
func faultDoc(t *testing.T) *results.Document {
	t.Helper()
	start := time.Unix(1_700_000_000, 0)
	var scs []results.Scenario
	for i, name := range []string{chartHostileName, "set"} {
		rec := results.NewRecorder(name, "redis.get")
		if i == 0 {
			rec.SetWindows(results.FaultWindows(start, []time.Duration{20 * time.Second}))
		}
		for ms := range 40_000 {
			at := start.Add(time.Duration(ms) * time.Millisecond)
			d := time.Duration(200+ms%700) * time.Microsecond
			errKind, value := "", "OK"
			if ms >= 20_000 && ms < 22_000 { // the fault: slow failures
				d, errKind, value = 50*time.Millisecond, "timeout", ""
			}
			if ms%10 == 0 {
				value = "<nil>"
			}
			rec.Record(at, d, value, errKind)
		}
		scs = append(scs, rec.Scenario())
	}
	doc, err := results.NewDocument("runner-0", scs...)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestChartsFromDocument(t *testing.T) {
	doc := faultDoc(t)
	sum := results.Summarize(doc, results.DefaultOptions())
	files, err := Charts(sum, doc)
	if err != nil {
		t.Fatal(err)
	}
	calls, lat := FaultChartFiles(chartHostileName)
	for _, name := range []string{ChartCPS, ChartLatency, ChartPercentiles, ChartReturnValues, calls, lat} {
		svg, ok := files[name]
		if !ok {
			t.Errorf("no %s among %v", name, keys(files))
			continue
		}
		if n := svgElements(t, name, svg); n == 0 {
			t.Errorf("%s has no data", name)
		}
		if bytes.Contains(svg, []byte("<script")) {
			t.Errorf("%s: a scenario name is not escaped", name)
		}
	}
	if plain, _ := FaultChartFiles("get_1k-a"); calls != `chart-fault-calls-get_script_alert_1___script____x.svg` || plain != "chart-fault-calls-get_1k-a.svg" {
		t.Errorf("fault chart file of a hostile scenario name: %s", calls)
	}
	if got := SearchPlotFile("../../etc/passwd"); got != "search-______etc_passwd.svg" {
		t.Errorf("search plot file: %s", got)
	}
	if _, ok := files["chart-fault-calls-set.svg"]; ok {
		t.Error("a scenario without faults has a fault chart")
	}
	// The fault's failures show: errors per second around 0 (the fault's second).
	if !strings.Contains(string(files[calls]), "errors, fault at 20s") {
		t.Errorf("fault chart lacks the errors series:\n%.2000s", files[calls])
	}
	// Latency over time: a chart per scenario, p50/p90/p99/max per second, the fault's slow
	// calls in the seconds 20 and 21 (a dot's tooltip gives each point's value).
	for _, sc := range doc.Scenarios {
		name := LatencyTimeChartFile(sc.Name)
		svg := string(files[name])
		if n := svgElements(t, name, files[name]); n != 4 {
			t.Errorf("%s: %d series, want 4", name, n)
		}
		pts := sc.LatencyTimeline.Points()
		if len(pts) != 40 || pts[20].P99Ms != 50 || pts[20].MaxMs != 50 || pts[0].MaxMs != 0.899 {
			t.Fatalf("%s: points %+v", sc.Name, pts)
		}
		for _, want := range []string{"p99: elapsed 20s, latency (ms) 50</title>", "max: elapsed 5s, latency (ms) " + charts.FormatValue(pts[5].MaxMs) + "</title>",
			"p50: elapsed 39s, latency (ms) " + charts.FormatValue(pts[39].P50Ms) + "</title>"} {
			if !strings.Contains(svg, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if got := LatencyTimeChartFile(chartHostileName); got != "chart-latency-time-get_script_alert_1___script____x.svg" {
		t.Errorf("latency chart file of a hostile scenario name: %s", got)
	}
	if order := keys(files); order[0] != ChartCPS || !strings.HasPrefix(order[1], "chart-latency-time-") || order[3] != ChartLatency {
		t.Errorf("chart order: %v", order)
	}
	// Without the document (the operator's report), the charts come from the summary.
	files, err = Charts(sum, nil)
	if err != nil || len(files[ChartCPS]) == 0 || len(files[ChartPercentiles]) == 0 || len(files[calls]) != 0 {
		t.Fatalf("from the summary: %v %v", keys(files), err)
	}
	usage := map[string][]byte{}
	if err := UsageCharts(usage, []v1alpha1.ResourceUsage{{Role: "redis-master", Pods: 1, CPUAvgCores: 0.8, CPUMaxCores: 1.2, MemoryAvgBytes: 20 << 20, MemoryMaxBytes: 30 << 20},
		{Role: "runner", Pods: 2, CPUAvgCores: 1.5, CPUMaxCores: 1.9, MemoryAvgBytes: 80 << 20, MemoryMaxBytes: 90 << 20}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ChartCPU, ChartMemory} {
		if n := svgElements(t, name, usage[name]); n != 2 {
			t.Errorf("%s: %d bars, want 2", name, n)
		}
	}
}

// keys lists a file map's names.
func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return ChartOrder(out)
}

// longDoc is a document of n scenarios of 24 h each (a call every 40 s, 1-minute timeline).
func longDoc(t testing.TB, n int) *results.Document {
	start := time.Unix(1_700_000_000, 0)
	var scs []results.Scenario
	for i := range n {
		rec := results.NewRecorder(fmt.Sprintf("scenario-%02d-with-a-long-name", i), "redis.get")
		for s := 0; s < 86_400; s += 40 {
			rec.Record(start.Add(time.Duration(s)*time.Second), time.Duration(100+(s*7+i*13)%5000)*time.Microsecond, fmt.Sprint(s%3), "")
		}
		scs = append(scs, rec.Scenario())
	}
	doc, err := results.NewDocument("runner-0", scs...)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestChartsSizeOfALongRun measures the charts of 32 scenarios × 24 h: from the summary (the
// operator's report ConfigMap) and from the document (benchrun run's report directory).
func TestChartsSizeOfALongRun(t *testing.T) {
	doc := longDoc(t, 32)
	sum := results.Summarize(doc, results.DefaultOptions())
	for _, c := range []struct {
		name string
		doc  *results.Document
	}{{"summary", nil}, {"document", doc}} {
		files, err := Charts(sum, c.doc)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, name := range keys(files) {
			total += len(files[name])
			t.Logf("%s: %s %d KiB", c.name, name, len(files[name])>>10)
		}
		t.Logf("%s: charts of 32 scenarios × 24 h: %d KiB", c.name, total>>10)
		if total > 400<<10 {
			t.Errorf("%s: charts of %d KiB, more than 400 KiB", c.name, total>>10)
		}
	}
}

// TestLatencyTimeChartGap: the latency lines break over the seconds without call starts (a
// paused target under a closed loop) instead of drawing through them.
func TestLatencyTimeChartGap(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	rec := results.NewRecorder("set", "redis.set")
	for ms := range 10_000 {
		if ms < 5000 || ms >= 8000 {
			rec.Record(start.Add(time.Duration(ms)*time.Millisecond), time.Duration(100+ms%300)*time.Microsecond, "OK", "")
		}
	}
	doc, err := results.NewDocument("runner-0", rec.Scenario())
	if err != nil {
		t.Fatal(err)
	}
	files, err := Charts(results.Summarize(doc, results.DefaultOptions()), doc)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(files[LatencyTimeChartFile("set")])
	paths := regexp.MustCompile(`class="series" d="([^"]+)"`).FindAllStringSubmatch(svg, -1)
	if len(paths) != 4 {
		t.Fatalf("%d lines", len(paths))
	}
	for _, p := range paths {
		if strings.Count(p[1], "M") != 2 || strings.Count(p[1], "L") != 5 {
			t.Errorf("a line over 5 + 2 seconds with a 3 s gap: %s", p[1])
		}
	}
}
