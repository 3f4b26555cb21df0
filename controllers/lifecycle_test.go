package controllers

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/target"
)

// TestLifecycleWithRunnerAgents drives a run from creation to Succeeded with the real
// runner agents (k6 replaced by a function writing a result document): target objects,
// readiness, runner objects, the start barrier, collection, report, cleanup, Events.
func TestLifecycleWithRunnerAgents(t *testing.T) {
	e := newEnv(t)
	run := e.create(e.redisRun("happy", 2))

	e.reconcile(run.Name)
	run = e.get(run.Name)
	if run.Status.Phase != v1alpha1.PhasePending || run.Status.Target.Kind != "redis/single" || run.Status.Target.Provider != "builtin" {
		t.Fatalf("after accept: phase %s target %+v", run.Status.Phase, run.Status.Target)
	}

	run = e.until(run.Name, v1alpha1.PhaseProvisioning)
	var sts appsv1.StatefulSet
	if !e.exists(&sts, targetName(run, "redis-master")) {
		t.Fatal("no master StatefulSet")
	}
	if !metav1.IsControlledBy(&sts, run) {
		t.Fatal("StatefulSet not owned by the run")
	}
	if got := run.Status.Target.Endpoints; len(got) != 1 || got[0].Role != "redis" || !strings.HasPrefix(got[0].Address, targetName(run, "redis-master")+"."+e.ns+".svc:6379") {
		t.Fatalf("endpoints %+v", got)
	}
	e.reconcile(run.Name)
	if c := meta.FindStatusCondition(e.get(run.Name).Status.Conditions, v1alpha1.ConditionTargetReady); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("TargetReady before ready: %+v", c)
	}

	e.markTargetReady()
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	checkRunnerObjects(t, e, run)

	// The runner agents, as in the pods: ready, wait at the barrier, run "k6", store.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = testAgent(t, e, run, i).Run(context.Background())
		}()
	}
	waitFor(t, func() bool {
		obs, err := e.r.observeRunners(e.ctx, e.r.newStep(e.get(run.Name)))
		return err == nil && obs.ready == 2
	})
	run = e.until(run.Name, v1alpha1.PhaseRunning)
	if run.Status.LoadStartTime == nil || !meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionRunnersReady) {
		t.Fatalf("running without load start: %+v", run.Status)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
	}

	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	st := run.Status
	for _, c := range []string{v1alpha1.ConditionTargetReady, v1alpha1.ConditionRunnersReady, v1alpha1.ConditionLoadComplete,
		v1alpha1.ConditionResultsCollected, v1alpha1.ConditionSucceeded} {
		if !meta.IsStatusConditionTrue(st.Conditions, c) {
			t.Errorf("condition %s not true: %+v", c, meta.FindStatusCondition(st.Conditions, c))
		}
	}
	if len(st.Results) != 2 || st.Results[0].Calls != 200 || st.Results[1].Calls != 200 || st.Partial {
		t.Fatalf("results %+v partial %v", st.Results, st.Partial)
	}
	if st.BestCPS == "" || st.Runners.Succeeded != 2 || st.Runners.StartSkew == "" || st.CompletionTime == nil {
		t.Fatalf("status %+v runners %+v", st.BestCPS, st.Runners)
	}
	if len(st.Resources) != 1 || st.Resources[0].Role != "runner" || st.Resources[0].Source != "cgroup" || st.Resources[0].CPUAvgCores <= 0 {
		t.Fatalf("resources %+v", st.Resources)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, st.Report.ConfigMapName) || !strings.Contains(report.Data["report.md"], "Average CPS") || report.Data["results.json"] == "" {
		t.Fatalf("report %v", report.Data)
	}
	for _, chart := range []string{lifecycle.ChartCPS, lifecycle.ChartLatency, lifecycle.ChartPercentiles, lifecycle.ChartCPU, lifecycle.ChartMemory} {
		if svg := report.Data[chart]; !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, `class="`) {
			t.Errorf("report chart %s: %.200s", chart, svg)
		}
	}

	// Cleanup (policy OnSuccess): target and runners go, results stay.
	e.reconcile(run.Name)
	if e.exists(&appsv1.StatefulSet{}, targetName(run, "redis-master")) || e.exists(&batchv1.Job{}, runner.JobName(prefix(run, run.Generation))) {
		t.Fatal("target or runner Job not cleaned up")
	}
	if !e.exists(&corev1.ConfigMap{}, st.Report.ConfigMapName) || !e.exists(&corev1.ConfigMap{}, e.stateName(run, 0)) {
		t.Fatal("cleanup deleted results")
	}
	for _, reason := range []string{"Accepted", "Provisioning", "TargetReadyReady", "RunnersCreated", "RunnersReadyAllReady",
		"LoadStarted", "LoadCompleteAllFinished", "Collecting", "ResultsCollectedMerged", "Succeeded", "CleanedUp"} {
		if !e.hasEvent(reason) {
			t.Errorf("no %s Event in %q", reason, e.events)
		}
	}
}

