package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// killThenPauseRun kills a single redis-server 2 s into the load and pauses it for 3 s at 6 s.
const killThenPauseRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-fault-attrib
spec:
  target:
    redis: {mode: single}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 11s
    scenarios:
    - {name: set, type: redis.set, keySpace: 1000}
  faults:
  - {scenario: set, offset: 2s, action: kill, role: master}
  - {scenario: set, offset: 6s, action: pause, duration: 3s, role: master}
`

// TestRunFailoverAttribution: `benchrun run` with real redis-server and k6 applies a kill
// (the server is back at once) and, 4 s later, a 3 s pause. The pause's outage is the pause's
// (it began within 2 s of it, about 3 s long); for the kill it is a later outage, shown apart,
// never the kill's failover (which before took any outage in the 30 s after a fault).
func TestRunFailoverAttribution(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", killThenPauseRun), "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	fs := readFaults(t, out, 2)
	kill, pause := fs[0].Failover, fs[1].Failover
	t.Logf("kill: %+v (later %+v); pause: %+v", kill, kill.LaterOutage, pause)
	if kill == nil || kill.MeasuredBy != v1alpha1.FailoverByProbe || kill.Milliseconds > 2000 || !kill.Recovered {
		t.Errorf("the kill's failover: %+v", kill)
	}
	if l := kill.LaterOutage; l == nil || l.BeganAfterMs < 3000 || l.BeganAfterMs > 5000 || l.Milliseconds < 2500 || l.Milliseconds > 4000 {
		t.Errorf("the pause's outage, seen from the kill: %+v, want a later outage about 4 s after, about 3 s long", l)
	}
	if pause == nil || pause.Milliseconds < 2500 || pause.Milliseconds > 4000 || pause.FailedWrites == 0 || pause.LaterOutage != nil {
		t.Errorf("the pause's failover: %+v", pause)
	}
	if md := mustRead(t, filepath.Join(out, "report.md")); !strings.Contains(md, "| probe | began +") {
		t.Errorf("report.md: no later outage in the Faults table:\n%s", md)
	}
}

// TestRunFailoverThroughHeTu: a HeTu server killed, then paused 3 s, under hetu.hello_world on
// a Redis back end is measured through the load (the probe writes to Redis directly and never
// sees HeTu's outage): failover measuredBy load, from the scenario's per-second timeline; the
// pause's is about 3 s (it was 0 ms before).
func TestRunFailoverThroughHeTu(t *testing.T) {
	needRedis(t)
	needHeTu(t)
	file := writeFile(t, "hetu.yaml", `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-fault-hetu-load
spec:
  target:
    hetu:
      workers: 1
      backend:
        redis: {mode: single}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 15s
    scenarios:
    - {name: hello_world, type: hetu.hello_world}
  faults:
  - {scenario: hello_world, offset: 2s, action: kill, role: hetu}
  - {scenario: hello_world, offset: 9s, action: pause, duration: 3s, role: hetu}
`)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--out-dir", out)
	code := c.run(t)
	fs := readFaults(t, out, 2)
	f, pause := fs[0], fs[1]
	t.Logf("exit code %d; kill: failover %+v; timeline %+v", code, f.Failover, f.Timeline)
	t.Logf("pause: failover %+v; timeline %+v", pause.Failover, pause.Timeline)
	if fo := pause.Failover; fo == nil || fo.MeasuredBy != v1alpha1.FailoverByLoad || !fo.Recovered || fo.Milliseconds < 2000 || fo.Milliseconds > 5000 {
		t.Errorf("HeTu paused 3 s: failover %+v, want about 3 s through the load (the probe to its Redis back end saw nothing)", fo)
	}
	if f.Outcome != v1alpha1.FaultApplied || f.Failover == nil || f.Failover.MeasuredBy != v1alpha1.FailoverByLoad {
		t.Fatalf("fault: %+v", f)
	}
	// Whether the kill stopped HeTu for whole seconds depends on how fast it restarts: look at
	// the seconds after the kill's and before the pause's (7 s later; the pause's outage is the
	// kill's later outage, never its failover).
	base := f.Timeline[4].Calls - f.Timeline[4].Errors
	var dead bool // a second of the load after the fault's with under 10 % of the successes before it
	for _, s := range f.Timeline {
		if s.Second >= 1 && s.Second < 7 {
			dead = dead || (s.Calls > 0 && (s.Calls-s.Errors)*10 < base)
		}
	}
	if dead != (f.Failover.Milliseconds > 0) {
		t.Errorf("seconds of outage after the kill: %v, failover %+v", dead, f.Failover)
	}
	if l := f.Failover.LaterOutage; l == nil || l.BeganAfterMs < 6000 || l.BeganAfterMs > 8000 {
		t.Errorf("the pause's outage, seen from the kill: %+v, want a later outage about 7 s after", l)
	}
}
