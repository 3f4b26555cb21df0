package controllers

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// The envtest control plane shared by the tests (a real kube-apiserver and etcd; no
// kubelet, no controller-manager: pod, Job and StatefulSet status is simulated).
var (
	cfg       *rest.Config
	k8sClient client.Client
	scheme    = runtime.NewScheme()
	testEnv   *envtest.Environment
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		// Tests of pure logic still run; those needing the API server skip (needEnvtest).
		os.Exit(m.Run())
	}
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(false), zap.Level(zapLevel())))
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	if cfg, err = testEnv.Start(); err != nil {
		fmt.Println("starting envtest:", err)
		os.Exit(1)
	}
	if k8sClient, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	code := m.Run()
	_ = testEnv.Stop()
	os.Exit(code)
}

// needEnvtest skips a test that needs the envtest API server when it is not running.
func needEnvtest(t *testing.T) {
	t.Helper()
	if cfg == nil {
		t.Skip("needs a kube-apiserver: KUBEBUILDER_ASSETS not set (make envtest-assets; see Makefile)")
	}
}

// zapLevel keeps the controller quiet unless BENCHRUN_TEST_VERBOSE is set.
func zapLevel() zapcore.Level {
	if os.Getenv("BENCHRUN_TEST_VERBOSE") != "" {
		return -1
	}
	return 2
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// Now implements Clock.
func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Step moves the clock forward.
func (c *fakeClock) Step(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// env is one test's namespace, reconciler, clock and event recorder.
type env struct {
	t        *testing.T
	ctx      context.Context
	ns       string
	clock    *fakeClock
	recorder *record.FakeRecorder
	r        *BenchmarkRunReconciler
	events   []string
}

// newEnv creates a namespace and a reconciler driven by a fake clock.
func newEnv(t *testing.T) *env {
	t.Helper()
	needEnvtest(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, ns: ns.Name, clock: &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)},
		recorder: record.NewFakeRecorder(10000)}
	e.r = e.reconciler(k8sClient)
	return e
}

// reconciler is a fresh reconciler (no state) on c with the env's clock and recorder.
func (e *env) reconciler(c client.Client) *BenchmarkRunReconciler {
	return &BenchmarkRunReconciler{Client: c, Scheme: scheme, Recorder: e.recorder, Clock: e.clock,
		StartDelay: 20 * time.Millisecond, History: NewHistory(prometheus.NewRegistry(), 0),
		Images: Images{Runner: "runner:t", Redis: "redis:t", Valkey: "valkey:t", HeTu: "hetu:t", Proxy: "proxy:t"}}
}

// redisRun is a small Redis single run with n runners.
func (e *env) redisRun(name string, runners int32) *v1alpha1.BenchmarkRun {
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle, Provider: v1alpha1.ProviderBuiltin}},
			Load: v1alpha1.LoadSpec{
				Workers: 4, TasksPerWorker: 2, Duration: metav1.Duration{Duration: time.Minute},
				Scenarios: []v1alpha1.Scenario{{Name: "get", Type: v1alpha1.ScenarioRedisGet}, {Name: "set", Type: v1alpha1.ScenarioRedisSet}},
				Runners:   v1alpha1.RunnerSpec{Parallelism: runners, OnePerNode: true},
			},
		},
	}
}

// create creates a run (the API server applies the CRD defaults).
func (e *env) create(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	e.t.Helper()
	if err := k8sClient.Create(e.ctx, run); err != nil {
		e.t.Fatal(err)
	}
	return run
}

// get re-reads a run.
func (e *env) get(name string) *v1alpha1.BenchmarkRun {
	e.t.Helper()
	var run v1alpha1.BenchmarkRun
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &run); err != nil {
		e.t.Fatal(err)
	}
	return &run
}

// reconcile runs one reconcile of run name.
func (e *env) reconcile(name string) ctrl.Result {
	e.t.Helper()
	res, err := e.r.Reconcile(e.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: e.ns, Name: name}})
	if err != nil {
		e.t.Fatalf("reconcile: %v", err)
	}
	e.drainEvents()
	return res
}

// until reconciles until the run reaches phase (at most 20 times).
func (e *env) until(name string, phase v1alpha1.Phase) *v1alpha1.BenchmarkRun {
	e.t.Helper()
	for range 20 {
		e.reconcile(name)
		if run := e.get(name); run.Status.Phase == phase {
			return run
		}
	}
	run := e.get(name)
	e.t.Fatalf("run %s stuck in %s (want %s); conditions: %+v", name, run.Status.Phase, phase, run.Status.Conditions)
	return nil
}

// drainEvents moves recorded Events to e.events.
func (e *env) drainEvents() {
	for {
		select {
		case ev := <-e.recorder.Events:
			e.events = append(e.events, ev)
		default:
			return
		}
	}
}

// hasEvent tells whether an Event with this reason was recorded.
func (e *env) hasEvent(reason string) bool {
	e.drainEvents()
	for _, ev := range e.events {
		if strings.Contains(ev, " "+reason+" ") {
			return true
		}
	}
	return false
}