// checkRunnerObjects checks the runner Job's placement and security, and the runner Role.
func checkRunnerObjects(t *testing.T, e *env, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	p := prefix(run, run.Generation)
	var job batchv1.Job
	if !e.exists(&job, runner.JobName(p)) {
		t.Fatal("no runner Job")
	}
	spec := job.Spec
	if *spec.Parallelism != 2 || *spec.Completions != 2 || *spec.CompletionMode != batchv1.IndexedCompletion || *spec.BackoffLimitPerIndex != 0 {
		t.Fatalf("job spec %+v", spec)
	}
	pod := spec.Template.Spec
	if pod.ServiceAccountName != runner.AccountName(p) || !*pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Fatalf("pod security %+v", pod.SecurityContext)
	}
	c := pod.Containers[0]
	if *c.SecurityContext.AllowPrivilegeEscalation || c.SecurityContext.Capabilities.Drop[0] != "ALL" {
		t.Fatalf("container security %+v", c.SecurityContext)
	}
	if pod.Affinity == nil || len(pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatal("no one-per-node anti-affinity")
	}
	var role rbacv1.Role
	if !e.exists(&role, runner.AccountName(p)) {
		t.Fatal("no runner Role")
	}
	for _, rule := range role.Rules {
		if len(rule.ResourceNames) == 0 || rule.Resources[0] != "configmaps" || strings.Contains(strings.Join(rule.Verbs, ","), "create") {
			t.Fatalf("runner Role too broad: %+v", rule)
		}
	}
	if !e.exists(&corev1.ConfigMap{}, runner.BarrierName(p)) || !e.exists(&corev1.ConfigMap{}, runner.StateName(p, 1)) {
		t.Fatal("no barrier or state ConfigMaps")
	}
}

// testAgent is runner i's agent with k6 replaced by a function writing a document.
func testAgent(t *testing.T, e *env, run *v1alpha1.BenchmarkRun, i int) *runner.Agent {
	dir := t.TempDir()
	cg := filepath.Join(dir, "cgroup")
	_ = os.MkdirAll(cg, 0o755)
	_ = os.WriteFile(filepath.Join(cg, "cpu.stat"), []byte("usage_usec 1000\n"), 0o644)
	_ = os.WriteFile(filepath.Join(cg, "memory.peak"), []byte("52428800\n"), 0o644)
	a := &runner.Agent{Client: k8sClient, Namespace: e.ns, StateName: e.stateName(run, i),
		BarrierName: runner.BarrierName(prefix(run, run.Generation)), ResultFile: filepath.Join(dir, "result.json"),
		CgroupDir: cg, Poll: 10 * time.Millisecond, Now: e.clock.Now}
	a.Load = &fakeLoad{write: func(inv plan.Invocation) error {
		if !strings.Contains(inv.Env[plan.EnvTarget], targetName(run, "redis-master")) {
			t.Errorf("invocation without the target address: %+v", inv)
		}
		e.clock.Step(5 * time.Second)
		_ = os.WriteFile(filepath.Join(cg, "cpu.stat"), []byte("usage_usec 9001000\n"), 0o644)
		var b bytes.Buffer
		if err := results.Encode(&b, runnerDoc(t, run, i, e.clock.Now(), 100)); err != nil {
			return err
		}
		return os.WriteFile(a.ResultFile, b.Bytes(), 0o600)
	}}
	return a
}

