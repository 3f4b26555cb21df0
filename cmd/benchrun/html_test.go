package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/charts"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results"
)

// chromium is Debian's headless Chromium, or a skip saying why there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it): the HTML report is not checked in a browser")
	return ""
}

// headless runs Chromium headless on a file with args and returns its stdout and stderr
// (console messages are logged to stderr).
func headless(ctx context.Context, bin, file string, args ...string) (stdout, stderr []byte, err error) {
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir=" + filepath.Join(filepath.Dir(file), fmt.Sprintf("chromium-%d", time.Now().UnixNano())),
		"--enable-logging=stderr", "--v=0"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(all, "file://"+file)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// consoleLines are the page's console messages in Chromium's log (errors, uncaught
// exceptions, failed loads); the report has no script that logs anything.
func consoleLines(stderr []byte) []string {
	var out []string
	for _, l := range strings.Split(string(stderr), "\n") {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Uncaught") {
			out = append(out, l)
		}
	}
	return out
}

// pngStats decodes a PNG and returns the fraction of non-white pixels and the number of
// distinct colours.
func pngStats(t *testing.T, path string) (inked float64, colours int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	b := img.Bounds()
	seen := map[[3]uint32]bool{}
	nonWhite := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if r>>8 < 240 || g>>8 < 240 || bl>>8 < 240 {
				nonWhite++
			}
		}
	}
	return float64(nonWhite) / float64(b.Dx()*b.Dy()), len(seen)
}

var (
	figureRE = regexp.MustCompile(`(?s)<figure id="[^"]+" data-chart="([^"]+)">(.*?)</figure>`)
	dataRE   = regexp.MustCompile(`(?s)<script type="application/json" id="benchrun-data">(.*?)</script>`)
	rowRE    = regexp.MustCompile(`(?s)<tr data-scenario="([^"]+)">(.*?)</tr>`)
	cellRE   = regexp.MustCompile(`data-field="([a-z0-9]+)" data-value="([^"]+)">([^<]*)</td>`)
	seriesRE = regexp.MustCompile(`class="(?:series|bar)"`)
)

// TestHTMLReportInChromium runs real k6 against a real redis-server, renders the run's HTML
// report with benchrun report --html and opens it in headless Chromium as a person would: the
// screenshot is not blank, every chart has data, the figures shown (table cells and the
// embedded JSON) equal results.json, and the console stays empty.
func TestHTMLReportInChromium(t *testing.T) {
	needRedis(t)
	bin := chromium(t)
	start := time.Now()
	file := writeFile(t, "run.yaml", fmt.Sprintf(redisRun, "2s"))
	out := filepath.Join(t.TempDir(), "out")
	if code := newCLI(t, nil, "run", "-f", file, "--runners", "1", "--out-dir", out).run(t); code != 0 {
		t.Fatalf("run: exit code %d", code)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if code := newCLI(t, nil, "report", "--html", "-o", page, out).run(t); code != 0 {
		t.Fatalf("report --html: exit code %d", code)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`src="http`, `href="http`, "<link", "@import"} { // nothing to fetch at view time
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("the page references %s: not self-contained", bad)
		}
	}
	var sum results.Summary
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, lifecycle.ReportJSON))), &sum); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	shot := filepath.Join(filepath.Dir(page), "report.png")
	type result struct {
		stdout, stderr []byte
		err            error
	}
	merged, err := results.DecodeFile(filepath.Join(out, lifecycle.ReportMerged))
	if err != nil {
		t.Fatal(err)
	}
	shotDone, svgDone, latDone := make(chan result, 1), make(chan result, 1), make(chan result, 1)
	go func() { // the screenshots and the DOM dump in parallel
		o, e, err := headless(ctx, bin, page, "--window-size=1200,3000", "--screenshot="+shot)
		shotDone <- result{o, e, err}
	}()
	svgShot := filepath.Join(filepath.Dir(page), "percentiles.png") // a report's SVG file as GitHub or an editor shows it
	go func() {
		o, e, err := headless(ctx, bin, filepath.Join(out, lifecycle.ChartPercentiles), "--window-size=760,400", "--screenshot="+svgShot)
		svgDone <- result{o, e, err}
	}()
	latShot := filepath.Join(filepath.Dir(page), "latency-time.png") // the first scenario's latency over time
	go func() {
		o, e, err := headless(ctx, bin, filepath.Join(out, lifecycle.LatencyTimeChartFile(merged.Scenarios[0].Name)), "--window-size=760,400", "--screenshot="+latShot)
		latDone <- result{o, e, err}
	}()
	dom, domErr, err := headless(ctx, bin, page, "--dump-dom")
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, domErr)
	}
	sr, sv, sl := <-shotDone, <-svgDone, <-latDone
	for _, r := range []result{sr, sv, sl} {
		if r.err != nil {
			t.Fatalf("chromium --screenshot: %v\n%s", r.err, r.stderr)
		}
	}
	if lines := consoleLines(slices.Concat(domErr, sr.stderr, sv.stderr, sl.stderr)); len(lines) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(lines, "\n"))
	}
	for _, png := range []string{shot, svgShot, latShot} {
		inked, colours := pngStats(t, png)
		t.Logf("screenshot %s: %.1f %% non-white, %d colours", filepath.Base(png), inked*100, colours)
		if inked < 0.02 || colours < 20 {
			t.Errorf("screenshot %s looks blank: %.2f %% non-white, %d colours", filepath.Base(png), inked*100, colours)
		}
	}
	checkCharts(t, dom)
	checkFigures(t, dom, sum)
	checkLatencyCharts(t, dom, merged, sum)
	t.Logf("run, report and browser checks in %s", time.Since(start).Round(time.Millisecond))
}