// markTargetReady simulates the kubelet and controllers: every StatefulSet and Deployment
// of the namespace reports all replicas ready.
func (e *env) markTargetReady() {
	e.t.Helper()
	var sts appsv1.StatefulSetList
	if err := k8sClient.List(e.ctx, &sts, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	for i := range sts.Items {
		s := &sts.Items[i]
		n := ptr.Deref(s.Spec.Replicas, 1)
		s.Status.Replicas, s.Status.ReadyReplicas, s.Status.AvailableReplicas = n, n, n
		if err := k8sClient.Status().Update(e.ctx, s); err != nil {
			e.t.Fatal(err)
		}
	}
	var deps appsv1.DeploymentList
	if err := k8sClient.List(e.ctx, &deps, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	for i := range deps.Items {
		d := &deps.Items[i]
		n := ptr.Deref(d.Spec.Replicas, 1)
		d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = n, n, n
		if err := k8sClient.Status().Update(e.ctx, d); err != nil {
			e.t.Fatal(err)
		}
	}
}

// targetReady simulates the kubelet and controllers until the run's target is ready: a
// staged target (a proxy created once its servers serve) takes a second round.
func (e *env) targetReady(name string) {
	e.t.Helper()
	for range 3 {
		e.markTargetReady()
		e.reconcile(name)
		if e.get(name).Status.Phase != v1alpha1.PhaseProvisioning {
			return
		}
	}
}

// stateName is runner i's state ConfigMap of the run's current generation.
func (e *env) stateName(run *v1alpha1.BenchmarkRun, i int) string {
	return runner.StateName(prefix(run, run.Generation), i)
}

// setRunnerState simulates runner i's agent writing its state (and optionally a result,
// stored as the agent does: in the result ConfigMap, then its size in the state).
func (e *env) setRunnerState(run *v1alpha1.BenchmarkRun, i int, data map[string]string, doc *results.Document) {
	e.t.Helper()
	if doc != nil {
		gz := encodeDoc(e.t, doc)
		var res corev1.ConfigMap
		if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: runner.ResultName(prefix(run, run.Generation), i)}, &res); err != nil {
			e.t.Fatal(err)
		}
		res.BinaryData = map[string][]byte{runner.KeyResult: gz}
		if err := k8sClient.Update(e.ctx, &res); err != nil {
			e.t.Fatal(err)
		}
		data[runner.KeyResultBytes] = fmt.Sprint(len(gz))
	}
	var cm corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: e.stateName(run, i)}, &cm); err != nil {
		e.t.Fatal(err)
	}
	for k, v := range data {
		cm.Data[k] = v
	}
	if err := k8sClient.Update(e.ctx, &cm); err != nil {
		e.t.Fatal(err)
	}
}

// encodeDoc is a result document as a runner stores it (gzip'd JSON).
func encodeDoc(t *testing.T, doc *results.Document) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := results.Encode(&b, doc); err != nil {
		t.Fatal(err)
	}
	gz, err := runner.EncodeResult(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return gz
}

// runnerDoc is a result document of runner i: calls of every scenario of the run, each
// taking 1ms, spread over 10 seconds from start.
func runnerDoc(t *testing.T, run *v1alpha1.BenchmarkRun, i int, start time.Time, calls int) *results.Document {
	t.Helper()
	var scs []results.Scenario
	for k, sc := range run.Spec.Load.Scenarios {
		rec := results.NewRecorder(sc.Name, string(sc.Type))
		s0 := start.Add(time.Duration(k) * time.Minute)
		for c := range calls {
			rec.Record(s0.Add(time.Duration(c)*10*time.Second/time.Duration(calls)), time.Millisecond+time.Duration(c%7)*time.Microsecond, "OK", "")
		}
		scs = append(scs, rec.Scenario())
	}
	doc, err := results.NewDocument(fmt.Sprintf("runner-%d", i), scs...)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// finishRunner simulates runner i going through the barrier and storing its document.
func (e *env) finishRunner(run *v1alpha1.BenchmarkRun, i int, calls int) {
	start := e.clock.Now().Add(time.Duration(i) * 3 * time.Millisecond)
	e.setRunnerState(run, i, map[string]string{
		runner.KeyState: runner.StateDone, runner.KeyLoadStartedAt: start.Format(time.RFC3339Nano),
		runner.KeyUsage: `{"cpuSeconds":12,"wallSeconds":10,"memoryPeakBytes":104857600}`,
	}, runnerDoc(e.t, run, i, start, calls))
}

// readyRunners simulates every runner reaching the barrier.
func (e *env) readyRunners(run *v1alpha1.BenchmarkRun) {
	for i := range int(run.Status.Runners.Desired) {
		e.setRunnerState(run, i, map[string]string{runner.KeyState: runner.StateReady}, nil)
	}
}

// runnerPod simulates a runner pod of the Job with the given status.
func (e *env) runnerPod(run *v1alpha1.BenchmarkRun, i int, status corev1.PodStatus) {
	e.t.Helper()
	var job batchv1.Job
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: runner.JobName(prefix(run, run.Generation))}, &job); err != nil {
		e.t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("%s-%d-x", job.Name, i), Namespace: e.ns,
		Labels:      map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(i)},
		Annotations: job.Spec.Template.Annotations,
	}, Spec: job.Spec.Template.Spec}
	for k, v := range job.Spec.Template.Labels {
		pod.Labels[k] = v
	}
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	pod.Status = status
	if err := k8sClient.Status().Update(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
}

// exists tells whether an object exists.
func (e *env) exists(obj client.Object, name string) bool {
	err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, obj)
	return err == nil && obj.GetDeletionTimestamp() == nil
}

// targetName is the name of a target object of the run's current generation.
func targetName(run *v1alpha1.BenchmarkRun, suffix string) string {
	return naming.Name(prefix(run, run.Generation), suffix)
}
