package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	liveprogress "github.com/benchrun/benchrun/internal/progress"
)

// TestRunLiveAbort: benchrun run on a real redis-server and real k6 stops a 3 × 30 s load a
// few seconds in when an abortOnFail threshold (p99 under 1 µs) is broken live after its
// delayAbortEval (2s), keeps the partial results, and exits 3 naming the threshold and the
// observed value; the runners' progress files hold the live documents.
func TestRunLiveAbort(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", withThresholds("30s", "{expr: 'p99 < 0.001', abortOnFail: true, delayAbortEval: 2s}")),
		"--runners", "2", "--output", "markdown", "--out-dir", out)
	start := time.Now()
	code := c.run(t)
	took := time.Since(start)
	if code != exitThresholds {
		t.Fatalf("exit code %d, want %d\n%s", code, exitThresholds, c.stderr.String())
	}
	stderr := c.stderr.String()
	m := regexp.MustCompile(`AbortedOnThreshold: abortOnFail threshold 'p99 < 0.001' broken live on scenario ping: observed [0-9.]+, limit 0.001 \(after ([0-9.]+)s of load`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr does not name the broken threshold:\n%s", stderr)
	}
	if after, _ := strconv.ParseFloat(m[1], 64); after < 2 || after > 6 {
		t.Errorf("aborted after %ss of load, want just after the 2s delay", m[1])
	}
	if took > 45*time.Second {
		t.Errorf("benchrun took %s: the 90 s load was not stopped early", took)
	}
	doc := readDoc(t, filepath.Join(out, "merged.json"))
	if !doc.Partial || len(doc.Scenarios) == 0 || doc.Scenarios[0].Calls == 0 {
		t.Fatalf("merged.json: partial=%v scenarios=%d: the calls made before the abort must be kept", doc.Partial, len(doc.Scenarios))
	}
	if !strings.Contains(c.stdout.String(), "Verdict: Failed") {
		t.Errorf("stdout lacks the verdict:\n%s", c.stdout.String())
	}
	if v, err := os.ReadFile(filepath.Join(out, "verdict.md")); err != nil || !strings.Contains(string(v), "AbortedOnThreshold: abortOnFail threshold 'p99 < 0.001'") {
		t.Errorf("verdict.md does not say why the run was aborted: %v\n%s", err, v)
	}
	b, err := os.ReadFile(filepath.Join(out, "runner-0.progress.json"))
	if err != nil {
		t.Fatal(err)
	}
	pd, err := liveprogress.Decode(string(b))
	if err != nil || len(pd.Scenarios) == 0 || pd.Scenarios[0].Calls == 0 || pd.Scenarios[0].ElapsedSeconds <= 0 || len(pd.Scenarios[0].Buckets) == 0 {
		t.Fatalf("progress file: %v %s", err, b)
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestRunLiveAbortHeld: an abortOnFail threshold that holds lets the load run to its end
// (exit 0, complete results).
func TestRunLiveAbortHeld(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", withThresholds("3s", "{expr: 'p99 < 60000', abortOnFail: true}", "{expr: 'errorRate <= 0.5', abortOnFail: true}")),
		"--output", "markdown", "--out-dir", out)
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit code %d\n%s", code, c.stderr.String())
	}
	if strings.Contains(c.stderr.String(), "AbortedOnThreshold") {
		t.Errorf("aborted although the thresholds held:\n%s", c.stderr.String())
	}
	completeDoc(t, out, 3)
}

// TestWatchLiveLine: benchrun watch's line shows live calls/s per scenario while Running.
func TestWatchLiveLine(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{}
	run.Name = "r"
	run.Status.Phase = v1alpha1.PhaseRunning
	run.Status.Live = &v1alpha1.LiveStatus{Runners: 2, Scenarios: []v1alpha1.LiveScenario{{Name: "get", Calls: 10, CPS: 12345.6, P99Ms: 1.94},
		{Name: "set", Calls: 5, Errors: 2, CPS: 9876, P99Ms: 2}}}
	line := progressLine(run)
	if !strings.Contains(line, "live get 12,346 calls/s p99 1.94ms, set 9,876 calls/s p99 2ms 2 errors") {
		t.Fatalf("line %q", line)
	}
	run.Status.Phase = v1alpha1.PhaseCollecting
	if strings.Contains(progressLine(run), "live") {
		t.Fatal("live figures shown after the load")
	}
}
