package controllers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/promtest"
)

// finishedRun is a finished run with one scenario of the given CPS and p99.
func finishedRun(ns, name string, cps, p99 float64) *v1alpha1.BenchmarkRun {
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1,
		CreationTimestamp: metav1.NewTime(time.Unix(1_700_000_000, 0))}}
	run.Status.Phase, run.Status.Verdict = v1alpha1.PhaseSucceeded, "Passed"
	run.Status.Target = &v1alpha1.TargetStatus{Kind: "redis"}
	run.Status.CompletionTime = &metav1.Time{Time: time.Unix(1_700_000_090, 0)}
	run.Status.Results = []v1alpha1.ScenarioResult{{Name: "get", Calls: 1000, CPS: cps,
		LatencyMs: v1alpha1.LatencyMs{P50: p99 / 4, P90: p99 / 2, P99: p99, P999: p99 * 2, Max: p99 * 3}}}
	run.Status.Resources = []v1alpha1.ResourceUsage{{Role: "redis-master", Pods: 1, CPUAvgCores: 0.5, CPUMaxCores: 0.9,
		MemoryAvgBytes: 8 << 20, MemoryMaxBytes: 10 << 20}}
	return run
}

// TestHistoryMetricsBounded: only the newest N finished runs per namespace are exported, a run is
// counted once, and running runs export nothing.
func TestHistoryMetricsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := NewHistory(reg, 2)
	for i := range 3 {
		h.Observe(finishedRun("a", fmt.Sprintf("run-%d", i), float64(1000+i), 2))
		h.Observe(finishedRun("a", fmt.Sprintf("run-%d", i), float64(1000+i), 2)) // reconciled again
	}
	h.Observe(finishedRun("b", "other", 5, 1))
	running := finishedRun("a", "live", 1, 1)
	running.Status.Phase = v1alpha1.PhaseRunning
	h.Observe(running)
	early := finishedRun("b", "invalid-target", 0, 0) // failed before provisioning: no target status
	early.Status.Phase, early.Status.Target, early.Status.Results = v1alpha1.PhaseFailed, nil, nil
	h.Observe(early)
	if n := testutil.CollectAndCount(h.duration); n != 4 {
		t.Fatalf("%d duration series, want 4", n)
	}
	if n := testutil.CollectAndCount(h.cps); n != 3 {
		t.Fatalf("%d CPS series, want 3 (2 newest of namespace a, 1 of b)", n)
	}
	if got := testutil.ToFloat64(h.cps.WithLabelValues("a", "run-2", "1", "redis", "get")); got != 1002 {
		t.Fatalf("newest run's CPS %v", got)
	}
	if n := testutil.CollectAndCount(h.latency); n != 15 {
		t.Fatalf("%d latency series, want 3 runs × 5 quantiles", n)
	}
	if got := testutil.ToFloat64(h.finished.WithLabelValues("a", "Succeeded", "Passed")); got != 3 {
		t.Fatalf("finished counter %v, want 3", got)
	}
}

// TestPhaseEntered: each phase a run reaches gets its entry time; a new generation (Pending
// again) starts afresh; the series stay while the run is among the namespace's newest finished
// runs and go when it falls out, or when it is deleted unfinished (Drop).
func TestPhaseEntered(t *testing.T) {
	h := NewHistory(prometheus.NewRegistry(), 1)
	run := finishedRun("a", "r", 1, 1)
	t0 := time.Unix(1_700_000_000, 0)
	for i, p := range []v1alpha1.Phase{v1alpha1.PhasePending, v1alpha1.PhaseProvisioning, v1alpha1.PhaseRunning, v1alpha1.PhaseSucceeded} {
		run.Status.Phase = p
		h.PhaseEntered(run, t0.Add(time.Duration(i)*time.Second))
	}
	if got := testutil.ToFloat64(h.phase.WithLabelValues("a", "r", "Running")); got != 1_700_000_002 {
		t.Fatalf("Running entered at %v", got)
	}
	h.Observe(run) // finished: its phase series stay with its history
	if n := testutil.CollectAndCount(h.phase); n != 4 {
		t.Fatalf("%d phase series after finishing, want 4", n)
	}
	run.Status.Phase = v1alpha1.PhasePending // a new generation
	h.PhaseEntered(run, t0.Add(time.Minute))
	if n := testutil.CollectAndCount(h.phase); n != 1 {
		t.Fatalf("%d phase series after a new generation started, want 1", n)
	}
	h.Observe(finishedRun("a", "newer", 1, 1)) // r falls out of the newest 1
	if n := testutil.CollectAndCount(h.phase); n != 0 {
		t.Fatalf("%d phase series after the run fell out of the history, want 0", n)
	}
	run.Status.Phase = v1alpha1.PhaseRunning
	h.PhaseEntered(run, t0)
	h.Drop("a", "r")
	if n := testutil.CollectAndCount(h.phase); n != 0 {
		t.Fatalf("%d phase series after Drop, want 0", n)
	}
	var nilHistory *History
	nilHistory.PhaseEntered(run, t0)
	nilHistory.Drop("a", "r")
}

