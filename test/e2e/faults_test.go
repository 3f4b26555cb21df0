//go:build e2e

package e2e

import (
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
	m := `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: ha-fault
spec:
  target:
    redis:
      mode: ha
      replicas: 1
      sentinels: 3
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
  - {scenario: set, offset: 10s, action: kill, role: master}
  cleanup:
    policy: OnSuccess
`
	apply(t, ns, m)
	run := waitPhase(t, ns, "ha-fault", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if len(run.Status.Faults) != 1 {
		t.Fatalf("status.faults: %+v", run.Status.Faults)
	}
	f := run.Status.Faults[0]
	t.Logf("fault: %+v", f)
	if f.Outcome != v1alpha1.FaultApplied || f.Pod != "ha-fault-g1-redis-master-0" || f.AppliedTime == nil || f.LateMs > 2000 {
		t.Errorf("fault not applied on time to the master pod: %+v", f)
	}
	if len(f.CallsPerSecond) != 15 {
		t.Errorf("calls per second around the fault: %v", f.CallsPerSecond)
	}
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
	if md := checkReport(t, ns, run); !strings.Contains(md, "\nFaults:") || !strings.Contains(md, "ha-fault-g1-redis-master-0") {
		t.Errorf("report has no Faults section:\n%s", md)
	}
}
