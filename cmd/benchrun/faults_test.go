package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// faultRun is a Redis run with one pause of the master: redis target fields, load duration,
// the pause's offset and duration.
const faultRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-fault
spec:
  target:
    redis: {%s}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: %s
    scenarios:
    - {name: set, type: redis.set, keySpace: 1000}
  faults:
  - {scenario: set, offset: %s, action: pause, duration: %s, role: master}
`

// readFaults reads faults.json of a local run, which must have n entries.
func readFaults(t *testing.T, out string, n int) []v1alpha1.FaultStatus {
	t.Helper()
	var fs []v1alpha1.FaultStatus
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, faultsFile))), &fs); err != nil {
		t.Fatal(err)
	}
	if len(fs) != n {
		t.Fatalf("faults.json: %+v", fs)
	}
	return fs
}

// singlePauseRun pauses a single redis-server for 1 s, 3 s into each of two scenarios: a
// closed loop (4 VUs) and an open model (2,000 calls/s).
const singlePauseRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-fault-single
spec:
  target:
    redis: {mode: single}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 8s
    scenarios:
    - {name: set, type: redis.set, keySpace: 1000}
    - {name: open, type: redis.set, keySpace: 1000, arrival: {rate: 2000, maxVUs: 64}}
  faults:
  - {scenario: set, offset: 3s, action: pause, duration: 1s, role: master}
  - {scenario: open, offset: 3s, action: pause, duration: 1s, role: master}
`