// TestHistoryOnPrometheus: a real Prometheus scrapes the history metrics and the queries a
// history dashboard runs (CPS and p99 per scenario across runs) return the runs' figures.
func TestHistoryOnPrometheus(t *testing.T) {
	api := historyOnPrometheus(t)
	want := map[string]float64{
		`benchrun_run_scenario_cps{benchmarkrun="redis8",scenario="get"}`:                         41000,
		`max(benchrun_run_scenario_cps{scenario="get"})`:                                          45000,
		`benchrun_run_scenario_latency_ms{benchmarkrun="valkey9",quantile="0.99"}`:                1.25,
		`sum(benchrun_run_memory_bytes{role="redis-master",stat="max"})`:                          20 << 20,
		`sum(benchrun_runs_finished_total{namespace="bench",phase="Succeeded",verdict="Passed"})`: 2,
	}
	deadline := time.Now().Add(60 * time.Second)
	for q, v := range want {
		for {
			got, ok := promQuery(api, q)
			if ok && got == v {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s = %v (found %v), want %v", q, got, ok, v)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// TestHistoryDashboardQueries: every query of every panel and template variable of the
// chart's dashboards (variables substituted) returns data from a real Prometheus scraping the
// history metrics, and the CPS panel shows the runs' CPS.
func TestHistoryDashboardQueries(t *testing.T) {
	api := historyOnPrometheus(t)
	files, _ := filepath.Glob("../charts/benchrun/dashboards/*.json")
	if len(files) == 0 {
		t.Fatal("no dashboards in charts/benchrun/dashboards")
	}
	vars := strings.NewReplacer("$namespace", "bench", "$scenario", "get")
	deadline := time.Now().Add(60 * time.Second)
	for _, f := range files {
		if filepath.Base(f) == runDashboard {
			continue // live metrics: TestRunDashboardQueries
		}
		queries := dashboardQueries(t, f, vars)
		for _, q := range queries {
			for promSeries(api, q) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %s returns no data", filepath.Base(f), q)
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	}
	if got, ok := promQuery(api, `max(benchrun_run_scenario_cps{namespace=~"bench", scenario=~"get"})`); !ok || got != 45000 {
		t.Fatalf("CPS panel max %v, want 45000", got)
	}
}

// promSeries is the number of series an instant query returns (0 on any error).
func promSeries(api, q string) int {
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Data struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil {
		return 0
	}
	return len(body.Data.Result)
}

// historyOnPrometheus exports two finished runs (redis8: 41,000 CPS, p99 1.5 ms; valkey9:
// 45,000 CPS, p99 1.25 ms) and returns the URL of a real Prometheus scraping them (the test
// is skipped without a prometheus binary).
func historyOnPrometheus(t *testing.T) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	h := NewHistory(reg, DefaultHistoryRunsPerNamespace)
	h.Observe(finishedRun("bench", "redis8", 41000, 1.5))
	h.Observe(finishedRun("bench", "valkey9", 45000, 1.25))
	target := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(target.Close)
	return promtest.Start(t, strings.TrimPrefix(target.URL, "http://")).URL
}

// promQuery runs an instant query and returns its single value.
func promQuery(api, q string) (float64, bool) {
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil || len(body.Data.Result) != 1 {
		return 0, false
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	var v float64
	_, err = fmt.Sscan(s, &v)
	return v, err == nil
}
