package controllers

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/benchrun/benchrun/internal/dashboards"
	"github.com/benchrun/benchrun/internal/livemetrics"
	"github.com/benchrun/benchrun/internal/promtest"
	"github.com/benchrun/benchrun/internal/redistest"
	"github.com/benchrun/benchrun/internal/results"
)

// runDashboard is the live dashboard, tested by TestRunDashboardQueries on a real run's
// remote write (TestHistoryDashboardQueries covers the others).
const runDashboard = dashboards.Run

// dashboardQueries returns the queries of a dashboard's template variables (label_values as
// count by) and panels, with vars substituted.
func dashboardQueries(t *testing.T, file string, vars *strings.Replacer) []string {
	t.Helper()
	d, err := dashboards.Load(file, vars)
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, q := range d.Queries {
		queries = append(queries, q.Expr)
	}
	return queries
}

// dashboardAnnotations returns a dashboard's Prometheus annotation queries (vars substituted).
func dashboardAnnotations(t *testing.T, file string, vars *strings.Replacer) []dashboards.Annotation {
	t.Helper()
	d, err := dashboards.Load(file, vars)
	if err != nil {
		t.Fatal(err)
	}
	return d.Annotations
}

// liveScript is a k6 script for our k6: Redis GETs timed in Go, and every 10th iteration a
// recorded "timeout" error, so the error panels have data.
const liveScript = `import benchrun from 'k6/x/benchrun';
export const options = { scenarios: { get: { executor: 'constant-vus', vus: 2, duration: '12s', exec: 'get' } } };
const client = benchrun.redis({ addr: __ENV.REDIS_ADDR });
let n = 0;
export function get() {
  client.loop(50, 'GET', 'key:__rand_int__');
  if (++n % 10 === 0) benchrun.record(0.5, null, 'timeout');
}
`

// TestRunDashboardQueries: our k6 runs against a real redis-server and remote-writes to a real
// Prometheus that also scrapes the manager's history metrics; every query of every panel and
// variable of the "benchrun / run" dashboard (variables substituted) returns data, the calls
// agree exactly with the result document, mid-run CPS within 10 % of what the document's
// timeline counts over the same window, and the p99 within the histogram's 25 % buckets.
func TestRunDashboardQueries(t *testing.T) {
	k6 := os.Getenv("BENCHRUN_K6")
	if k6 == "" {
		t.Skip("needs our k6: BENCHRUN_K6 (make test sets it to bin/k6)")
	}
	reg := prometheus.NewRegistry()
	h := NewHistory(reg, DefaultHistoryRunsPerNamespace)
	h.Observe(finishedRun("bench", "live1", 1, 1))
	// the live usage panels: what the manager's usage sampling exports while a run runs
	h.LiveUsage(finishedRun("bench", "live1", 1, 1), []podSample{{"redis-master", "redis-0", 0.5, 8 << 20}}, time.Now())
	h.PhaseEntered(finishedRun("bench", "live1", 1, 1), time.Now()) // the phase annotations
	exporter := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(exporter.Close)
	prom := promtest.Start(t, strings.TrimPrefix(exporter.URL, "http://"))
	redis := redistest.Start(t)

	dir := t.TempDir()
	script, out := filepath.Join(dir, "live.js"), filepath.Join(dir, "result.json")
	if err := os.WriteFile(script, []byte(liveScript), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(k6, "run", "-q", "--summary-mode", "disabled", "--out", "benchrun="+out, script)
	cmd.Env = append(os.Environ(), "REDIS_ADDR="+redis, "BENCHRUN_RUNNER=live1-0",
		livemetrics.EnvURL+"="+prom.RemoteWriteURL(), livemetrics.EnvInterval+"=1s", livemetrics.EnvRun+"=live1",
		livemetrics.EnvNamespace+"=bench", livemetrics.EnvTargetKind+"=redis/single")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("k6: %v\n%s", err, b)
	}
	doc, err := results.DecodeFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := results.Summarize(doc, results.DefaultOptions()).Scenarios[0]

	vars := strings.NewReplacer("$namespace", "bench", "$benchmarkrun", "live1", "$scenario", "get", "$__rate_interval", "1m")
	deadline := time.Now().Add(60 * time.Second)
	for _, q := range dashboardQueries(t, filepath.Join("../charts/benchrun/dashboards", runDashboard), vars) {
		for {
			s, err := prom.Query(q)
			if err == nil && len(s) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s returns no data (%v)", runDashboard, q, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	// every annotation has data this soon after the run: "load started", and "runs finished"
	// for live1, finished (its counter series new) less than 2 minutes ago
	for _, a := range dashboardAnnotations(t, filepath.Join("../charts/benchrun/dashboards", runDashboard), vars) {
		s, err := prom.Query(a.Expr)
		if err != nil || len(s) == 0 {
			t.Errorf("annotation %q: %s: %d series (%v)", a.Name, a.Expr, len(s), err)
		}
	}
	sel := `{namespace=~"bench", benchmarkrun=~"live1", scenario=~"get"}`
	if got, err := prom.Value(`sum by (scenario) (benchrun_calls_total` + sel + `)`); err != nil || got != float64(sum.Calls) {
		t.Errorf("calls panel %v (%v), document %d", got, err, sum.Calls)
	}
	if got, err := prom.Value(`sum by (scenario) (benchrun_errors_total` + sel + `)`); err != nil || got != float64(sum.Errors) || got == 0 {
		t.Errorf("errors %v (%v), document %d", got, err, sum.Errors)
	}
	cps, docCPS := midRunCPS(t, prom, doc, `benchrun_calls_total`+sel+`[5m]`)
	if cps < 0.9*docCPS || cps > 1.1*docCPS {
		t.Errorf("mid-run CPS from Prometheus %.0f, from the document's timeline over the same window %.0f", cps, docCPS)
	}
	// the panel's p99 over the whole run: the final push carries every call
	p99, err := prom.Value(`histogram_quantile(0.99, sum by (le, scenario) (benchrun_latency_seconds_bucket` + sel + `))`)
	if want := sum.LatencyMs.P99 / 1000; err != nil || p99 < 0.8*want || p99 > 1.25*want {
		t.Errorf("p99 panel %v s (%v), document %v s", p99, err, want)
	}
	t.Logf("calls %d; mid-run CPS document %.0f Prometheus %.0f; p99 document %.3f ms Prometheus %.3f ms",
		sum.Calls, docCPS, cps, sum.LatencyMs.P99, p99*1000)
}

// midRunCPS is the calls per second between the second and the second-to-last push of the
// calls counter selected, and the calls per second the document's start timeline (1 s
// buckets, interpolated) counts over the same window.
func midRunCPS(t *testing.T, prom *promtest.Prometheus, doc *results.Document, selector string) (float64, float64) {
	t.Helper()
	pts, err := prom.Points(selector)
	if err != nil || len(pts) < 4 {
		t.Fatalf("%d pushes stored (%v), want at least 4", len(pts), err)
	}
	a, b := pts[1], pts[len(pts)-2]
	secs := b.T.Sub(a.T).Seconds()
	tl := doc.Scenarios[0].Starts
	from, to := float64(a.T.UnixMilli()), float64(b.T.UnixMilli())
	var calls float64
	for i, n := range tl.Counts {
		lo := float64(tl.StartUnixMs + int64(i)*tl.BucketMs)
		hi := lo + float64(tl.BucketMs)
		if overlap := min(hi, to) - max(lo, from); overlap > 0 {
			calls += float64(n) * overlap / float64(tl.BucketMs)
		}
	}
	return (b.V - a.V) / secs, calls / secs
}