// TestRunFaultPauseSingle: `benchrun run` pauses a single redis-server (SIGSTOP) for 1 s, 3 s
// into each scenario; the per-second timelines around the pauses (merged from two k6 runners)
// show the gap. Closed loop: the calls completed in the paused second collapse and the
// slowest call of the seconds around it took the pause (too few calls, one per VU, to move the
// p99). Open model: the calls due during the pause are answered after it, so the p99 (from each
// call's intended start) of the second after the pause is about the pause. report.md has the
// per-second tables.
func TestRunFaultPauseSingle(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", singlePauseRun), "--runners", "2", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	faults := readFaults(t, out, 2)
	for _, f := range faults {
		if f.Outcome != v1alpha1.FaultApplied || f.PausedTime == nil || f.ResumedTime == nil || f.LateMs > 1000 {
			t.Fatalf("fault: %+v", f)
		}
		if d := f.ResumedTime.Sub(f.PausedTime.Time); d < time.Second || d > 1500*time.Millisecond {
			t.Errorf("fault %d: paused for %s, want 1s", f.Index, d)
		}
		if len(f.Timeline) != 15 {
			t.Fatalf("fault %d: timeline %+v", f.Index, f.Timeline)
		}
		t.Logf("fault %d timeline: %+v", f.Index, f.Timeline)
		if before := f.Timeline[4]; before.Calls < 1000 || before.P99Micros > 200_000 || before.Errors > 0 {
			t.Errorf("fault %d: the second before the pause: %+v", f.Index, before)
		}
	}
	// The 1 s pause covers the end of second 0 and the start of second +1: one of them is at
	// least half paused; the calls held complete when it ends, in second +1 or +2.
	closed, open := faults[0].Timeline, faults[1].Timeline
	if gap := min(closed[5].Calls, closed[6].Calls); gap >= closed[4].Calls*3/4 {
		t.Errorf("closed loop: the paused seconds completed %d and %d calls, the one before %d", closed[5].Calls, closed[6].Calls, closed[4].Calls)
	}
	if worst := max(closed[5].MaxMicros, closed[6].MaxMicros, closed[7].MaxMicros); worst < 900_000 || worst > 1_500_000 {
		t.Errorf("closed loop: the slowest call around the pause took %d µs, want about 1 s", worst)
	}
	if p99 := max(open[5].P99Micros, open[6].P99Micros, open[7].P99Micros); p99 < 500_000 || p99 > 1_500_000 {
		t.Errorf("open model: the p99 around the pause is %d µs, want most of 1 s", p99)
	}
	if md := mustRead(t, filepath.Join(out, "report.md")); !strings.Contains(md, "| second | calls | errors | p99 (ms) | max (ms) |") ||
		!strings.Contains(md, "| 0 (fault) |") || !strings.Contains(md, "pause 1s") {
		t.Errorf("report.md:\n%s", md)
	}
	checkMergedLatencyTimelines(t, out)
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// checkMergedLatencyTimelines: merged.json's latency timelines (two k6 runners) are the
// merge of the runners' own and count every call in the second it started (sent, for the open
// model), as the merged start timeline does; the pause shows in the closed loop's max.
func checkMergedLatencyTimelines(t *testing.T, out string) {
	t.Helper()
	merged, err := results.DecodeFile(filepath.Join(out, "merged.json"))
	if err != nil {
		t.Fatal(err)
	}
	var runners []*results.Document
	for i := range 2 {
		doc, err := results.DecodeFile(filepath.Join(out, fmt.Sprintf("runner-%d.json", i)))
		if err != nil {
			t.Fatal(err)
		}
		runners = append(runners, doc)
	}
	again, err := results.Merge(runners...)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range merged.Scenarios {
		lt, st := s.LatencyTimeline, s.Starts
		if lt == nil || !reflect.DeepEqual(lt, again.Scenarios[i].LatencyTimeline) || lt.BucketMs != st.BucketMs {
			t.Fatalf("%s: latency timeline %+v is not the merge of the runners' (%+v)", s.Name, lt, again.Scenarios[i].LatencyTimeline)
		}
		top := 0.0
		for _, p := range lt.Points() {
			if n := st.Counts[(p.StartUnixMs-st.StartUnixMs)/st.BucketMs]; p.Calls != n {
				t.Errorf("%s: %d calls in the interval at %d ms, %d starts", s.Name, p.Calls, p.StartUnixMs, n)
			}
			top = max(top, p.MaxMs)
		}
		t.Logf("%s: %d intervals of %d ms, largest max %.0f ms", s.Name, len(lt.Points()), lt.BucketMs, top)
		if top < 900 {
			t.Errorf("%s: no interval's max shows the 1 s pause (%.0f ms)", s.Name, top)
		}
	}
}

// TestRunFaultPauseHAFailover: `benchrun run` of redis mode ha pauses the master for 12 s, longer
// than the sentinels' down-after (5 s): they fail over, and the fault probe (benchrun writing
// a marker through the master endpoint every 50 ms) measures the failover — writes fail from
// the pause until the new master acknowledges one, well before the old master is continued.
func TestRunFaultPauseHAFailover(t *testing.T) {
	needRedis(t)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", fmt.Sprintf(faultRun, "mode: ha, replicas: 2, sentinels: 3", "25s", "3s", "12s")),
		"--runners", "2", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	f := readFaults(t, out, 1)[0]
	if f.Outcome != v1alpha1.FaultApplied || f.Failover == nil {
		t.Fatalf("fault: %+v", f)
	}
	fo := f.Failover
	t.Logf("failover: %+v; timeline: %+v", *fo, f.Timeline)
	// The probe's writes time out after 2 s each, so it sees the new master up to 2 s late.
	if !fo.Recovered || fo.Milliseconds < 5000 || fo.Milliseconds > 11_000 || fo.FailedWrites == 0 || fo.AckedBefore < 20 || fo.LostBefore < 0 {
		t.Errorf("failover: %+v, want recovered by the sentinels' failover (5 s down-after + election), before the 12 s pause ends", *fo)
	}
	if len(f.Timeline) != 15 || f.Timeline[4].Calls == 0 {
		t.Errorf("timeline: %+v", f.Timeline)
	}
	if md := mustRead(t, filepath.Join(out, "report.md")); !strings.Contains(md, "| 0 | set | 3s | pause 12s | master |") {
		t.Errorf("report.md:\n%s", md)
	}
	if _, err := os.Stat(filepath.Join(out, "merged.json")); err != nil {
		t.Error(err)
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestRunFaultKillHeTu: `benchrun run` kills the HeTu server (its whole namespace: unshare, sh,
// chroot'd Python workers) 3 s into the load and starts it again on the same port: the fault is
// applied, the timeline shows the calls collapse, and nothing is left afterwards.
func TestRunFaultKillHeTu(t *testing.T) {
	needRedis(t)
	needHeTu(t)
	file := writeFile(t, "hetu.yaml", `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-fault-hetu
spec:
  target:
    hetu:
      workers: 1
      backend:
        redis: {mode: single}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 12s
    scenarios:
    - {name: hello_world, type: hetu.hello_world}
  faults:
  - {scenario: hello_world, offset: 3s, action: kill, role: hetu}
`)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--out-dir", out)
	code := c.run(t)
	f := readFaults(t, out, 1)[0]
	t.Logf("exit code %d; fault: %s; timeline: %+v", code, f.Message, f.Timeline)
	if f.Outcome != v1alpha1.FaultApplied || !strings.Contains(f.Message, "killed (SIGKILL) and started again") || len(f.Timeline) != 15 {
		t.Fatalf("fault: %+v", f)
	}
	ok := func(s v1alpha1.FaultSecond) int64 { return s.Calls - s.Errors }
	if before := f.Timeline[4]; before.Calls == 0 || min(ok(f.Timeline[5]), ok(f.Timeline[6])) >= ok(before) {
		t.Errorf("no collapse after the kill: %+v then %+v, %+v", before, f.Timeline[5], f.Timeline[6])
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestRunFaultInterruptedDuringPause: SIGINT while the master is paused stops the run at once
// (the interrupted exit code, partial results): the runners are not kept loading until the pause or
// the probe's read-back ends, the paused server is continued and stopped, and faults.json says
// the pause was applied and the later fault was not.
func TestRunFaultInterruptedDuringPause(t *testing.T) {
	needRedis(t)
	run := fmt.Sprintf(faultRun, "mode: ha, replicas: 1, sentinels: 1", "30s", "2s", "20s") +
		"  - {scenario: set, offset: 25s, action: kill, role: replica}\n"
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", run), "--out-dir", out)
	done := c.startRunners(t, 60*time.Second)
	for !strings.Contains(c.stderr.String(), "fault 0 (pause master") {
		select {
		case err := <-done:
			t.Fatalf("benchrun ended early: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	time.Sleep(time.Second)
	sent := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("benchrun did not stop within 60s of SIGINT")
	}
	t.Logf("stopped %s after SIGINT; stderr:\n%s", time.Since(sent).Round(time.Millisecond), c.stderr.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit: %v, want code %d", err, exitInterrupted)
	}
	if d := time.Since(sent); d > 25*time.Second {
		t.Errorf("took %s to stop: the runners kept loading until the pause ended", d)
	}
	faults := readFaults(t, out, 2)
	if faults[0].Outcome != v1alpha1.FaultApplied || faults[1].Outcome != v1alpha1.FaultNotApplied {
		t.Errorf("faults: %+v", faults)
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}
