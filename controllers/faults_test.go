package controllers

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/redisrole"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// faultRun is a builtin Redis HA run of two one-minute scenarios with three faults: restart a
// replica 10 s into get, kill the master 20 s into set, kill a sentinel 30 s into set.
func (e *env) faultRun(name string) *v1alpha1.BenchmarkRun {
	run := e.redisRun(name, 1)
	run.Spec.Target.Redis.Mode = v1alpha1.RedisHA
	run.Spec.Faults = []v1alpha1.Fault{
		{Scenario: "set", Offset: metav1.Duration{Duration: 20 * time.Second}, Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleMaster},
		{Scenario: "get", Offset: metav1.Duration{Duration: 10 * time.Second}, Action: v1alpha1.FaultRestart, Role: v1alpha1.FaultRoleReplica},
		{Scenario: "set", Offset: metav1.Duration{Duration: 30 * time.Second}, Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleSentinel},
	}
	return run
}

// targetPod simulates the StatefulSet controller and kubelet: pod <sts>-<i> from the
// template, Running, with the given redis role label.
func (e *env) targetPod(run *v1alpha1.BenchmarkRun, suffix string, i int, role string) *corev1.Pod {
	e.t.Helper()
	var sts appsv1.StatefulSet
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: targetName(run, suffix)}, &sts); err != nil {
		e.t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", sts.Name, i), Namespace: e.ns,
		Labels: map[string]string{}}, Spec: sts.Spec.Template.Spec}
	for k, v := range sts.Spec.Template.Labels {
		pod.Labels[k] = v
	}
	pod.Labels[redisrole.Label] = role
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if err := k8sClient.Status().Update(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	return pod
}

// foreignPod is a running pod with like's labels but a name outside the run's prefix.
func (e *env) foreignPod(like *corev1.Pod, name string) *corev1.Pod {
	e.t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: like.Labels}, Spec: like.Spec}
	pod.ResourceVersion = ""
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if err := k8sClient.Status().Update(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	return pod
}

// podGone tells whether the pod was deleted (or is being deleted).
func (e *env) podGone(name string) bool {
	var p corev1.Pod
	return !e.exists(&p, name)
}

// TestFaultScheduling: each fault is applied once, at its offset in its scenario, to the pod
// holding its role at that moment (the master after a failover is the pod labelled master,
// whichever StatefulSet it belongs to); a role without a running pod fails the fault with the
// reason; status.faults, Events, a lost status patch (no second kill), and at collection the
// failover from runner 0's probe report and the report's Faults section.
func TestFaultScheduling(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.faultRun("faults"))
	checkProbeAsked(t, e, run)
	load := e.r.loadStart(e.ctx, &step{run: run}) // the barrier's startAt, to the nanosecond
	if load.Equal(run.Status.LoadStartTime.Time) || load.Sub(run.Status.LoadStartTime.Time).Abs() > time.Second {
		t.Fatalf("load start %v, status.loadStartTime %v: want the barrier's sub-second startAt", load, run.Status.LoadStartTime)
	}
	// after an earlier failover: replica-0 is the master, the master StatefulSet's pod a replica
	oldMaster := e.targetPod(run, "redis-master", 0, "replica")
	master := e.targetPod(run, "redis-replica", 0, "master")
	replica := e.targetPod(run, "redis-replica", 1, "replica")
	intruder := e.foreignPod(master, "a-intruder") // selected by the Services, first by name, not the run's

	e.clock.t = load.Add(9 * time.Second)
	res := e.reconcile(run.Name)
	if got := e.get(run.Name).Status.Faults; len(got) != 0 {
		t.Fatalf("faults applied before they were due: %+v", got)
	}
	if res.RequeueAfter != time.Second {
		t.Errorf("requeue after %v, want 1s (the replica restart is due at 10s)", res.RequeueAfter)
	}

	e.clock.t = load.Add(10*time.Second + 250*time.Millisecond)
	e.reconcile(run.Name)
	fs := e.get(run.Name).Status.Faults
	if len(fs) != 1 || fs[0].Index != 1 || fs[0].Outcome != v1alpha1.FaultApplied || fs[0].LateMs != 250 {
		t.Fatalf("status.faults after 10.25s: %+v", fs)
	}
	// the replica pods, first by name, are oldMaster (labelled replica) and replica
	if fs[0].Pod != oldMaster.Name || !e.podGone(oldMaster.Name) || e.podGone(replica.Name) || e.podGone(master.Name) {
		t.Fatalf("restart replica hit %q; gone: old master %v, replica %v, master %v", fs[0].Pod,
			e.podGone(oldMaster.Name), e.podGone(replica.Name), e.podGone(master.Name))
	}
	if !e.hasEvent("FaultApplied") {
		t.Errorf("no FaultApplied Event: %v", e.events)
	}
	if e.podGone(intruder.Name) {
		t.Error("a pod not of the run, matching the role's Service, was deleted")
	}

	// set starts at 1m + 2s grace: the master kill is due at 1m22s
	e.clock.t = load.Add(82 * time.Second)
	e.reconcile(run.Name)
	fs = e.get(run.Name).Status.Faults
	if len(fs) != 2 || fs[0].Index != 0 || fs[0].Pod != master.Name || !e.podGone(master.Name) || fs[0].AppliedTime == nil {
		t.Fatalf("status.faults after 1m22s: %+v", fs)
	}
	checkNoSecondKill(t, e, run)

	e.clock.t = load.Add(92 * time.Second)
	e.reconcile(run.Name)
	fs = e.get(run.Name).Status.Faults
	if len(fs) != 3 || fs[2].Outcome != v1alpha1.FaultFailed || !strings.Contains(fs[2].Message, "no running pod of this run holds role sentinel") {
		t.Fatalf("sentinel fault without sentinel pods: %+v", fs)
	}
	if !e.hasEvent("FaultFailed") {
		t.Errorf("no FaultFailed Event: %v", e.events)
	}
	checkFaultCollection(t, e, e.get(run.Name))
}

