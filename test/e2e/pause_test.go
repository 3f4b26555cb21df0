//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestFaultPause pauses Redis servers with SIGSTOP through the pause ephemeral container, in a
// namespace enforcing the restricted Pod Security Standard, one run after the other (side by
// side, the second run's load starved the sentinels of CPU):
//   - ha: the master of builtin HA (1 replica, 3 sentinels) paused for 20 s, longer than the
//     sentinels' down-after (5 s), 10 s into a 40 s write load: the sentinels promote the
//     replica, the fault probe reports the failover time and the acknowledged writes lost;
//   - single: one Redis paused for 1 s: its calls per second show the gap.
func TestFaultPause(t *testing.T) {
	t.Run("ha-master-20s", pauseHAMaster)
	t.Run("single-1s", pauseSingle)
}

// pauseRunManifest is a 40 s redis.set run of mode on the builtin provider pausing the master
// 10 s in for d, kept after success (policy Never) so its pods can be asked who is master.
func pauseRunManifest(name, mode, d string) string {
	return fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %s
spec:
  target:
    redis:
      mode: %s%s
      provider: builtin
  load:
    workers: 2
    tasksPerWorker: 4
    duration: 40s
    scenarios:
    - name: set
      type: redis.set
    runners:
      parallelism: 1
  faults:
  - {scenario: set, offset: 10s, action: pause, role: master, duration: %s}
  cleanup:
    policy: Never
`, name, mode, map[string]string{"ha": "\n      replicas: 1\n      sentinels: 3"}[mode], d)
}

// appliedPause checks the pause fault was applied on time to pod, and that the pause
// container reported stopping the server for about d.
func appliedPause(t *testing.T, run *v1alpha1.BenchmarkRun, pod string, d time.Duration) v1alpha1.FaultStatus {
	t.Helper()
	if len(run.Status.Faults) != 1 {
		t.Fatalf("status.faults: %+v", run.Status.Faults)
	}
	f := run.Status.Faults[0]
	t.Logf("fault: %+v", f)
	if f.Outcome != v1alpha1.FaultApplied || f.Pod != pod || f.AppliedTime == nil || f.LateMs > 2000 || f.Duration != d.String() {
		t.Fatalf("pause not applied on time to %s: %+v", pod, f)
	}
	if f.PausedTime == nil || f.ResumedTime == nil {
		t.Fatalf("no pause report from the pause container: %+v", f)
	}
	if got := f.ResumedTime.Sub(f.PausedTime.Time); got < d || got > d+time.Second {
		t.Errorf("paused for %v, want %v", got, d)
	}
	if start := f.PausedTime.Sub(f.AppliedTime.Time); start < 0 || start > 10*time.Second { // measured 0.6-5.6 s on the shared 2-core VM
		t.Errorf("the pause container stopped the server %v after the fault was applied", start)
	}
	return f
}

// pauseHAMaster: a 20 s pause of the builtin HA master makes the sentinels promote the
// replica (the old master comes back as a replica); failover and lost writes are measured.
// When no sentinel promoted it and one logged TILT mode (its event loop stalled for more
// than 2 s: the host starved it of CPU; it then acts on nothing for 30 s), the promotion is
// skipped with that reason after the measurements.
func pauseHAMaster(t *testing.T) {
	ns := newNamespace(t, "pause-ha")
	apply(t, ns, pauseRunManifest("ha-pause", "ha", "20s"))
	run := waitPhase(t, ns, "ha-pause", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	f := appliedPause(t, run, "ha-pause-g1-redis-master-0", 20*time.Second)
	tilt := sentinelEvents(t, ns)
	fo := f.Failover
	if fo == nil || !fo.Recovered || fo.Milliseconds < 5000 || fo.Milliseconds > 60_000 || fo.AckedBefore == 0 || fo.LostBefore < 0 {
		t.Fatalf("failover: %+v", fo)
	}
	res := run.Status.Results[0]
	metric(t.Name(), "failover=%dms failedWrites=%d ackedBefore=%d lostBefore=%d late=%dms pausedAfterApplied=%dms calls=%d errors=%d callsPerSecond=%v",
		fo.Milliseconds, fo.FailedWrites, fo.AckedBefore, fo.LostBefore, f.LateMs, f.PausedTime.Sub(f.AppliedTime.Time).Milliseconds(),
		res.Calls, res.Errors, f.CallsPerSecond)
	if md := checkReport(t, ns, run); !strings.Contains(md, "| pause 20s | master |") || !strings.Contains(md, "were stopped from") {
		t.Errorf("report has no pause in its Faults section:\n%s", md)
	}
	role := redisCLI(t, ns, "ha-pause-g1-redis-replica-0", "role")
	if !strings.HasPrefix(role, "master") && tilt != "" {
		t.Skipf("no promotion during the pause: sentinel %s entered TILT mode (the host starved it of CPU for more than 2 s)", tilt)
	}
	if !strings.HasPrefix(role, "master") {
		t.Errorf("the sentinels did not promote the replica during a 20 s pause of the master: role %q", role)
	}
	if role := redisCLI(t, ns, "ha-pause-g1-redis-master-0", "role"); !strings.HasPrefix(role, "slave") {
		t.Errorf("the paused master did not come back as a replica: role %q", role)
	}
	checkWritesFollowPromotion(t, ns, f)
}

// checkWritesFollowPromotion: the redis-role sidecars move the master label (and so the master
// Service) to the promoted replica promptly: writes through the Service come back at most 4 s
// after the first sentinel's +switch-master (12.1 s after the SIGSTOP against a promotion
// at 6.5 s before the sidecars asked the sentinels), and the pods end labelled by their roles.
func checkWritesFollowPromotion(t *testing.T, ns string, f v1alpha1.FaultStatus) {
	t.Helper()
	promoted := switchMasterTime(t, ns)
	if promoted.IsZero() {
		t.Error("no sentinel logged +switch-master")
		return
	}
	promotedMs := promoted.Sub(f.PausedTime.Time).Milliseconds()
	backMs := f.Failover.Milliseconds
	metric(t.Name(), "promotedAfterSIGSTOP=%dms writesBackAfterSIGSTOP=%dms writesBackAfterPromotion=%dms", promotedMs, backMs, backMs-promotedMs)
	if backMs-promotedMs > 4000 {
		t.Errorf("writes came back %d ms after the promotion (%d ms after the SIGSTOP)", backMs-promotedMs, backMs)
	}
	for pod, want := range map[string]string{"ha-pause-g1-redis-master-0": "replica", "ha-pause-g1-redis-replica-0": "master"} {
		if got := mustKubectl(t, "", "-n", ns, "get", "pod", pod, "-o", `jsonpath={.metadata.labels.bench\.benchrun\.io/redis-role}`); got != want {
			t.Errorf("pod %s labelled %q, want %q", pod, got, want)
		}
	}
}

// switchMasterTime is the earliest +switch-master a sentinel logged (zero: none). Redis logs
// "pid:X 25 Nov 2026 10:58:01.123 # +switch-master ..." in UTC.
func switchMasterTime(t *testing.T, ns string) time.Time {
	t.Helper()
	var first time.Time
	for i := range 3 {
		logs, _ := kubectl("", "-n", ns, "logs", fmt.Sprintf("ha-pause-g1-redis-sentinel-%d", i))
		for _, l := range strings.Split(logs, "\n") {
			fields := strings.Fields(l)
			if !strings.Contains(l, "+switch-master") || len(fields) < 5 {
				continue
			}
			at, err := time.Parse("2 Jan 2006 15:04:05.000", strings.Join(fields[1:5], " "))
			if err == nil && (first.IsZero() || at.Before(first)) {
				first = at
			}
		}
	}
	return first
}

// sentinelEvents logs what the sentinels saw and did (their log lines with #) and returns the
// first sentinel that entered TILT mode, if any.
func sentinelEvents(t *testing.T, ns string) (tilt string) {
	t.Helper()
	for i := range 3 {
		pod := fmt.Sprintf("ha-pause-g1-redis-sentinel-%d", i)
		logs, _ := kubectl("", "-n", ns, "logs", pod)
		var events []string
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l, " # ") {
				events = append(events, l)
			}
			if strings.Contains(l, "+tilt") && tilt == "" {
				tilt = pod
			}
		}
		t.Logf("%s events:\n%s", pod, strings.Join(events, "\n"))
	}
	return tilt
}

// pauseSingle: a 1 s pause of a single Redis shows in the seconds around the fault
// (closed model: the VUs wait for the paused server): about a second's worth of calls missing,
// and calls that took about the pause's length.
func pauseSingle(t *testing.T) {
	ns := newNamespace(t, "pause-single")
	apply(t, ns, pauseRunManifest("one-pause", "single", "1s"))
	run := waitPhase(t, ns, "one-pause", runTimeout, v1alpha1.PhaseSucceeded)
	f := appliedPause(t, run, "one-pause-g1-redis-master-0", time.Second)
	cps := f.CallsPerSecond
	if len(cps) != 15 || len(f.Timeline) != 15 {
		t.Fatalf("calls per second around the fault: %v; timeline: %+v", cps, f.Timeline)
	}
	var before int64
	for _, c := range cps[1:5] {
		before += c
	}
	before /= 4 // calls per second before the pause (the first second may be partial)
	// The pause straddles the second it starts in (cps[5]) and the next: together they miss
	// about a second's worth of calls (the rate of this host, shared by other jobs, varies by
	// ±40 % from second to second).
	var missing int64
	for _, c := range cps[5:8] {
		missing += max(0, before-c)
	}
	// The calls in flight when the server stopped (one per VU) complete when it continues: the
	// slowest call of the seconds the pause ends in took about the pause's length, whatever
	// the rate (was: one of the two seconds lost 40 % of its calls, which a busy second after
	// a quiet one could miss when the pause began mid-second).
	var slowest int64
	for _, s := range f.Timeline {
		if s.Second >= 0 && s.Second <= 2 {
			slowest = max(slowest, s.MaxMicros)
		}
	}
	metric(t.Name(), "callsPerSecond=%v before=%d/s missing=%d (%.2f s of calls) slowestCall=%dms timeline=%+v",
		cps, before, missing, float64(missing)/float64(max(before, 1)), slowest/1000, f.Timeline)
	if before == 0 || float64(missing) < 0.5*float64(before) {
		t.Errorf("a 1 s pause left no gap: %v (before %d/s, missing %d)", cps, before, missing)
	}
	if slowest < 900_000 || slowest > 3_000_000 {
		t.Errorf("the slowest call of the seconds after a 1 s pause took %d ms, want about 1000: %+v", slowest/1000, f.Timeline)
	}
}
