//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestFaultMasterKill kills the Redis master 10 s into a 40 s write load on builtin HA
// (master + 1 replica + 3 sentinels): the fault is applied on time to the master pod, the run
// still succeeds with the errors counted, and runner 0's fault probe reports the failover time
// (to the first acknowledged write through the master Service after the outage), the failed
// writes and the acknowledged writes lost.
func TestFaultMasterKill(t *testing.T) {
	ns := newNamespace(t, "fault-kill")
	faultMasterKill(t, ns, "ha-fault", "builtin", "ha-fault-g1-redis-master-0")
}

// TestFaultMasterKillOperator is TestFaultMasterKill through the OT redis-operator
// (RedisReplication + RedisSentinel): the master is the pod the operator's master Service
// selects when the fault is due.
func TestFaultMasterKillOperator(t *testing.T) {
	installRedisOperator(t)
	ns := newNamespace(t, "fault-kill-op")
	faultMasterKill(t, ns, "op-fault", "redis-operator", "op-fault-g1-redis-")
}

// faultMasterKill runs the master kill on a provider; pod is the master pod's name, or a
// prefix of it (ending in "-").
func faultMasterKill(t *testing.T, ns, name, provider, pod string) {
	t.Helper()
	m := fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %s
spec:
  target:
    redis:
      mode: ha
      replicas: 1
      sentinels: 3
      provider: %s
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
  - {scenario: set, offset: 10s, action: kill, role: master}
  cleanup:
    policy: OnSuccess
`, name, provider)
	apply(t, ns, m)
	run := waitPhase(t, ns, name, runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if len(run.Status.Faults) != 1 {
		t.Fatalf("status.faults: %+v", run.Status.Faults)
	}
	f := run.Status.Faults[0]
	t.Logf("fault: %+v", f)
	onPod := f.Pod == pod || (strings.HasSuffix(pod, "-") && strings.HasPrefix(f.Pod, pod))
	if f.Outcome != v1alpha1.FaultApplied || !onPod || f.AppliedTime == nil || f.LateMs > 2000 {
		t.Errorf("fault not applied on time to the master pod (%s): %+v", pod, f)
	}
	if len(f.CallsPerSecond) != 15 {
		t.Errorf("calls per second around the fault: %v", f.CallsPerSecond)
	}
	if len(f.Timeline) != 15 || f.Timeline[4].Calls == 0 {
		t.Errorf("per-second timeline around the fault: %+v", f.Timeline)
	}
	t.Logf("timeline: %+v", f.Timeline)
	fo := f.Failover
	if fo == nil || !fo.Recovered || fo.Milliseconds <= 0 || fo.Milliseconds > 60_000 || fo.FailedWrites == 0 || fo.AckedBefore == 0 || fo.LostBefore < 0 {
		t.Fatalf("failover: %+v", fo)
	}
	res := run.Status.Results[0]
	metric(t.Name(), "failover=%dms failedWrites=%d ackedBefore=%d lostBefore=%d late=%dms calls=%d errors=%d callsPerSecond=%v",
		fo.Milliseconds, fo.FailedWrites, fo.AckedBefore, fo.LostBefore, f.LateMs, res.Calls, res.Errors, f.CallsPerSecond)
	if res.Errors == 0 {
		t.Errorf("no load error while the master was down: %+v", res)
	}
	events := mustKubectl(t, "", "-n", ns, "get", "events", "--field-selector", "reason=FaultApplied", "-o", "name")
	if strings.TrimSpace(events) == "" {
		t.Error("no FaultApplied Event")
	}
	if md := checkReport(t, ns, run); !strings.Contains(md, "\nFaults:") || !strings.Contains(md, f.Pod) ||
		!strings.Contains(md, "| second | calls | errors | p99 (ms) | max (ms) |") {
		t.Errorf("report has no Faults section:\n%s", md)
	}
}