// checkCharts: every chart the page shows is an SVG with at least one series or bar drawn
// with data (a path with coordinates or a rect with a height), and the run's chart types are there.
func checkCharts(t *testing.T, dom []byte) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range figureRE.FindAllSubmatch(dom, -1) {
		name, body := string(m[1]), m[2]
		seen[name] = true
		if !bytes.Contains(body, []byte("<svg")) {
			t.Errorf("chart %s: no <svg> in the DOM", name)
			continue
		}
		n := len(seriesRE.FindAll(body, -1))
		if n == 0 || bytes.Contains(body, []byte(">no data<")) || !regexp.MustCompile(`(?:d="M[0-9.]+ [0-9.]+L|height="[1-9])`).Match(body) {
			t.Errorf("chart %s has no data (%d series or bars)", name, n)
		}
	}
	for _, want := range []string{lifecycle.ChartCPS, lifecycle.ChartLatency, lifecycle.ChartPercentiles, lifecycle.ChartReturnValues} {
		if !seen[want] {
			t.Errorf("the page lacks chart %s (has %v)", want, seen)
		}
	}
}

// checkLatencyCharts: the page shows each scenario's latency over time with the merged
// document's figures: every interval's p50, p99 and max as a dot at its elapsed time.
func checkLatencyCharts(t *testing.T, dom []byte, doc *results.Document, sum results.Summary) {
	t.Helper()
	var t0 time.Time
	for _, sc := range sum.Scenarios {
		if sc.Calls > 0 && (t0.IsZero() || sc.Start.Before(t0)) {
			t0 = sc.Start
		}
	}
	t0 = t0.Truncate(time.Second)
	charted := map[string]string{}
	for _, m := range figureRE.FindAllSubmatch(dom, -1) {
		charted[string(m[1])] = string(m[2])
	}
	for _, sc := range doc.Scenarios {
		body, ok := charted[lifecycle.LatencyTimeChartFile(sc.Name)]
		pts := sc.LatencyTimeline.Points()
		if !ok || len(pts) == 0 {
			t.Errorf("%s: no latency over time chart (%d points)", sc.Name, len(pts))
			continue
		}
		var calls int64
		for _, p := range pts {
			at := charts.FormatElapsed(max(float64(p.StartUnixMs-t0.UnixMilli())/1000, 0))
			for name, v := range map[string]float64{"p50": p.P50Ms, "p99": p.P99Ms, "max": p.MaxMs} {
				if want := fmt.Sprintf("<title>%s: elapsed %s, latency (ms) %s</title>", name, at, charts.FormatValue(v)); !strings.Contains(body, want) {
					t.Errorf("%s: the latency chart lacks %s", sc.Name, want)
				}
			}
			calls += p.Calls
		}
		if calls != sc.Calls {
			t.Errorf("%s: the latency timeline holds %d calls, the scenario %d", sc.Name, calls, sc.Calls)
		}
		t.Logf("%s: latency over time, %d intervals of %d ms", sc.Name, len(pts), sc.LatencyTimeline.BucketMs)
	}
}

// checkFigures: the summary table's cells and the embedded JSON show results.json's figures.
func checkFigures(t *testing.T, dom []byte, sum results.Summary) {
	t.Helper()
	m := dataRE.FindSubmatch(dom)
	if m == nil {
		t.Fatal("no #benchrun-data in the DOM")
	}
	var data struct {
		Summary results.Summary `json:"summary"`
		Charts  []string        `json:"charts"`
	}
	if err := json.Unmarshal(m[1], &data); err != nil {
		t.Fatalf("#benchrun-data: %v", err)
	}
	if !reflect.DeepEqual(data.Summary, sum) {
		t.Errorf("embedded summary differs from results.json:\n%+v\n%+v", data.Summary, sum)
	}
	rows := rowRE.FindAllSubmatch(dom, -1)
	if len(rows) != len(sum.Scenarios) {
		t.Fatalf("%d summary rows, want %d", len(rows), len(sum.Scenarios))
	}
	for i, row := range rows {
		sc := sum.Scenarios[i]
		if string(row[1]) != sc.Name {
			t.Errorf("row %d is %s, want %s", i, row[1], sc.Name)
		}
		want := map[string]float64{"calls": float64(sc.Calls), "errors": float64(sc.Errors), "cps": sc.CPS, "mean": sc.LatencyMs.Mean,
			"p50": sc.LatencyMs.P50, "p90": sc.LatencyMs.P90, "p99": sc.LatencyMs.P99, "p999": sc.LatencyMs.P999, "max": sc.LatencyMs.Max}
		cells := cellRE.FindAllSubmatch(row[2], -1)
		if len(cells) != len(want) {
			t.Errorf("%s: %d figures, want %d", sc.Name, len(cells), len(want))
		}
		for _, c := range cells {
			field, shown := string(c[1]), strings.ReplaceAll(string(c[3]), ",", "")
			v, err1 := strconv.ParseFloat(string(c[2]), 64)
			s, err2 := strconv.ParseFloat(shown, 64)
			if err1 != nil || err2 != nil || v != want[field] || s != want[field] {
				t.Errorf("%s %s: shown %q (value %q), want %v", sc.Name, field, c[3], c[2], want[field])
			}
		}
		cps := results.FormatThousands(sc.CPS, 2) // ya's Average CPS table, from report.md
		if !regexp.MustCompile(`<td>` + regexp.QuoteMeta(sc.Name) + `</td><td(?: class="num")?>` + regexp.QuoteMeta(cps) + `</td>`).Match(dom) {
			t.Errorf("%s: the Average CPS table does not show %s", sc.Name, cps)
		}
	}
}