// fakeLoad stands for k6: Prepare keeps the invocation, Wait writes the result document.
type fakeLoad struct {
	inv     plan.Invocation
	started bool
	write   func(plan.Invocation) error
}

// Prepare implements runner.Load.
func (f *fakeLoad) Prepare(_ context.Context, inv plan.Invocation) error { f.inv = inv; return nil }

// Start implements runner.Load.
func (f *fakeLoad) Start(context.Context) error { f.started = true; return nil }

// Wait implements runner.Load.
func (f *fakeLoad) Wait() (int, error) {
	if !f.started {
		return -1, nil
	}
	if err := f.write(f.inv); err != nil {
		return 1, err
	}
	return 0, nil
}

// waitFor polls cond for up to 10s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 10s")
}

// startedRun creates a run and drives it to Running with simulated runners at the barrier.
func (e *env) startedRun(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	e.t.Helper()
	e.create(run)
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.targetReady(run.Name)
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	e.readyRunners(run)
	return e.until(run.Name, v1alpha1.PhaseRunning)
}

// TestTargetNeverReady: a target not ready within timeouts.targetReady fails the run.
func TestTargetNeverReady(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("slow", 1)
	run.Spec.Timeouts.TargetReady = &metav1.Duration{Duration: time.Minute}
	e.create(run)
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.clock.Step(30 * time.Second)
	e.reconcile(run.Name)
	if got := e.get(run.Name).Status.Phase; got != v1alpha1.PhaseProvisioning {
		t.Fatalf("failed too early: %s", got)
	}
	e.clock.Step(31 * time.Second)
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != "TargetNotReady" || !strings.Contains(c.Message, "StatefulSet") {
		t.Fatalf("condition %+v", c)
	}
	if !e.hasEvent("TargetNotReady") {
		t.Fatalf("no TargetNotReady Event: %q", e.events)
	}
	// Policy OnSuccess keeps the failed target for debugging.
	e.reconcile(run.Name)
	if !e.exists(&appsv1.StatefulSet{}, targetName(run, "redis-master")) {
		t.Fatal("failed target deleted despite policy OnSuccess")
	}
}

// TestRunnerOOMKilled: an OOM-killed runner fails the run with its reason; the other
// runner's results are kept and marked partial.
func TestRunnerOOMKilled(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("oom", 2))
	e.finishRunner(run, 0, 50)
	e.setRunnerState(run, 1, map[string]string{runner.KeyState: runner.StateRunning,
		runner.KeyLoadStartedAt: e.clock.Now().Format(time.RFC3339Nano)}, nil)
	e.reconcile(run.Name)
	if got := e.get(run.Name).Status.Phase; got != v1alpha1.PhaseRunning {
		t.Fatalf("phase %s while runner 1 runs", got)
	}
	e.runnerPod(run, 1, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "runner", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}})
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	st := run.Status
	if !st.Partial || len(st.Results) != 2 || st.Results[0].Calls != 50 || st.Runners.Failed != 1 {
		t.Fatalf("partial %v results %+v runners %+v", st.Partial, st.Results, st.Runners)
	}
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionSucceeded)
	if c.Reason != "RunnerFailed" || !strings.Contains(c.Message, "OOM-killed") {
		t.Fatalf("condition %+v", c)
	}
	if !strings.Contains(strings.Join(st.PartialReasons, ";"), "runner-1") {
		t.Fatalf("partial reasons %q", st.PartialReasons)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, st.Report.ConfigMapName) || !strings.Contains(report.Data["report.md"], "PARTIAL RESULTS") {
		t.Fatal("report not marked partial")
	}
}

