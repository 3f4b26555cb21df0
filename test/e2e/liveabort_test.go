//go:build e2e

package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// (l) live abortOnFail on real pods: a 2 × 2 min load whose live p99 breaks 'p99 < 0.001'
// (after delayAbortEval 20s, so status.live shows a few publishes first) is stopped early — the runners publish their progress into
// their state ConfigMaps, status.live shows it, the manager writes stopAt, the runners'
// k6 stop gracefully and store partial documents — and the run ends Failed with reason
// AbortedOnThreshold, results and report kept.
func TestAbortOnFail(t *testing.T) {
	ns := newNamespace(t, "abort")
	manifest := `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: abort
spec:
  target:
    redis:
      mode: single
  load:
    workers: 2
    tasksPerWorker: 4
    duration: 2m
    scenarios:
    - name: ping
      type: redis.ping
    - name: get
      type: redis.get
    runners:
      parallelism: 2
  thresholds:
  - {expr: 'p99 < 0.001', abortOnFail: true, delayAbortEval: 20s}
  cleanup:
    policy: Always
`
	apply(t, ns, manifest)
	run := waitPhase(t, ns, "abort", runTimeout, v1alpha1.PhaseRunning)
	running := time.Now()
	sawLive := false
	for run.Status.Phase == v1alpha1.PhaseRunning && time.Since(running) < 3*time.Minute {
		if l := run.Status.Live; l != nil && l.Runners > 0 && len(l.Scenarios) > 0 && l.Scenarios[0].CPS > 0 {
			if !sawLive {
				t.Logf("status.live: %d runners, %+v", l.Runners, l.Scenarios)
			}
			sawLive = true
		}
		time.Sleep(time.Second)
		run = getRun(t, ns, "abort")
	}
	run = waitPhase(t, ns, "abort", runTimeout, v1alpha1.PhaseFailed)
	took := time.Since(running)
	st := run.Status
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != v1alpha1.ReasonAbortedOnThreshold || !strings.Contains(c.Message, "'p99 < 0.001' broken live on scenario ping: observed") {
		t.Fatalf("conditions %s", conditionsText(run))
	}
	if m := regexp.MustCompile(`after ([0-9.]+)s of load`).FindStringSubmatch(c.Message); m == nil {
		t.Errorf("message without the load time: %s", c.Message)
	} else if after, _ := strconv.ParseFloat(m[1], 64); after < 20 {
		t.Errorf("aborted after %ss of load, before delayAbortEval (20s)", m[1])
	}
	if took > 90*time.Second {
		t.Errorf("the 4 min load ended %s after Running: not stopped early", took.Round(time.Second))
	}
	if !sawLive {
		t.Error("status.live never showed live figures while Running")
	}
	if st.Verdict != v1alpha1.VerdictFailed || !st.Partial || len(st.Results) == 0 || st.Results[0].Calls == 0 {
		t.Fatalf("verdict %s partial %v results %+v", st.Verdict, st.Partial, st.Results)
	}
	if r := st.Runners; r == nil || r.Succeeded != 2 {
		t.Errorf("runners did not stop cleanly (state done with their partial documents): %+v", st.Runners)
	}
	checkReport(t, ns, run)
	metric("abort_on_fail_seconds_after_running", "%.1f", took.Seconds())
}
