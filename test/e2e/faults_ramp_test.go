//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// rampThenPause is a ramp (arrival stages 2 × 4 s) then a 5 s steady scenario whose single
// Redis is paused 1 s, 2 s into it: the fault is due 8 s (ramp) + 2 s (grace) + 2 s = 12 s
// after the load starts. The plan's windows once used load.duration (5 s) for the ramp's
// length, so the fault fired at 9 s, before the steady scenario began at 10 s (issue 25).
const rampThenPause = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: ramp-pause
spec:
  target:
    redis: {mode: single}
  load:
    workers: 1
    tasksPerWorker: 4
    duration: 5s
    scenarios:
    - {name: ramp, type: redis.set, keySpace: 1000, arrival: {stages: [{target: 400, duration: 4s}, {target: 800, duration: 4s}], maxVUs: 16}}
    - {name: steady, type: redis.set, keySpace: 1000}
    runners: {parallelism: 1}
  faults:
  - {scenario: steady, offset: 2s, action: pause, duration: 1s, role: master}
  cleanup: {policy: OnSuccess}
`

// TestFaultAfterRamp (issue 25): on the real cluster the pause of a scenario that follows a
// ramp is applied at its intended second, 12 s after the load started (not 9 s, where
// load.duration put it), and the steady scenario's per-second timeline in status.faults has
// no calls in the seconds before it began and calls in the seconds before the fault. (The
// pause container stops the server up to seconds after that: see TestFaultPause.)
func TestFaultAfterRamp(t *testing.T) {
	ns := newNamespace(t, "fault-ramp")
	apply(t, ns, rampThenPause)
	run := waitPhase(t, ns, "ramp-pause", runTimeout, v1alpha1.PhaseSucceeded)
	f := appliedPause(t, run, "ramp-pause-g1-redis-master-0", time.Second)
	if run.Status.LoadStartTime == nil {
		t.Fatal("no loadStartTime")
	}
	at := f.AppliedTime.Sub(run.Status.LoadStartTime.Time)
	metric(t.Name(), "applied %s after the load started (due 12 s), late %d ms, timeline %+v", at.Round(time.Millisecond), f.LateMs, f.Timeline)
	if at < 11*time.Second || at > 14*time.Second {
		t.Errorf("the pause was applied %s after the load started, want about 12 s (2 s into the steady scenario)", at)
	}
	// The steady scenario began 2 s before the fault was due: the seconds -5 and -4 precede it
	// (-4 only when the fault was applied less than a second late, the timeline's second 0
	// being the one it was applied in).
	tl := f.Timeline
	if len(tl) != 15 || tl[0].Calls != 0 || (f.LateMs < 1000 && tl[1].Calls != 0) || tl[3].Calls == 0 || tl[4].Calls == 0 {
		t.Errorf("the steady scenario's timeline around the pause: %+v, want no calls at -5 and -4 (before it began) and calls at -2 and -1", tl)
	}
}