// TestRunnerEvictedViaJob: a runner whose pod is gone but whose Job index failed (e.g.
// evicted and deleted) fails the run; a runner failing before the barrier fails it early.
func TestRunnerEvictedViaJob(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("evicted", 3))
	e.finishRunner(run, 0, 20)
	e.finishRunner(run, 2, 20)
	var job batchv1.Job
	if !e.exists(&job, runner.JobName(prefix(run, run.Generation))) {
		t.Fatal("no job")
	}
	job.Status.FailedIndexes = strPtr("1")
	job.Status.StartTime = &metav1.Time{Time: e.clock.Now()}
	if err := k8sClient.Status().Update(e.ctx, &job); err != nil {
		t.Fatal(err)
	}
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	if !run.Status.Partial || run.Status.Results[0].Calls != 40 {
		t.Fatalf("status %+v", run.Status)
	}

	// Before the barrier: a runner that cannot be scheduled is reported while waiting; an
	// evicted runner pod fails the run and the Job is deleted.
	run2 := e.create(e.redisRun("early", 3))
	e.until(run2.Name, v1alpha1.PhaseProvisioning)
	e.markTargetReady()
	run2 = e.until(run2.Name, v1alpha1.PhaseStarting)
	e.setRunnerState(run2, 0, map[string]string{runner.KeyState: runner.StateReady}, nil)
	e.runnerPod(run2, 2, corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
		Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules."}}})
	e.reconcile(run2.Name)
	if c := meta.FindStatusCondition(e.get(run2.Name).Status.Conditions, v1alpha1.ConditionRunnersReady); c == nil ||
		!strings.Contains(c.Message, "1/3 runners ready; runner-2: Unschedulable: 0/1 nodes") {
		t.Fatalf("RunnersReady %+v", c)
	}
	e.runnerPod(run2, 1, corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "node out of memory"})
	run2 = e.until(run2.Name, v1alpha1.PhaseFailed)
	if c := meta.FindStatusCondition(run2.Status.Conditions, v1alpha1.ConditionSucceeded); !strings.Contains(c.Message, "evicted") {
		t.Fatalf("condition %+v", c)
	}
	e.reconcile(run2.Name)
	if e.exists(&batchv1.Job{}, runner.JobName(prefix(run2, run2.Generation))) {
		t.Fatal("runners left waiting at the barrier")
	}
}

// strPtr returns a pointer to s.
func strPtr(s string) *string { return &s }

// TestRunTimeout: the whole-run timeout collects what runners stored and fails.
func TestRunTimeout(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("timeout", 2)
	run.Spec.Timeouts.Run = &metav1.Duration{Duration: 5 * time.Minute}
	run = e.startedRun(run)
	e.finishRunner(run, 0, 30)
	e.clock.Step(6 * time.Minute)
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c.Reason != "RunTimeout" || !run.Status.Partial || run.Status.Results[0].Calls != 30 {
		t.Fatalf("condition %+v partial %v results %+v", c, run.Status.Partial, run.Status.Results)
	}
}

// TestSpecChangeAfterCompletion: changing the spec of a finished run archives its results
// in status.history (report kept) and starts the new generation from scratch.
func TestSpecChangeAfterCompletion(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("rerun", 1))
	e.finishRunner(run, 0, 10)
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	e.reconcile(run.Name) // cleanup
	oldReport := run.Status.Report.ConfigMapName
	oldState := e.stateName(run, 0)

	run.Spec.Load.Duration = metav1.Duration{Duration: 2 * time.Minute}
	if err := k8sClient.Update(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	e.reconcile(run.Name)
	run = e.get(run.Name)
	st := run.Status
	if st.Phase != v1alpha1.PhasePending || st.ObservedGeneration != 2 || len(st.Results) != 0 || st.Report != nil {
		t.Fatalf("new generation status %+v", st)
	}
	if len(st.History) != 1 || st.History[0].Generation != 1 || st.History[0].Phase != v1alpha1.PhaseSucceeded ||
		st.History[0].Results[0].Calls != 10 || st.History[0].Report.ConfigMapName != oldReport {
		t.Fatalf("history %+v", st.History)
	}
	if !e.exists(&corev1.ConfigMap{}, oldReport) || e.exists(&corev1.ConfigMap{}, oldState) {
		t.Fatal("old report must stay, old runner state must go")
	}
	if !e.hasEvent("Archived") {
		t.Fatal("no Archived Event")
	}
	// The new generation runs with new object names.
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	if !e.exists(&appsv1.StatefulSet{}, targetName(run, "redis-master")) || !strings.Contains(targetName(run, "redis-master"), "-g2-") {
		t.Fatal("generation 2 target not created")
	}
}

