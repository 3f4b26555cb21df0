package controllers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/pause"
	"github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/target"
)

// pauseRun is a builtin Redis HA run pausing the master 10 s into get for 3 s and a
// sentinel 20 s into get for 1 s.
func (e *env) pauseRun(name string) *v1alpha1.BenchmarkRun {
	run := e.redisRun(name, 1)
	run.Spec.Target.Redis.Mode = v1alpha1.RedisHA
	run.Spec.Faults = []v1alpha1.Fault{
		{Scenario: "get", Offset: metav1.Duration{Duration: 10 * time.Second}, Action: v1alpha1.FaultPause, Role: v1alpha1.FaultRoleMaster,
			Duration: &metav1.Duration{Duration: 3 * time.Second}},
		{Scenario: "get", Offset: metav1.Duration{Duration: 20 * time.Second}, Action: v1alpha1.FaultPause, Role: v1alpha1.FaultRoleSentinel,
			Duration: &metav1.Duration{Duration: time.Second}},
	}
	return run
}

// runningContainers marks pod's containers running with runtime IDs, as the kubelet does.
func (e *env) runningContainers(pod *corev1.Pod) {
	e.t.Helper()
	for i, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ContainerID: fmt.Sprintf("containerd://%064d", i+1), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	}
	if err := k8sClient.Status().Update(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
}

// TestFaultPause: a pause fault's pods share their process namespace (only the role's
// workloads); when due the manager adds one ephemeral container to the master pod (the runner
// image pausing the server container by its ID for the duration, as the server's UID, under
// the restricted profile, no token), once even after a lost status patch; a pod that does not
// share its process namespace fails the fault with the reason; collection reads the pause
// container's report into pausedTime/resumedTime and measures the failover from it.
func TestFaultPause(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.pauseRun("pause"))
	for suffix, want := range map[string]bool{"redis-master": true, "redis-replica": true, "redis-sentinel": true} {
		var sts appsv1.StatefulSet
		if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: targetName(run, suffix)}, &sts); err != nil {
			t.Fatal(err)
		}
		if got := sts.Spec.Template.Spec.ShareProcessNamespace; (got != nil && *got) != want {
			t.Errorf("StatefulSet %s shareProcessNamespace %v, want %v", sts.Name, got, want)
		}
	}
	master := e.targetPod(run, "redis-master", 0, "master")
	e.runningContainers(master)
	sentinel := e.sentinelPodNotShared(run)
	load := e.r.loadStart(e.ctx, &step{run: run})

	e.clock.t = load.Add(10*time.Second + 40*time.Millisecond)
	e.reconcile(run.Name)
	fs := e.get(run.Name).Status.Faults
	if len(fs) != 1 || fs[0].Outcome != v1alpha1.FaultApplied || fs[0].Pod != master.Name || fs[0].Duration != "3s" || fs[0].LateMs != 40 {
		t.Fatalf("status.faults after 10.04s: %+v", fs)
	}
	checkPauseContainer(t, e, master)
	if e.podGone(master.Name) {
		t.Fatal("a pause deleted the pod")
	}
	cur := e.get(run.Name) // a lost status patch: rebuilt from the record, no second container
	cur.Status.Faults = nil
	if err := k8sClient.Status().Update(e.ctx, cur); err != nil {
		t.Fatal(err)
	}
	e.reconcile(run.Name)
	var again corev1.Pod
	if err := k8sClient.Get(e.ctx, client.ObjectKeyFromObject(master), &again); err != nil || len(again.Spec.EphemeralContainers) != 1 {
		t.Fatalf("ephemeral containers after a lost status patch: %+v %v", again.Spec.EphemeralContainers, err)
	}

	e.clock.t = load.Add(20 * time.Second)
	e.reconcile(run.Name)
	fs = e.get(run.Name).Status.Faults
	if len(fs) != 2 || fs[1].Outcome != v1alpha1.FaultFailed || !strings.Contains(fs[1].Message, "pod "+sentinel.Name+" does not share its process namespace") {
		t.Fatalf("pause of a pod without a shared process namespace: %+v", fs)
	}
	checkPauseCollection(t, e, run.Name, &again)
}

// sentinelPodNotShared is a running sentinel pod of run without a shared process namespace
// (as the redis-operator's pods are).
func (e *env) sentinelPodNotShared(run *v1alpha1.BenchmarkRun) *corev1.Pod {
	e.t.Helper()
	var sts appsv1.StatefulSet
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: targetName(run, "redis-sentinel")}, &sts); err != nil {
		e.t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sts.Name + "-0", Namespace: e.ns, Labels: sts.Spec.Template.Labels},
		Spec: sts.Spec.Template.Spec}
	pod.Spec.ShareProcessNamespace = nil
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	e.runningContainers(pod)
	return pod
}

