package suite

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
)

// result is a child's status.results entry of one scenario, latencies in ms.
func result(name, typ string, calls int64, cps float64, l v1alpha1.LatencyMs) v1alpha1.ScenarioResult {
	return v1alpha1.ScenarioResult{Name: name, Type: typ, Calls: calls, CPS: cps, LatencyMs: l}
}

// lat is a latency row: mean, p50, p90, p99, p999, min, max.
func lat(mean, p50, p90, p99, p999, lo, hi float64) v1alpha1.LatencyMs {
	return v1alpha1.LatencyMs{Mean: mean, P50: p50, P90: p90, P99: p99, P999: p999, Min: lo, Max: hi, Median: p50}
}

// redisOutcomes are the users' Redis comparison (seed 000's shape) run twice per variant:
// tair's second run failed, valkey9's both.
func redisOutcomes() []Outcome {
	var outs []Outcome
	for rep := int32(1); rep <= 2; rep++ {
		k := float64(rep - 1) // the second run a little slower
		for i, v := range []string{"redis8", "redis8-io8", "valkey9", "tair"} {
			f := 1 + float64(i)/10
			o := Outcome{Variant: v, Repetition: rep, Results: []v1alpha1.ScenarioResult{
				result("get", "redis.get", 3825994, 63378.76/f-k*100, lat(9.03*f, 8.35*f, 12.42*f, 25.38*f, 40*f, 0.67+k, 533.36+k*10)),
				result("set", "redis.set", 706339, 11769.40/f-k*100, lat(48.94*f, 47.21*f, 57.49*f, 84.12*f, 120*f, 4.04, 534.17)),
			}}
			o.Failed = v == "valkey9" || v == "tair" && rep == 2
			outs = append(outs, o)
		}
	}
	return outs
}

// TestShapesRedisComparison: the ya CPS table has a row per variant and a CPS column per
// scenario (the mean over the successful runs), the execution time table a row per variant
// and scenario; a variant without a successful run is marked FAILED with "-" cells, a failed
// repetition is marked and left out of the figures; no echo or sweep table for redis.* scenarios.
func TestShapesRedisComparison(t *testing.T) {
	s := suiteFromYAML(t, "cmp", redisCompare)
	outs := redisOutcomes()
	files, err := ReportFiles(s, Conclude(s, outs), outs)
	if err != nil {
		t.Fatal(err)
	}
	md := string(files[ReportMarkdown])
	for _, want := range []string{
		"| Variant                |       get |       set |\n",
		"| redis8                 | 63,328.76 | 11,719.40 |\n",                                                               // (63378.76 + 63278.76) / 2
		"| tair (**1 FAILED**)    | 48,752.89 |  9,053.38 |\n",                                                               // its first run only
		"| valkey9 (**2 FAILED**) |         - |         - |\n",                                                               // never silently dropped
		"| redis8                 | get      |  9.03 |  8.35 | 12.42 |  25.38 |   40 | 3,825,994 | 0.67 | 543.36 |   8.35 |", // Min, Max: the extremes
		"| valkey9 (**2 FAILED**) | set      |     - |     - |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if i, j := strings.Index(md, "## Combined table"), strings.Index(md, "## Seed shapes"); i < 0 || j < i || j > strings.Index(md, "## Child runs") {
		t.Errorf("seed shapes not after the combined table:\n%s", md)
	}
	if strings.Contains(md, "TCP Echo Statistics") || strings.Contains(md, "Sweep table") {
		t.Errorf("echo or sweep shape for a redis suite without sweeps:\n%s", md)
	}
	pct := files[ReportPercentiles]
	wellFormed(t, pct)
	// 3 variants with a successful run × 2 scenarios; the failed one has no curve.
	if n := strings.Count(string(pct), `class="series"`); n != 6 || !strings.Contains(string(pct), "tair · set") || strings.Contains(string(pct), "valkey9 ·") {
		t.Errorf("percentiles.svg: %d curves\n%s", n, pct)
	}
}

