package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// rampThenPauseRun is issue 25's case: a 2 × 4 s ramp (load.duration 4 s), then a closed
// scenario with a 1 s pause of the single redis-server at offset 2 s. The ramp lasts 8 s, so the
// steady scenario starts at 8 s + 2 s grace = 10 s and the pause is due at 12 s; before the fix
// the fault windows took the ramp for 4 s and paused the server at 8 s, during the ramp's
// grace, before the steady scenario began, and recorded it Applied.
const rampThenPauseRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-fault-ramp
spec:
  target:
    redis: {mode: single}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 4s
    scenarios:
    - {name: ramp, type: redis.set, keySpace: 1000, arrival: {stages: [{target: 400, duration: 4s}, {target: 800, duration: 4s}], maxVUs: 16}}
    - {name: steady, type: redis.set, keySpace: 1000}
  faults:
  - {scenario: steady, offset: 2s, action: pause, duration: 1s, role: master}
`

// TestRunFaultAfterRamp: with real k6 runners and a real redis-server, the pause lands 2 s into
// the steady scenario: in its per-second timeline the seconds -5 and -4 (before the scenario
// began) have no calls, the seconds -2 and -1 have calls, and the paused seconds collapse.
func TestRunFaultAfterRamp(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", rampThenPauseRun), "--runners", "2", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	f := readFaults(t, out, 1)[0]
	if f.Outcome != v1alpha1.FaultApplied || f.PausedTime == nil || f.LateMs > 500 || len(f.Timeline) != 15 {
		t.Fatalf("fault: %+v", f)
	}
	tl := f.Timeline
	t.Logf("timeline of steady around the pause: %+v", tl)
	if tl[0].Calls != 0 || tl[1].Calls != 0 {
		t.Errorf("seconds -5 and -4 (before the steady scenario began at +10 s) have calls %d, %d: the pause did not land 2 s into it", tl[0].Calls, tl[1].Calls)
	}
	if tl[3].Calls == 0 || tl[4].Calls < 100 {
		t.Errorf("seconds -2 and -1 have calls %d, %d: the steady scenario was not running", tl[3].Calls, tl[4].Calls)
	}
	if gap := min(tl[5].Calls, tl[6].Calls); gap >= tl[4].Calls*3/4 {
		t.Errorf("the paused seconds completed %d and %d calls, the one before %d", tl[5].Calls, tl[6].Calls, tl[4].Calls)
	}
	if d := f.ResumedTime.Sub(f.PausedTime.Time); d < time.Second || d > 1500*time.Millisecond {
		t.Errorf("paused for %s, want 1s", d)
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}
