//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestOpenSearchStopsEarly: a ycsb scenario at an arrival rate and a saturation search that
// stops early, on Redis single with two runner pods, through the operator's plan path and the
// runner image's k6: DEBUG SLEEP 0.002 calls saturate the server below 500/s, so the 7-step
// search (100/s doubling, 2 s each) stops once a step breaks p99 <= 100ms. Each runner judges
// its own calls: status reports the earliest runner's stop (after which step, why), every
// later step is cut (it ran on some runners only, or only until the stop), and the last step
// never began: a runner's share of step 5 (800/s) alone exceeds what the server can answer, so
// every runner stops by then. (Measured: one runner stopped after step 2 at p99 124 ms, the
// other, alone on the server from then on, after step 5.)
func TestOpenSearchStopsEarly(t *testing.T) {
	ns := newNamespace(t, "open-stop")
	apply(t, ns, `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: open-stop
spec:
  target:
    redis:
      mode: single
      config:
        enable-debug-command: "yes"
  load:
    duration: 4s
    scenarios:
    - name: ycsb_rate
      type: ycsb
      keySpace: 1000
      ycsb: {readProportion: 0.9, updateProportion: 0.1, insertProportion: 0}
      arrival: {rate: 400, maxVUs: 8}
    - name: search
      type: redis.command
      redisCommand: {command: "DEBUG SLEEP 0.002"}
      arrival:
        maxVUs: 16
        search: {startRate: 100, factor: 2, stepDuration: 2s, maxSteps: 7, maxP99: 100ms}
    runners:
      parallelism: 2
  cleanup:
    policy: OnSuccess
`)
	run := waitPhase(t, ns, "open-stop", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if run.Status.Partial || len(run.Status.Results) != 2 {
		t.Fatalf("partial %v (%v), %d results", run.Status.Partial, run.Status.PartialReasons, len(run.Status.Results))
	}
	ycsb, search := run.Status.Results[0], run.Status.Results[1]
	t.Logf("ycsb_rate: %d calls, CPS %.2f, open %+v", ycsb.Calls, ycsb.CPS, ycsb.Open)
	if o := ycsb.Open; o == nil || o.TargetRate != 400 || o.AchievedRatio < 0.9 || o.AchievedRatio > 1.1 || ycsb.Errors != 0 {
		t.Errorf("ycsb_rate: open %+v errors %d; want 400/s achieved within 10 %%", o, ycsb.Errors)
	}
	o := search.Open
	if o == nil || o.Search == nil {
		t.Fatalf("search: %+v", o)
	}
	s := o.Search
	t.Logf("search stopped after step %d (%s), best %v/s, steps %+v", s.StoppedAfter, s.StopReason, s.BestRate, s.Steps)
	k := int(s.StoppedAfter)
	if k < 1 || k > 5 || len(s.Steps) <= k || len(s.Steps) > 6 || !strings.HasPrefix(s.StopReason, fmt.Sprintf("step-%02d: ", k)) {
		t.Fatalf("search: stopped after %d (%q) with %d steps; want an early stop by step 5, step 7 never begun", k, s.StopReason, len(s.Steps))
	}
	for i, st := range s.Steps {
		if st.Cut != (i >= k) || (st.Cut && st.Passed) {
			t.Errorf("step %d: cut %v passed %v; want the steps after %d cut (never passed), the others not", i+1, st.Cut, st.Passed, k)
		}
	}
}
