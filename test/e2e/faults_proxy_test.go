//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestFaultThroughProxy: faults on a builtin proxy target (master + 1 replica behind 2
// camellia proxies) under a 60 s write load whose fault probe writes through the proxy
// Service: the master killed at 10 s (a proxy target has no sentinels: master-0 comes back
// with a new address, and camellia writes to it through the master Service), then one proxy pod
// killed at 40 s (the Service's other proxy takes over). Both faults are applied on time to
// the right pods; each has its per-second timeline and the probe's failover with the
// acknowledged writes lost (the master has no persistence: it restarts empty and its replica
// resyncs from it, so every write acknowledged before its restart is lost).
func TestFaultThroughProxy(t *testing.T) {
	ns := newNamespace(t, "fault-proxy")
	const name = "proxy-fault"
	apply(t, ns, `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: `+name+`
spec:
  target:
    redis:
      mode: proxy
      provider: builtin
      replicas: 1
      proxy:
        replicas: 2
  load:
    workers: 2
    tasksPerWorker: 4
    duration: 60s
    scenarios:
    - name: set
      type: redis.set
    runners:
      parallelism: 1
  faults:
  - {scenario: set, offset: 10s, action: kill, role: master}
  - {scenario: set, offset: 40s, action: kill, role: proxy}
  cleanup:
    policy: OnSuccess
`)
	run := waitPhase(t, ns, name, runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if len(run.Status.Faults) != 2 {
		t.Fatalf("status.faults: %+v", run.Status.Faults)
	}
	res := run.Status.Results[0]
	for i, want := range []string{name + "-g1-redis-master-0", name + "-g1-proxy-"} {
		f := run.Status.Faults[i]
		t.Logf("fault %d: %+v", i, f)
		t.Logf("timeline %d: %+v", i, f.Timeline)
		onPod := f.Pod == want || (strings.HasSuffix(want, "-") && strings.HasPrefix(f.Pod, want))
		if f.Outcome != v1alpha1.FaultApplied || !onPod || f.AppliedTime == nil || f.LateMs > 2000 {
			t.Errorf("fault %d not applied on time to %s: %+v", i, want, f)
		}
		if len(f.Timeline) != 15 || f.Timeline[4].Calls == 0 {
			t.Errorf("fault %d: per-second timeline: %+v", i, f.Timeline)
		}
		fo := f.Failover
		if fo == nil {
			t.Fatalf("fault %d: no failover measured", i)
		}
		metric(t.Name(), "fault=%d role=%s failover=%dms recovered=%v failedWrites=%d ackedBefore=%d lostBefore=%d late=%dms callsPerSecond=%v",
			i, f.Role, fo.Milliseconds, fo.Recovered, fo.FailedWrites, fo.AckedBefore, fo.LostBefore, f.LateMs, f.CallsPerSecond)
		// The probe read its markers back through the proxy: loss is reported (-1: not read).
		if !fo.Recovered || fo.Milliseconds < 0 || fo.Milliseconds > 30_000 || fo.AckedBefore == 0 || fo.LostBefore < 0 {
			t.Errorf("fault %d: failover through the proxy: %+v", i, fo)
		}
	}
	if fo := run.Status.Faults[0].Failover; fo.Milliseconds <= 0 || fo.FailedWrites == 0 {
		t.Errorf("the master kill caused no outage through the proxy: %+v", fo)
	}
	metric(t.Name(), "calls=%d errors=%d", res.Calls, res.Errors)
	if res.Errors == 0 {
		t.Errorf("no load error while the master was down: %+v", res)
	}
	events := mustKubectl(t, "", "-n", ns, "get", "events", "--field-selector", "reason=FaultApplied", "-o", "name")
	if n := len(strings.Fields(events)); n < 2 {
		t.Errorf("%d FaultApplied Events, want 2: %s", n, events)
	}
	md := checkReport(t, ns, run)
	if !strings.Contains(md, "\nFaults:") || !strings.Contains(md, run.Status.Faults[0].Pod) || !strings.Contains(md, run.Status.Faults[1].Pod) ||
		strings.Count(md, "| second | calls | errors | p99 (ms) | max (ms) |") != 2 {
		t.Errorf("report has no Faults section for both faults:\n%s", md)
	}
}