// TestHistoryBounded: status.history keeps the 10 newest generations.
func TestHistoryBounded(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("bounded", 1)
	e.create(run)
	for g := 1; g <= 12; g++ {
		e.reconcile(run.Name)
		run = e.get(run.Name)
		run.Spec.Load.Workers = int32(4 + g)
		if err := k8sClient.Update(e.ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	e.reconcile(run.Name)
	run = e.get(run.Name)
	if len(run.Status.History) != maxHistory || run.Status.History[0].Generation != 12 || run.Status.History[0].Phase != v1alpha1.PhaseFailed {
		t.Fatalf("history: %d entries, first %+v", len(run.Status.History), run.Status.History[0])
	}
}

// TestTTLAndCleanupAlways: policy Always cleans a failed run, and the run is deleted
// ttlSecondsAfterFinished after it finished.
func TestTTLAndCleanupAlways(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("ttl", 1)
	run.Spec.Cleanup = v1alpha1.CleanupSpec{Policy: v1alpha1.CleanupAlways, TTLSecondsAfterFinished: ptrInt32(60)}
	run = e.startedRun(run)
	e.setRunnerState(run, 0, map[string]string{runner.KeyState: runner.StateFailed, runner.KeyReason: "k6 exited with code 99"}, nil)
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	res := e.reconcile(run.Name)
	if e.exists(&appsv1.StatefulSet{}, targetName(run, "redis-master")) {
		t.Fatal("policy Always kept the target")
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > time.Minute {
		t.Fatalf("requeue after %s", res.RequeueAfter)
	}
	e.clock.Step(61 * time.Second)
	e.reconcile(run.Name)
	if e.exists(&v1alpha1.BenchmarkRun{}, run.Name) {
		t.Fatal("run not deleted after its TTL")
	}
}

// ptrInt32 returns a pointer to n.
func ptrInt32(n int32) *int32 { return &n }

// TestRedisOperatorProvider: with the OT redis-operator CRDs installed, provider auto
// creates RedisReplication and RedisSentinel resources and follows their StatefulSets.
func TestRedisOperatorProvider(t *testing.T) {
	e := newEnv(t)
	installOperatorCRDs(t)
	run := e.redisRun("ot", 1)
	run.Spec.Target.Redis = &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderAuto, Replicas: ptrInt32(2), Sentinels: ptrInt32(3)}
	e.create(run)
	run = e.until(run.Name, v1alpha1.PhaseProvisioning)
	if run.Status.Target.Provider != "redis-operator" {
		t.Fatalf("provider %q", run.Status.Target.Provider)
	}
	repl := operatorObject("RedisReplication")
	if !e.exists(repl, targetName(run, "redis")) {
		t.Fatal("no RedisReplication")
	}
	if n, _, _ := unstructured.NestedInt64(repl.Object, "spec", "clusterSize"); n != 3 {
		t.Fatalf("clusterSize %d", n)
	}
	if !e.exists(operatorObject("RedisSentinel"), targetName(run, "redis")) {
		t.Fatal("no RedisSentinel")
	}
	e.reconcile(run.Name)
	if e.get(run.Name).Status.Phase != v1alpha1.PhaseProvisioning {
		t.Fatal("ready before the operator's StatefulSets")
	}
	// What the operator would create: StatefulSets <name> and <name>-sentinel.
	for name, n := range map[string]int32{targetName(run, "redis"): 3, targetName(run, "redis") + "-sentinel": 3} {
		sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: appsv1.StatefulSetSpec{
			Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: "redis:t"}}}}}}
		if err := k8sClient.Create(e.ctx, sts); err != nil {
			t.Fatal(err)
		}
	}
	e.markTargetReady()
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	roles := map[string]bool{}
	for _, ep := range run.Status.Target.Endpoints {
		roles[ep.Role] = strings.Contains(ep.Address, targetName(run, "redis"))
	}
	if !roles["master"] || !roles["replica"] || !roles["sentinel"] {
		t.Fatalf("endpoints %+v", run.Status.Target.Endpoints)
	}
}