// checkProbeAsked: runner 0's invocation turns the fault probe on.
func checkProbeAsked(t *testing.T, e *env, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	var cm corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: e.stateName(run, 0)}, &cm); err != nil {
		t.Fatal(err)
	}
	inv, err := runner.DecodeInvocation(&cm)
	if err != nil || inv.Env[plan.EnvFaultProbe] == "" {
		t.Fatalf("runner 0's invocation does not ask for the fault probe: %v %v", inv.Env, err)
	}
}

// checkNoSecondKill: a status patch lost after the master kill (status.faults emptied) is
// rebuilt from the fault records, and the new master is not killed again.
func checkNoSecondKill(t *testing.T, e *env, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	cur := e.get(run.Name)
	want := cur.Status.Faults
	cur.Status.Faults = nil
	if err := k8sClient.Status().Update(e.ctx, cur); err != nil {
		t.Fatal(err)
	}
	promoted := e.targetPod(run, "redis-replica", 2, "master")
	e.reconcile(run.Name)
	got := e.get(run.Name).Status.Faults
	if e.podGone(promoted.Name) {
		t.Fatal("the fault was applied again after its status was lost: the promoted master was killed")
	}
	if len(got) != len(want) || got[0].Pod != want[0].Pod || got[1].Pod != want[1].Pod || !got[0].AppliedTime.Time.Equal(want[0].AppliedTime.Time) {
		t.Fatalf("status.faults rebuilt from records: %+v, want %+v", got, want)
	}
}

// checkFaultCollection: runner 0 stores a probe report (an outage starting 300 ms after the
// master kill, recovered 7.5 s after it, 40 failed writes; 2 acked markers lost, one acked
// before the kill); collection turns it into status.faults[0].failover and the report table.
func checkFaultCollection(t *testing.T, e *env, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	kill := run.Status.Faults[0].AppliedTime.UnixMilli()
	acks := make([]int64, 0, 2200) // every 50 ms from 80 s before the kill to 30 s after
	for ms := kill - 80_000; ms < kill+30_000; ms += 50 {
		acks = append(acks, ms)
	}
	probe := runner.ProbeReport{StartMs: kill - 80_000, EndMs: kill + 30_000, Writes: 2200, Acked: 2200,
		AckTimes: runner.EncodeAckTimes(acks),
		Outages:  []runner.Outage{{FirstFailMs: kill + 300, RecoveredMs: kill + 7500, Failed: 40}},
		Lost:     2, LostAckMs: []int64{kill - 20, kill + 100}}
	b, _ := json.Marshal(probe)
	e.clock.t = run.Status.LoadStartTime.Add(125 * time.Second)
	if cps := run.Status.Faults[0].CallsPerSecond; cps != nil {
		t.Errorf("calls per second before collection: %v", cps)
	}
	e.setRunnerState(run, 0, map[string]string{runner.KeyFaultProbe: string(b)}, nil)
	e.finishRunner(run, 0, 100)
	done := e.until(run.Name, v1alpha1.PhaseSucceeded)
	f := done.Status.Faults[0].Failover
	if f == nil || f.Milliseconds != 7500 || !f.Recovered || f.FailedWrites != 40 || f.LostBefore != 1 || f.AckedBefore != 1600 {
		t.Fatalf("failover of the master kill: %+v", f)
	}
	if r := done.Status.Faults[1].Failover; r == nil || r.Milliseconds != 0 || r.FailedWrites != 0 {
		t.Errorf("failover of the replica restart (no outage): %+v", r)
	}
	if done.Status.Faults[2].Failover != nil {
		t.Errorf("a failed fault got a failover: %+v", done.Status.Faults[2].Failover)
	}
	var report corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: done.Status.Report.ConfigMapName}, &report); err != nil {
		t.Fatal(err)
	}
	md := report.Data["report.md"]
	t.Logf("report.md:\n%s", md[strings.Index(md, "\nFaults:"):])
	if !strings.Contains(md, "\nFaults:") || !strings.Contains(md, "| 0 | set | 20s | kill | master | "+done.Status.Faults[0].Pod) ||
		!strings.Contains(md, "| 7500 | 40 | 1600 | 1 |") {
		t.Errorf("report.md Faults section:\n%s", md)
	}
}

