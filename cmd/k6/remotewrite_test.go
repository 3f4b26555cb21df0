package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/livemetrics"
	"github.com/benchrun/benchrun/internal/promtest"
	"github.com/benchrun/benchrun/internal/results"
)

// eventually retries f every 250 ms for up to 20 s and fails the test with its last error.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Our k6 streams its calls, errors, VUs and latency histogram to a real Prometheus by remote
// write while the load runs against a real redis-server; what Prometheus holds agrees with the
// result document: calls exactly (the last push carries the totals), p99 within the bucket
// resolution, and the live series were pushed more than once during the run.
func TestRemoteWriteToPrometheus(t *testing.T) {
	r := startRedis(t, "")
	prom := promtest.Start(t)
	doc, out := runK6(t, "redis_basic.js", map[string]string{
		"REDIS_ADDR": r.addr, "SCENARIOS": "get,ping", "DURATION": "3s", "GRACE": "500ms", "VUS": "4",
		"BATCH": "20", "KEYSPACE": "1000", "BENCHRUN_RUNNER": "runner-a",
		livemetrics.EnvURL: prom.RemoteWriteURL(), livemetrics.EnvInterval: "1s",
		livemetrics.EnvRun: "rw1", livemetrics.EnvNamespace: "bench", livemetrics.EnvTargetKind: "redis/single",
	})
	if strings.Contains(out, "remote write") {
		t.Fatalf("remote-write failures logged:\n%s", out)
	}
	sum := results.Summarize(doc, results.DefaultOptions())
	for _, sc := range sum.Scenarios {
		sel := fmt.Sprintf(`{benchmarkrun="rw1",namespace="bench",runner="runner-a",target="redis/single",scenario=%q}`, sc.Name)
		eventually(t, func() error {
			got, err := prom.Value("benchrun_calls_total" + sel)
			if err == nil && got != float64(sc.Calls) {
				err = fmt.Errorf("%s: Prometheus has %v calls, the document %d", sc.Name, got, sc.Calls)
			}
			return err
		})
		p99, err := prom.Value(`histogram_quantile(0.99, sum by (le) (benchrun_latency_seconds_bucket` + sel + `))`)
		if err != nil {
			t.Fatal(err)
		}
		want := sc.LatencyMs.P99 / 1000
		t.Logf("%s: %d calls; p99 document %.1f µs, Prometheus %.1f µs", sc.Name, sc.Calls, want*1e6, p99*1e6)
		if ratio := p99 / want; ratio < 0.8 || ratio > 1.25 {
			t.Errorf("%s: p99 from Prometheus %.6fs, document %.6fs (ratio %.3f, buckets are 25%% wide)", sc.Name, p99, want, ratio)
		}
		pushes, err := prom.Value(`count_over_time(benchrun_calls_total` + sel + `[10m])`)
		if err != nil || pushes < 3 {
			t.Errorf("%s: %v pushes stored (%v), want several during a 3 s scenario at 1 s", sc.Name, pushes, err)
		}
		vus, err := prom.Value(`max_over_time(benchrun_vus` + sel + `[10m])`)
		if err != nil || vus < 1 || vus > 4 {
			t.Errorf("%s: active VUs %v (%v), want 1..4", sc.Name, vus, err)
		}
		if errs, err := prom.Value("benchrun_errors_total" + sel); err != nil || errs != float64(sc.Errors) {
			t.Errorf("%s: errors %v (%v), document %d", sc.Name, errs, err, sc.Errors)
		}
	}
	if cpu, err := prom.Value(`benchrun_runner_cpu_seconds_total{benchmarkrun="rw1"}`); err != nil || cpu <= 0 {
		t.Errorf("runner CPU %v (%v)", cpu, err)
	}
}

// A remote-write endpoint that refuses connections does not fail the load or lose results:
// k6 exits 0, the document is complete, and the failure is logged once.
func TestRemoteWriteUnreachable(t *testing.T) {
	r := startRedis(t, "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/api/v1/write"
	_ = l.Close()
	doc, out := runK6(t, "redis_basic.js", map[string]string{
		"REDIS_ADDR": r.addr, "SCENARIOS": "ping", "DURATION": "2s", "GRACE": "500ms", "VUS": "2",
		livemetrics.EnvURL: dead, livemetrics.EnvInterval: "200ms", livemetrics.EnvBearerToken: "t0ken-s3cret",
	})
	if doc.Partial || len(doc.Scenarios) != 1 || doc.Scenarios[0].Calls == 0 {
		t.Fatalf("document partial %v scenarios %+v", doc.Partial, doc.Scenarios)
	}
	if n := strings.Count(out, "remote write to"); n != 1 {
		t.Errorf("failure logged %d times, want once:\n%s", n, out)
	}
	noSecret(t, "t0ken-s3cret", out)
}

// A misconfigured endpoint (credentials in the URL) turns live metrics off with a warning that
// does not quote the URL; the load runs.
func TestRemoteWriteBadURL(t *testing.T) {
	r := startRedis(t, "")
	out := filepath.Join(t.TempDir(), "result.json")
	cmd := exec.Command(k6Bin, "run", "-q", "--summary-mode", "disabled", "--out", "benchrun="+out,
		filepath.Join(repoRoot, "scripts/k6", "redis_basic.js"))
	cmd.Env = append(os.Environ(), "REDIS_ADDR="+r.addr, "SCENARIOS=ping", "DURATION=1s", "GRACE=200ms", "VUS=1",
		livemetrics.EnvURL+"=http://user:pa55w0rd@127.0.0.1:1/api/v1/write")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("k6: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "live metrics are off") {
		t.Errorf("no warning:\n%s", b)
	}
	noSecret(t, "pa55w0rd", string(b))
	if doc := readDoc(t, out); doc.Scenarios[0].Calls == 0 {
		t.Fatal("no calls")
	}
}
