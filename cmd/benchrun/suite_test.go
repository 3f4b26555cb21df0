package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// suiteYAML is a small suite: redis single with and without io-threads, each run twice,
// interleaved; the threshold cannot hold (io-threads making get 10 times faster), so the
// suite's verdict fails.
const suiteYAML = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkSuite
metadata:
  name: cli-suite
spec:
  template:
    target:
      redis: {mode: single}
    load:
      workers: 1
      tasksPerWorker: 2
      duration: 2s
      scenarios:
      - {name: get, type: redis.get, keySpace: 100}
  variants:
  - name: plain
  - name: io2
    redis: {config: {io-threads: "2"}}
  repeat: 2
  thresholds:
  - {variant: io2, scenario: get, expr: "cps >= +1000%"}
`

// TestRunSuiteLocally: benchrun run -f suite.yaml runs 2 variants × repeat 2 with real
// redis-server and k6, interleaved (A B A B), each child in its own directory, and writes the
// combined table (both variants, 2 runs each, the delta against the reference) and the
// verdict; the failed verdict is exit code 3, as for a run. benchrun report DIR prints it again.
func TestRunSuiteLocally(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "suite.yaml", suiteYAML), "--out-dir", out, "--output", "markdown")
	if code := c.run(t); code != exitThresholds {
		t.Fatalf("exit %d, want %d (the verdict fails)", code, exitThresholds)
	}
	order := []string{"cli-suite-plain-r1", "cli-suite-io2-r1", "cli-suite-plain-r2", "cli-suite-io2-r2"}
	last := -1
	for _, name := range order {
		completeDoc(t, filepath.Join(out, name), 1)
		i := strings.Index(c.stderr.String(), "child run "+strings.TrimSpace(name))
		if i < last {
			t.Errorf("child %s ran out of the interleaved order %v", name, order)
		}
		last = i
	}
	var s v1alpha1.BenchmarkSuite
	b, err := os.ReadFile(filepath.Join(out, SuiteDocument))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Status.Phase != v1alpha1.SuiteFailed || s.Status.Verdict != v1alpha1.VerdictFailed || len(s.Status.Children) != 4 {
		t.Fatalf("status: phase %s verdict %s children %d", s.Status.Phase, s.Status.Verdict, len(s.Status.Children))
	}
	checkSuiteTable(t, s.Status.Table)
	md := c.stdout.String()
	for _, want := range []string{"| get | plain |  | 2 | 0 |", "| get | io2 |  | 2 | 0 |", "verdict Failed", "`cps >= +1000%`", "cli-suite-io2-r2",
		"## Seed shapes", "Function Execution Time Statistics:", "| io2     | get      |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if file, _ := os.ReadFile(filepath.Join(out, "report.md")); string(file) != md {
		t.Errorf("report.md differs from the printed report")
	}
	if svg, err := os.ReadFile(filepath.Join(out, "cps.svg")); err != nil || xml.Unmarshal(svg, new(struct{})) != nil || !strings.Contains(string(svg), "io2") {
		t.Errorf("cps.svg: %v, or not SVG naming the variants", err)
	}
	if svg, err := os.ReadFile(filepath.Join(out, "percentiles.svg")); err != nil || xml.Unmarshal(svg, new(struct{})) != nil || !strings.Contains(string(svg), "io2 · get") {
		t.Errorf("percentiles.svg: %v, or not SVG with a curve per variant", err)
	}
	r := newCLI(t, nil, "report", "--output", "json", out)
	if code := r.run(t); code != exitOK {
		t.Fatalf("report: exit %d", code)
	}
	var rows []v1alpha1.SuiteRow
	if err := json.Unmarshal([]byte(r.stdout.String()), &rows); err != nil {
		t.Fatal(err)
	}
	checkSuiteTable(t, rows)
	checkSuiteHTML(t, out, rows)
}

// checkSuiteHTML: benchrun report --html on a suite's out dir writes one self-contained page
// with the combined table, the CPS chart and table.json's rows as its data; in headless
// Chromium (when installed) it is not blank, the chart has bars and the console stays empty.
func checkSuiteHTML(t *testing.T, out string, rows []v1alpha1.SuiteRow) {
	t.Helper()
	page := filepath.Join(t.TempDir(), "suite.html")
	if code := newCLI(t, nil, "report", "--html", "-o", page, out).run(t); code != exitOK {
		t.Fatalf("report --html: exit %d", code)
	}
	html := mustRead(t, page)
	for _, want := range []string{"<h1>BenchmarkSuite cli-suite</h1>", "<td>io2</td>", `data-chart="cps.svg"`, `data-chart="percentiles.svg"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{`src="http`, `href="http`, "<link", "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page references %s: not self-contained", bad)
		}
	}
	m := dataRE.FindStringSubmatch(html)
	var data struct {
		Table []v1alpha1.SuiteRow `json:"table"`
	}
	if m == nil || json.Unmarshal([]byte(m[1]), &data) != nil || !reflect.DeepEqual(data.Table, rows) {
		t.Errorf("the page's data is not table.json's rows")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Log("chromium is not installed: the suite's page is not opened in a browser")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	shot := filepath.Join(filepath.Dir(page), "suite.png")
	_, shotErr, err := headless(ctx, bin, page, "--window-size=1100,1400", "--screenshot="+shot)
	if err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, shotErr)
	}
	dom, domErr, err := headless(ctx, bin, page, "--dump-dom")
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, domErr)
	}
	if lines := consoleLines(append(shotErr, domErr...)); len(lines) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(lines, "\n"))
	}
	if inked, colours := pngStats(t, shot); inked < 0.02 || colours < 20 {
		t.Errorf("the suite's page looks blank: %.2f %% non-white, %d colours", inked*100, colours)
	}
	if f := figureRE.FindSubmatch(dom); f == nil || string(f[1]) != "cps.svg" || len(seriesRE.FindAll(f[2], -1)) < 2 {
		t.Errorf("the page's CPS chart has no bars per variant")
	}
	curves := -1
	for _, f := range figureRE.FindAllSubmatch(dom, -1) {
		if string(f[1]) == "percentiles.svg" {
			curves = len(seriesRE.FindAll(f[2], -1))
		}
	}
	if curves < 2 {
		t.Errorf("the page's percentile chart: %d curves, want one per variant", curves)
	}
}