// TestShapesEchoSweep: an echo suite with sweeps gets the echo comparison (seed 002's summary
// per variant) and the packetd-style sweep table (a row per variant × sweep point, the sweep
// fields as columns), with the sweep point in the ya tables' rows.
func TestShapesEchoSweep(t *testing.T) {
	s := suiteFromYAML(t, "echo", `
template:
  target: {custom: {image: echo:1}}
  load: {scenarios: [{name: echo, type: tcp.echo}]}
variants: [{name: libuv}, {name: pyuv, load: {parallelism: 2}}]
sweeps: [{field: workers, values: [10, 50]}, {field: bodySize, values: [1024, 10240]}]
`)
	var outs []Outcome
	for _, v := range []string{"libuv", "pyuv"} {
		for i, p := range Points(s.Spec.Sweeps) {
			f := float64(i + 1)
			r := result("echo", "tcp.echo", 2037047, 67901.57/f, v1alpha1.LatencyMs{Min: 0.01, Max: 10.75 * f, Mean: 0.04 * f, StdDev: 0.03, P50: 0.04, P99: 0.2 * f})
			if v == "libuv" { // pyuv's children stand for an older operator's: no transfer rate
				r.TransferMiBPerSec = 64.76 / f
			}
			outs = append(outs, Outcome{Variant: v, Sweep: PointString(p), Repetition: 1, Results: []v1alpha1.ScenarioResult{r}})
		}
	}
	files, err := ReportFiles(s, Conclude(s, outs), outs)
	if err != nil {
		t.Fatal(err)
	}
	md := string(files[ReportMarkdown])
	for _, want := range []string{
		"TCP Echo Statistics",
		"| Variant | Sweep                     | Scenario | Messages | Requests/sec | Latency min (ms) | Latency max (ms) | Latency mean (ms) | Latency std (ms) | Transfer/sec (MiB) |",
		"| libuv   | workers=10,bodySize=1024  | echo     |  2037047 |     67901.57 |             0.01 |            10.75 |              0.04 |             0.03 |              64.76 |",
		"| pyuv    | workers=10,bodySize=1024  | echo     |  2037047 |     67901.57 |             0.01 |            10.75 |              0.04 |             0.03 |                  - |",
		"| VARIANT | SCENARIO | WORKERS | BODYSIZE | REQUEST |       QPS | P99(ms) | ERRORS |",
		"| pyuv    | echo     |      50 |     10KB |", // the packetd shape's body size
		"| libuv   | workers=50,bodySize=10240 | 16,975.39 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	pct := files[ReportPercentiles]
	wellFormed(t, pct)
	if n := strings.Count(string(pct), `class="series"`); n != 8 || !strings.Contains(string(pct), "pyuv · echo workers=50,bodySize=10240") {
		t.Errorf("percentiles.svg: %d curves", n)
	}
}

// TestShapesEscapedAndBounded: user-written names are escaped in every shape (no table break,
// no HTML); shapes over MaxShapesBytes are left out with a note; the percentile chart keeps
// MaxPercentileCurves curves and says so; no results: no chart.
func TestShapesEscapedAndBounded(t *testing.T) {
	s := suiteFromYAML(t, "t", twoVariants)
	s.Spec.Template.Load.Scenarios[0].Name = "get|<script>"
	outs := []Outcome{{Variant: "a", Results: []v1alpha1.ScenarioResult{result("get|<script>", "redis.get", 10, 5, lat(1, 1, 1, 1, 1, 1, 1))}}}
	md, err := shapesMarkdown(&s.Spec, outs)
	if err != nil || strings.Contains(md, "<script>") || !strings.Contains(md, `get\|&lt;script>`) {
		t.Errorf("escaping: %v\n%s", err, md)
	}

	outs = largest(s)
	md, err = shapesMarkdown(&s.Spec, outs)
	if err != nil || len(md) > 1024 || !strings.Contains(md, "Left out:") {
		t.Errorf("bound: %v, %d bytes: %.300s", err, len(md), md)
	}
	svg, ok, err := PercentileChart(&s.Spec, outs)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	wellFormed(t, svg)
	if n := strings.Count(string(svg), `class="series"`); n != MaxPercentileCurves || !strings.Contains(string(svg), fmt.Sprintf("first %d of %d curves", MaxPercentileCurves, 64*32)) {
		t.Errorf("%d curves", n)
	}
	if _, ok, err := PercentileChart(&s.Spec, nil); ok || err != nil {
		t.Errorf("a chart without results: %v", err)
	}
}

// largest makes s (one scenario) the largest suite the API admits — 64 variants of one run,
// 32 scenarios with long names — and returns its outcomes.
func largest(s *v1alpha1.BenchmarkSuite) []Outcome {
	for i := range 31 {
		sc := s.Spec.Template.Load.Scenarios[0]
		sc.Name = fmt.Sprintf("scenario-with-a-long-name-%02d", i)
		s.Spec.Template.Load.Scenarios = append(s.Spec.Template.Load.Scenarios, sc)
	}
	s.Spec.Variants = nil
	var outs []Outcome
	for i := range 64 {
		v := fmt.Sprintf("variant-with-a-long-name-%02d", i)
		s.Spec.Variants = append(s.Spec.Variants, v1alpha1.SuiteVariant{Name: v})
		o := Outcome{Variant: v}
		for _, sc := range s.Spec.Template.Load.Scenarios {
			o.Results = append(o.Results, result(sc.Name, "redis.get", 123456, 12345.67, lat(1.23, 1.1, 2.2, 3.3, 4.4, 0.1, 55.5)))
		}
		outs = append(outs, o)
	}
	return outs
}

// wellFormed fails unless svg parses as XML with an <svg> root.
func wellFormed(t *testing.T, svg []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("root element %q", root)
	}
}

// TestShapesInSuiteHTML: the suite's HTML page (lifecycle.SuiteHTMLReport of ReportFiles)
// shows the seed shapes as tables and inlines the percentile chart beside the CPS chart.
func TestShapesInSuiteHTML(t *testing.T) {
	s := suiteFromYAML(t, "cmp", redisCompare)
	outs := redisOutcomes()
	files, err := ReportFiles(s, Conclude(s, outs), outs)
	if err != nil {
		t.Fatal(err)
	}
	page, err := lifecycle.SuiteHTMLReport("cmp", files)
	if err != nil {
		t.Fatal(err)
	}
	p := string(page)
	for _, want := range []string{`data-chart="cps.svg"`, `data-chart="percentiles.svg"`, "<h3>Seed shapes</h3>",
		"<td>valkey9 (**2 FAILED**)</td>", `<td class="num">63,328.76</td>`, "Latency by percentile, per variant and scenario"} {
		if !strings.Contains(p, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if t.Failed() {
		i := strings.Index(p, "Seed shapes")
		t.Logf("page near the shapes:\n%.3000s", p[max(i, 0):])
	}
}
