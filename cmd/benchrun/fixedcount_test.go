package main

import (
	"path/filepath"
	"testing"
	"time"
)

// fixedCountRun: 1,001 SETs (odd: split 334/334/333 over 3 runners) limited to 60 s.
const fixedCountRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-fixed-count
spec:
  target:
    redis: {mode: single}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 60s
    scenarios:
    - {name: set, type: redis.set, keySpace: 1000, requests: 1001}
`

// TestRunFixedCountEndsWhenDone: `benchrun run` with real k6 and redis-server: a scenario of
// 1,001 requests with a 60 s duration ends in a few seconds (runner 0's server-side counts no
// longer wait out the duration: they end once the server served every runner's calls), and
// benchrun's and the server's counts are exact. A scenario after it would keep its planned
// start (faults and timelines are timed by it).
func TestRunFixedCountEndsWhenDone(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", fixedCountRun), "--runners", "3", "--out-dir", out)
	began := time.Now()
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	took := time.Since(began)
	doc := readDoc(t, filepath.Join(out, "merged.json"))
	want := map[string]int64{"set": 1001}
	for _, sc := range doc.Scenarios {
		t.Logf("%s: %d calls, %d errors, server %v, %s to %s", sc.Name, sc.Calls, sc.Errors, sc.ServerCalls,
			sc.FirstStart.Format("15:04:05.000"), sc.LastEnd.Format("15:04:05.000"))
		if sc.Calls != want[sc.Name] || sc.Errors != 0 || sc.ServerCalls[sc.Command] != want[sc.Name] {
			t.Errorf("%s: %d calls (%d errors), server %v, want %d", sc.Name, sc.Calls, sc.Errors, sc.ServerCalls, want[sc.Name])
		}
	}
	if len(doc.Scenarios) != 1 || took > 20*time.Second {
		t.Errorf("the run took %s: the fixed-count scenarios waited out their duration", took)
	}
	t.Logf("run took %s", took)
}