// checkSuiteTable: one row per variant, 2 successful runs each, the delta and p-value
// against the reference on the other variant's row only.
func checkSuiteTable(t *testing.T, rows []v1alpha1.SuiteRow) {
	t.Helper()
	if len(rows) != 2 || rows[0].Variant != "plain" || rows[1].Variant != "io2" {
		t.Fatalf("table: %+v", rows)
	}
	for _, r := range rows {
		if r.Scenario != "get" || r.Runs != 2 || r.Failed != 0 || r.CPS.Mean <= 0 || r.CPS.Low > r.CPS.Mean || r.CPS.High < r.CPS.Mean {
			t.Errorf("row %+v", r)
		}
	}
	if rows[0].CPSDeltaPercent != nil || rows[1].CPSDeltaPercent == nil || rows[1].CPSPValue == nil {
		t.Errorf("deltas: reference %v, io2 %v (p %v)", rows[0].CPSDeltaPercent, rows[1].CPSDeltaPercent, rows[1].CPSPValue)
	}
	want := (rows[1].CPS.Mean/rows[0].CPS.Mean - 1) * 100
	if d := rows[1].CPSDeltaPercent; d != nil && (*d-want > 0.1 || want-*d > 0.1) {
		t.Errorf("io2 ΔCPS %.2f%%, its means give %.2f%%", *d, want)
	}
}

// TestRunSuiteChildFailsToStart: a variant whose redis-server refuses its config fails its
// child with redis-server's own words; the suite goes on (continueOnFailure), shows the
// child as failed in the table and the child list, and exits 1.
func TestRunSuiteChildFailsToStart(t *testing.T) {
	needRedis(t)
	y := strings.NewReplacer(`io-threads: "2"`, `hz: "notanumber"`, "repeat: 2", "repeat: 1", "duration: 2s", "duration: 1s").Replace(suiteYAML)
	y = y[:strings.Index(y, "  thresholds:")]
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "suite.yaml", y), "--out-dir", out)
	if code := c.run(t); code != exitFailed {
		t.Fatalf("exit %d, want %d (a child failed)", code, exitFailed)
	}
	if want := "child run cli-suite-io2-r1 (variant io2, repetition 1) failed: redis master"; !strings.Contains(c.stderr.String(), want) ||
		!strings.Contains(c.stderr.String(), "hz notanumber") {
		t.Errorf("stderr lacks %q and redis-server's words", want)
	}
	md := c.stdout.String()
	for _, want := range []string{"| get | plain |  | 1 | 0 |", "| get | io2 |  | 0 | **1 FAILED** |", "| cli-suite-io2-r1 | io2 |  | 1 | Failed | redis master"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if leftovers := c.leftovers(t); len(leftovers) > 0 {
		t.Errorf("processes left: %v", leftovers)
	}
}

