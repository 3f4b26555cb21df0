package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// ratioRun: a constant rate, a ramp and a search, all well within what redis-server serves.
const ratioRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-ratio
spec:
  target:
    redis: {mode: single}
  load:
    workers: 1
    tasksPerWorker: 2
    duration: 4s
    scenarios:
    - {name: constant, type: redis.get, keySpace: 1000, arrival: {rate: 1000, maxVUs: 8}}
    - name: ramp
      type: redis.get
      keySpace: 1000
      arrival: {maxVUs: 8, stages: [{target: 1000, duration: 3s}, {target: 1000, duration: 2s}]}
    - name: search
      type: redis.get
      keySpace: 1000
      arrival: {maxVUs: 8, search: {startRate: 200, factor: 2, stepDuration: 2s, maxSteps: 3, maxP99: 500ms, stopAfter: 0}}
`

// TestRunAchievedRatio: with real k6 and redis-server keeping up, achievedRatio is within 2 %
// of 1 for a constant rate and for each search step (each a constant rate), and not given
// (0, "-") for a ramp or a search as a whole, where the trimmed CPS over the mean target rate
// means nothing (it was about 1.22-1.25).
func TestRunAchievedRatio(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", ratioRun), "--runners", "2", "--output", "markdown", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	sum := readSummary(t, out)
	constant, ramp, search := sum.Scenarios[0], sum.Scenarios[1], sum.Scenarios[2]
	if o := constant.Open; o == nil || o.AchievedRatio < 0.98 || o.AchievedRatio > 1.02 {
		t.Errorf("constant rate: %+v (CPS %v), want a ratio within 2 %% of 1", o, constant.CPS)
	}
	t.Logf("ramp: CPS %v over a mean target of %v/s (%.4f, not reported)", ramp.CPS, ramp.Open.TargetRate, ramp.CPS/ramp.Open.TargetRate)
	if o := ramp.Open; o == nil || o.AchievedRatio != 0 {
		t.Errorf("ramp: %+v, want no ratio", o)
	}
	if o := search.Open; o == nil || o.AchievedRatio != 0 || o.Search == nil || len(o.Search.Steps) != 3 {
		t.Fatalf("search: %+v", o)
	}
	for _, st := range search.Open.Search.Steps {
		t.Logf("%s: %v/s target, %v CPS, ratio %v", st.Name, st.TargetRate, st.CPS, st.AchievedRatio)
		if st.AchievedRatio < 0.98 || st.AchievedRatio > 1.02 {
			t.Errorf("%s: ratio %v, want within 2 %% of 1", st.Name, st.AchievedRatio)
		}
	}
	var rampRow, stepHeader string
	for _, l := range strings.Split(c.stdout.String(), "\n") {
		if f := strings.Fields(strings.ReplaceAll(l, "|", " ")); len(f) > 3 && f[0] == "ramp" {
			rampRow = l
		} else if len(f) > 3 && f[0] == "step" {
			stepHeader = strings.Join(f[:4], " ")
		}
	}
	if !strings.Contains(rampRow, " - ") || stepHeader != "step target/s CPS ratio" {
		t.Errorf("markdown: ramp row %q (want the ratio shown as -), step table header %q", rampRow, stepHeader)
	}
}