// checkPauseContainer: the master pod got the pause container of fault 0.
func checkPauseContainer(t *testing.T, e *env, master *corev1.Pod) {
	t.Helper()
	var pod corev1.Pod
	if err := k8sClient.Get(e.ctx, client.ObjectKeyFromObject(master), &pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.EphemeralContainers) != 1 {
		t.Fatalf("ephemeral containers: %+v", pod.Spec.EphemeralContainers)
	}
	ec := pod.Spec.EphemeralContainers[0]
	wantCmd := []string{"benchrun-runner", "pause", "--container-id", fmt.Sprintf("%064d", 1), "--for", "3s"}
	if ec.Name != "benchrun-pause-0" || ec.Image != "runner:t" || !slices.Equal(ec.Command, wantCmd) || len(ec.VolumeMounts) != 0 {
		t.Errorf("pause container: %s %s %v mounts %v", ec.Name, ec.Image, ec.Command, ec.VolumeMounts)
	}
	sc := ec.SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != *pod.Spec.SecurityContext.RunAsUser || sc.AllowPrivilegeEscalation == nil ||
		*sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0 {
		t.Errorf("pause container security context: %+v", sc)
	}
	if pod.Spec.ShareProcessNamespace == nil || !*pod.Spec.ShareProcessNamespace {
		t.Error("the paused pod does not share its process namespace")
	}
}

// checkPauseCollection: the pause container reports (stopped 200 ms after the fault was
// applied, continued 3 s later); the probe saw an outage from 1 s after the stop to 4 s
// after it. Collection reads the report and measures from the stop.
func checkPauseCollection(t *testing.T, e *env, name string, master *corev1.Pod) {
	t.Helper()
	run := e.get(name)
	applied := run.Status.Faults[0].AppliedTime.Time
	paused, resumed := applied.Add(200*time.Millisecond), applied.Add(3200*time.Millisecond)
	rep := pause.Report{Pids: []int{7}, PausedUnixMicro: paused.UnixMicro(), ResumedUnixMicro: resumed.UnixMicro()}
	master.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "benchrun-pause-0", Image: "runner:t",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: rep.Message()}}}}
	if err := k8sClient.Status().Update(e.ctx, master); err != nil {
		t.Fatal(err)
	}
	probeOutage(t, e, run, paused.UnixMilli()+1000, paused.UnixMilli()+4000)
	e.clock.t = run.Status.LoadStartTime.Add(125 * time.Second)
	e.finishRunner(run, 0, 100)
	done := e.until(name, v1alpha1.PhaseSucceeded)
	f := done.Status.Faults[0]
	if f.PausedTime == nil || !f.PausedTime.Time.Equal(paused.Truncate(time.Microsecond)) || f.ResumedTime == nil || !f.ResumedTime.Time.Equal(resumed.Truncate(time.Microsecond)) {
		t.Fatalf("paused/resumed: %+v", f)
	}
	if f.Failover == nil || f.Failover.Milliseconds != 4000 || f.Failover.FailedWrites != 9 {
		t.Errorf("failover measured from the stop: %+v", f.Failover)
	}
	var report corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: done.Status.Report.ConfigMapName}, &report); err != nil {
		t.Fatal(err)
	}
	md := report.Data["report.md"]
	if !strings.Contains(md, "| 0 | get | 10s | pause 3s | master | "+f.Pod) || !strings.Contains(md, "were stopped from") || !strings.Contains(md, "(3s)") {
		t.Errorf("report.md Faults section:\n%s", md[strings.Index(md, "\nFaults:"):])
	}
}

