package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/promtest"
)

const liveRun = `apiVersion: v1
kind: Secret
metadata:
  name: prom-auth
stringData:
  token: "T0ken-n0t-in-logs"
---
apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-live
spec:
  target:
    redis: {mode: single}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 3s
    scenarios:
    - name: ping
      type: redis.ping
  collect:
    prometheusRemoteWriteURL: %q
    prometheusRemoteWrite:
      bearerTokenSecretRef: {name: prom-auth, key: token}
      intervalSeconds: 1
`

// TestRunStreamsToPrometheus: benchrun run with spec.collect.prometheusRemoteWriteURL streams
// both runners' live metrics to a real Prometheus; their calls add up to the merged result.
func TestRunStreamsToPrometheus(t *testing.T) {
	needRedis(t)
	prom := promtest.Start(t)
	file := writeFile(t, "run.yaml", fmt.Sprintf(liveRun, prom.RemoteWriteURL()))
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--output", "json", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	doc := completeDoc(t, out, 1)
	want := float64(doc.Scenarios[0].Calls)
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := prom.Value(`sum(benchrun_calls_total{benchmarkrun="cli-live", scenario="ping", target="redis/single"})`)
		if err == nil && got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus has %v calls (%v), the merged document %v", got, err, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if s, err := prom.Query(`count by (runner) (benchrun_calls_total{benchmarkrun="cli-live"})`); err != nil || len(s) != 2 {
		t.Errorf("runners in Prometheus: %v (%v), want 2", s, err)
	}
	if strings.Contains(c.stderr.String()+c.stdout.String(), "T0ken-n0t-in-logs") {
		t.Error("the bearer token was printed")
	}
}

// A remote-write URL with credentials is refused before anything starts.
func TestRunRemoteWriteFlagRefused(t *testing.T) {
	c := newCLI(t, nil, "run", "-f", "x.yaml", "--prometheus-remote-write-url", "http://admin:pw@prom:9090/api/v1/write")
	if code := c.run(t); code != exitUsage || !strings.Contains(c.stderr.String(), "must not hold credentials") ||
		strings.Contains(c.stderr.String(), "admin:pw") {
		t.Fatalf("exit %d, stderr %s", code, c.stderr.String())
	}
}