// TestRunSuiteInterrupted: Ctrl-C during the first child stops it (partial results), starts
// no other child, and still writes the suite's report listing the rest as not run; exit 130.
func TestRunSuiteInterrupted(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "suite.yaml", suiteYAML), "--out-dir", out)
	done := c.startRunners(t, 30*time.Second)
	time.Sleep(500 * time.Millisecond)
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("benchrun did not stop:\n%s", c.stderr.String())
	}
	if code := c.cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want %d:\n%s", code, exitInterrupted, c.stderr.String())
	}
	if strings.Contains(c.stderr.String(), "child run 2/4") {
		t.Errorf("a child started after the interrupt:\n%s", c.stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| cli-suite-plain-r1 | plain |  | 1 | Failed | Interrupted", "| cli-suite-io2-r2 | io2 |  | 2 | Failed | NotRun"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if leftovers := c.leftovers(t); len(leftovers) > 0 {
		t.Errorf("processes left: %v", leftovers)
	}
}

// TestRunSuiteVariantCannotRunHere: a variant that cannot run on this machine (Valkey without
// valkey-server: benchrun's PATH has only redis-server) fails the suite before anything
// starts, naming the child and the cause.
func TestRunSuiteVariantCannotRunHere(t *testing.T) {
	needRedis(t)
	redis, _ := exec.LookPath("redis-server")
	bin := t.TempDir()
	if err := os.Symlink(redis, filepath.Join(bin, "redis-server")); err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(suiteYAML, `redis: {config: {io-threads: "2"}}`, `redis: {engine: valkey}`, 1)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, []string{"PATH=" + bin}, "run", "-f", writeFile(t, "suite.yaml", y), "--out-dir", out)
	if code := c.run(t); code != exitFailed {
		t.Fatalf("exit %d, want %d", code, exitFailed)
	}
	if want := "child run cli-suite-io2-r1 (variant io2) cannot run locally: "; !strings.Contains(c.stderr.String(), want) ||
		!strings.Contains(c.stderr.String(), "valkey-server not found in PATH") || strings.Contains(c.stderr.String(), "starting the") {
		t.Errorf("stderr: want %q, valkey-server not found, and nothing started", want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the out dir was created (%v): something ran", err)
	}
}

// TestRunSuitePegasusLocally: a local suite's children keep their per-operation figures (they
// were converted without them), so the Pegasus table of a ycsb scenario has its read and write
// columns: a row per variant whose R-QPS and W-QPS are the child's read and update calls/s.
func TestRunSuitePegasusLocally(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "suite.yaml", `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkSuite
metadata:
  name: cli-pegasus
spec:
  template:
    target:
      redis: {mode: single}
    load:
      workers: 1
      tasksPerWorker: 2
      duration: 2s
      scenarios:
      - name: ycsb_a
        type: ycsb
        keySpace: 1000
        ycsb: {readProportion: 0.5, updateProportion: 0.5, requestDistribution: uniform}
  variants:
  - name: plain
`), "--out-dir", out, "--output", "markdown")
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d\n%s", code, c.stderr.String())
	}
	md := c.stdout.String()
	row := regexp.MustCompile(`(?m)^\| plain +\| ycsb_a +\| Read & Write +\| 1:1 +\|(.*)\|$`).FindStringSubmatch(md)
	if row == nil {
		t.Fatalf("no Pegasus row of read and write figures:\n%s", md)
	}
	for i, cell := range strings.Split(row[1], "|") {
		if v, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(cell, ",", "")), 64); err != nil || v <= 0 {
			t.Errorf("Pegasus column %d of %q: %q", i, row[0], cell)
		}
	}
}