// TestSharePIDsOnlyWhenNeeded: a run without pause faults (kill, restart) gets no shared
// process namespace anywhere; a pause of the proxy shares it in the proxy's pods only, of
// hetu in the HeTu pods only.
func TestSharePIDsOnlyWhenNeeded(t *testing.T) {
	o := target.Options{Namespace: "ns", Prefix: "r-g1", Labels: runLabels(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, 1)}
	cases := []struct {
		spec   v1alpha1.TargetSpec
		faults []v1alpha1.Fault
		want   string
	}{
		{v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Replicas: ptrInt32(1), Sentinels: ptrInt32(3), Provider: v1alpha1.ProviderBuiltin}},
			[]v1alpha1.Fault{{Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleMaster}, {Action: v1alpha1.FaultRestart, Role: v1alpha1.FaultRoleSentinel}}, ""},
		{v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy, Replicas: ptrInt32(1), Provider: v1alpha1.ProviderBuiltin}},
			[]v1alpha1.Fault{{Action: v1alpha1.FaultPause, Role: v1alpha1.FaultRoleProxy}}, "r-g1-proxy"},
		{v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Replicas: ptrInt32(2), Sentinels: ptrInt32(3), Provider: v1alpha1.ProviderBuiltin}},
			[]v1alpha1.Fault{{Action: v1alpha1.FaultPause, Role: v1alpha1.FaultRoleReplica}}, "r-g1-redis-master r-g1-redis-replica"},
		{v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle, Provider: v1alpha1.ProviderBuiltin}}}},
			[]v1alpha1.Fault{{Action: v1alpha1.FaultPause, Role: v1alpha1.FaultRoleHeTu}}, "r-g1-hetu"},
	}
	for _, c := range cases {
		tg, err := target.New(&c.spec, o)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := tg.Objects()
		if err != nil {
			t.Fatal(err)
		}
		sharePIDs(&v1alpha1.BenchmarkRun{Spec: v1alpha1.BenchmarkRunSpec{Faults: c.faults}}, tg, objs)
		var shared []string
		for _, obj := range objs {
			var spec *corev1.PodSpec
			switch w := obj.(type) {
			case *appsv1.StatefulSet:
				spec = &w.Spec.Template.Spec
			case *appsv1.Deployment:
				spec = &w.Spec.Template.Spec
			}
			if spec != nil && spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace {
				shared = append(shared, obj.GetName())
			}
		}
		if got := strings.Join(shared, " "); got != c.want {
			t.Errorf("%s %v: shared %q, want %q", tg.Kind(), c.faults, got, c.want)
		}
	}
}

// probeOutage stores runner 0's probe report: a marker acknowledged every 50 ms from a
// minute before from to 30 s after to, failing from from to to (9 writes), nothing lost.
func probeOutage(t *testing.T, e *env, run *v1alpha1.BenchmarkRun, from, to int64) {
	t.Helper()
	var acks []int64
	for ms := from - 60_000; ms < to+30_000; ms += 50 {
		if ms < from || ms >= to {
			acks = append(acks, ms)
		}
	}
	p := runner.ProbeReport{StartMs: from - 60_000, EndMs: to + 30_000, Writes: int64(len(acks)) + 9, Acked: int64(len(acks)),
		AckTimes: runner.EncodeAckTimes(acks), Outages: []runner.Outage{{FirstFailMs: from, RecoveredMs: to, Failed: 9}}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	e.setRunnerState(run, 0, map[string]string{runner.KeyFaultProbe: string(b)}, nil)
}

// TestFaultPauseNeverAdded: a pause recorded Applied whose container is not in the pod (the
// manager stopped between the record and the patch) is reported Failed at collection, not
// as a pause that happened.
func TestFaultPauseNeverAdded(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.pauseRun("lost-pause"))
	master := e.targetPod(run, "redis-master", 0, "master")
	e.runningContainers(master)
	fs := lifecycle.FaultEntry(0, run.Spec.Faults[0])
	fs.Outcome, fs.Pod, fs.AppliedTime = v1alpha1.FaultApplied, master.Name, &metav1.MicroTime{Time: e.clock.t}
	rec := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: faultRecordName(run, 0), Namespace: e.ns}, Data: toRecord(&fs)}
	if err := ctrl.SetControllerReference(run, &rec, scheme); err != nil { // as the manager records it
		t.Fatal(err)
	}
	if err := k8sClient.Create(e.ctx, &rec); err != nil {
		t.Fatal(err)
	}
	e.clock.t = e.r.loadStart(e.ctx, &step{run: run}).Add(11 * time.Second)
	e.reconcile(run.Name) // rebuilds status.faults[0] from the record, adds nothing
	e.clock.t = e.clock.t.Add(2 * time.Minute)
	e.finishRunner(run, 0, 100)
	done := e.until(run.Name, v1alpha1.PhaseSucceeded)
	if f := done.Status.Faults[0]; f.Outcome != v1alpha1.FaultFailed || !strings.Contains(f.Message, "has no pause container benchrun-pause-0") {
		t.Fatalf("a pause never added: %+v", f)
	}
}