// otModule is where `go mod download github.com/OT-CONTAINER-KIT/redis-operator@v0.23.0`
// puts the operator (the e2e setup downloads it to build the operator image).
const otModule = "github.com/!o!t-!c!o!n!t!a!i!n!e!r-!k!i!t/redis-operator@v0.23.0"

// operatorCRDs are the real redis-operator CRDs when the module is in the module cache,
// else minimal stand-ins accepting any spec (real reports true for the real ones).
func operatorCRDs() (paths []string, real bool) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err == nil {
		dir := filepath.Join(strings.TrimSpace(string(out)), otModule, "config", "crd", "bases")
		var files []string
		for _, kind := range []string{"redis", "redisreplications", "redissentinels"} {
			f := filepath.Join(dir, "redis.redis.opstreelabs.in_"+kind+".yaml")
			if _, err := os.Stat(f); err == nil {
				files = append(files, f)
			}
		}
		if len(files) == 3 {
			return files, true
		}
	}
	return []string{filepath.Join("testdata", "redis-operator")}, false
}

// installOperatorCRDs installs the redis-operator CRDs; they stay installed (the other
// tests name provider builtin).
func installOperatorCRDs(t *testing.T) bool {
	t.Helper()
	needEnvtest(t)
	paths, real := operatorCRDs()
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: paths}); err != nil {
		t.Fatal(err)
	}
	return real
}

// TestRedisOperatorResourcesMatchCRDs checks the redis-operator resources of every mode
// against the real v0.23.0 CRDs with strict field validation (skipped without them).
func TestRedisOperatorResourcesMatchCRDs(t *testing.T) {
	e := newEnv(t)
	if !installOperatorCRDs(t) {
		t.Skip("redis-operator v0.23.0 not in the module cache (GONOSUMDB=github.com/OT-CONTAINER-KIT/redis-operator go mod download github.com/OT-CONTAINER-KIT/redis-operator@v0.23.0)")
	}
	for _, mode := range []v1alpha1.RedisMode{v1alpha1.RedisSingle, v1alpha1.RedisHA, v1alpha1.RedisProxy} {
		spec := &v1alpha1.RedisTarget{Mode: mode, Provider: v1alpha1.ProviderRedisOperator, PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}
		if mode != v1alpha1.RedisSingle {
			spec.Replicas = ptrInt32(2)
		}
		if mode == v1alpha1.RedisHA {
			spec.Sentinels = ptrInt32(3)
		}
		tg, err := target.New(&v1alpha1.TargetSpec{Redis: spec}, target.Options{Namespace: e.ns, Prefix: "x" + string(mode),
			Labels: map[string]string{naming.LabelRun: "x", naming.LabelGeneration: "1"}, Images: target.Images{Redis: "r:t", Proxy: "p:t", Agent: "a:t"}, OperatorInstalled: true})
		if err != nil {
			t.Fatal(err)
		}
		objs, _ := tg.Objects()
		for _, o := range objs {
			if err := k8sClient.Create(e.ctx, o, client.FieldValidation("Strict")); err != nil {
				t.Errorf("mode %s: %v", mode, err)
			}
		}
	}
}

// operatorObject is an empty redis-operator resource of kind.
func operatorObject(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(target.OperatorGroupVersion.WithKind(kind))
	return u
}