// TestCallsAroundFault: the per-second calls of the fault's scenario from 5 s before the fault
// to 9 s after, zeros outside the timeline; none for a coarsened timeline.
func TestCallsAroundFault(t *testing.T) {
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rec := results.NewRecorder("set", "redis.set")
	for s := range 20 { // s+1 calls in second s
		for range s + 1 {
			rec.Record(start.Add(time.Duration(s)*time.Second+time.Millisecond), time.Millisecond, "OK", "")
		}
	}
	doc, err := results.NewDocument("runner-0", rec.Scenario())
	if err != nil {
		t.Fatal(err)
	}
	got := lifecycle.CallsAround(doc, "set", start.Add(3500*time.Millisecond).UnixMilli())
	want := []int64{0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls around 3.5s: %v, want %v", got, want)
	}
	if got := lifecycle.CallsAround(doc, "get", start.UnixMilli()); got != nil {
		t.Errorf("calls of an unknown scenario: %v", got)
	}
	doc.Scenarios[0].Starts.BucketMs = 2000
	if got := lifecycle.CallsAround(doc, "set", start.UnixMilli()); got != nil {
		t.Errorf("calls from a 2 s timeline: %v", got)
	}
}

// TestFailoverWindow: the outage that is a fault's starts at most 2.05 s before it (a write in
// flight) and at most 30 s after it; an earlier outage that ended before the fault is not it;
// an outage never recovered reports the time to the probe's end.
func TestFailoverWindow(t *testing.T) {
	const fault = 100_000
	p := &runner.ProbeReport{EndMs: fault + 60_000, Outages: []runner.Outage{
		{FirstFailMs: fault - 10_000, RecoveredMs: fault - 9_000, Failed: 3},
		{FirstFailMs: fault - 1_000, RecoveredMs: fault + 6_000, Failed: 50},
	}}
	if f := p.Failover(fault); f.Milliseconds != 6000 || f.FailedWrites != 50 || !f.Recovered {
		t.Errorf("in-flight outage: %+v", f)
	}
	p.Outages[1] = runner.Outage{FirstFailMs: fault + 31_000, RecoveredMs: fault + 32_000, Failed: 5}
	if f := p.Failover(fault); f.Milliseconds != 0 || f.FailedWrites != 0 {
		t.Errorf("outage 31 s after the fault counted: %+v", f)
	}
	p.Outages[1] = runner.Outage{FirstFailMs: fault + 200, Failed: 900}
	if f := p.Failover(fault); f.Recovered || f.Milliseconds != 60_000 || f.FailedWrites != 900 {
		t.Errorf("outage never recovered: %+v", f)
	}
	p.Lost = -1
	if f := p.Failover(fault); f.LostBefore != -1 {
		t.Errorf("markers not read back: lostBefore %d, want -1", f.LostBefore)
	}
}

// TestFaultNotApplied: a run whose load ends before its fault is due (here: its runner
// finished at once) reports the fault NotApplied, and nothing was deleted.
func TestFaultNotApplied(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.faultRun("early"))
	master := e.targetPod(run, "redis-master", 0, "master")
	e.finishRunner(run, 0, 50)
	done := e.until(run.Name, v1alpha1.PhaseSucceeded)
	if len(done.Status.Faults) != 3 {
		t.Fatalf("status.faults: %+v", done.Status.Faults)
	}
	for _, f := range done.Status.Faults {
		if f.Outcome != v1alpha1.FaultNotApplied || f.Pod != "" || f.AppliedTime != nil || f.Failover != nil {
			t.Errorf("fault %d: %+v", f.Index, f)
		}
	}
	if e.podGone(master.Name) {
		t.Error("a fault that was not due deleted the master")
	}
}
