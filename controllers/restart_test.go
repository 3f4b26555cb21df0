package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// crashOnReport is a client whose report writes fail: the operator "dies" in the middle of
// the collection, after it read the runners' documents and before it stored anything.
type crashOnReport struct{ client.Client }

// Create fails for report ConfigMaps.
func (c crashOnReport) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if strings.HasSuffix(obj.GetName(), "-report") {
		return errors.New("operator killed")
	}
	return c.Client.Create(ctx, obj, opts...)
}

// Update fails for report ConfigMaps.
func (c crashOnReport) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if strings.HasSuffix(obj.GetName(), "-report") {
		return errors.New("operator killed")
	}
	return c.Client.Update(ctx, obj, opts...)
}

// startManager runs a manager (its own cache, a fresh reconciler) on the env's namespace;
// wrap, when set, wraps its client, and configure, when set, adjusts the reconciler before it
// is set up. It returns a function stopping it.
func startManager(t *testing.T, e *env, wrap func(client.Client) client.Client,
	configure func(*BenchmarkRunReconciler, ctrl.Manager)) func() {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := mgr.GetClient()
	if wrap != nil {
		c = wrap(c)
	}
	r := e.reconciler(c)
	r.PollInterval = 100 * time.Millisecond
	if configure != nil {
		configure(r, mgr)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	return func() { cancel(); <-done }
}

// TestOperatorRestartDuringCollection: the operator dies while collecting; a new operator
// (new manager, empty memory) collects everything from the runners' stored documents.
func TestOperatorRestartDuringCollection(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("restart", 3))
	for i := range 3 {
		e.finishRunner(run, i, 40)
	}

	stopA := startManager(t, e, func(c client.Client) client.Client { return crashOnReport{c} }, nil)
	waitFor(t, func() bool { return e.get(run.Name).Status.Phase == v1alpha1.PhaseCollecting })
	time.Sleep(300 * time.Millisecond) // a few failed collection attempts
	stopA()
	if st := e.get(run.Name).Status; st.Phase != v1alpha1.PhaseCollecting || len(st.Results) != 0 {
		t.Fatalf("after the crash: phase %s, %d results", st.Phase, len(st.Results))
	}

	stopB := startManager(t, e, nil, nil)
	defer stopB()
	waitFor(t, func() bool { return e.get(run.Name).Status.Phase == v1alpha1.PhaseSucceeded })
	st := e.get(run.Name).Status
	if st.Partial || len(st.Results) != 2 || st.Results[0].Calls != 120 || st.Results[1].Calls != 120 || st.Runners.Succeeded != 3 {
		t.Fatalf("after the restart: partial %v results %+v runners %+v", st.Partial, st.Results, st.Runners)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, st.Report.ConfigMapName) || !strings.Contains(report.Data["report.md"], "| get") {
		t.Fatalf("report %v", report.Data)
	}
}

// TestSecretNeverExposed: a Redis password and a HeTu auth key reach pods only through
// secretKeyRef; their values appear in no status, Event, ConfigMap or pod template.
func TestSecretNeverExposed(t *testing.T) {
	e := newEnv(t)
	const password, authKey = "s3cr3t-Pa55-value", "hetu-auth-key-value"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "auth", Namespace: e.ns},
		StringData: map[string]string{"password": password, "key": authKey}}
	if err := k8sClient.Create(e.ctx, secret); err != nil {
		t.Fatal(err)
	}
	ref := &v1alpha1.SecretKeyRef{Name: "auth", Key: "password"}

	proxy := e.redisRun("proxy", 2)
	proxy.Spec.Target.Redis = &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy, Provider: v1alpha1.ProviderBuiltin, PasswordSecretRef: ref}
	hetu := e.redisRun("hetu", 1)
	hetu.Spec.Target = v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{
		AuthKeySecretRef: &v1alpha1.SecretKeyRef{Name: "auth", Key: "key"},
		Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin,
			Replicas: ptr.To[int32](1), Sentinels: ptr.To[int32](3), PasswordSecretRef: ref}}}}
	hetu.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "hello", Type: v1alpha1.ScenarioHeTuHelloWorld}}
	for _, run := range []*v1alpha1.BenchmarkRun{proxy, hetu} {
		run = e.startedRun(run)
		for i := range int(run.Status.Runners.Desired) {
			e.finishRunner(run, i, 10)
		}
		e.until(run.Name, v1alpha1.PhaseSucceeded)
	}

	leaks := func(what string, v any) {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), password) || strings.Contains(string(b), authKey) {
			t.Errorf("secret value in %s", what)
		}
	}
	var runs v1alpha1.BenchmarkRunList
	var cms corev1.ConfigMapList
	var sts appsv1.StatefulSetList
	var deps appsv1.DeploymentList
	var jobs batchv1.JobList
	for _, list := range []client.ObjectList{&runs, &cms, &sts, &deps, &jobs} {
		if err := k8sClient.List(e.ctx, list, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		leaks(fmt.Sprintf("%T", list), list)
	}
	e.drainEvents()
	leaks("events", e.events)
	if len(cms.Items) < 10 || len(sts.Items) < 3 || len(deps.Items) < 2 || len(jobs.Items) != 2 {
		t.Fatalf("expected the objects of both runs: %d cms, %d sts, %d deployments, %d jobs", len(cms.Items), len(sts.Items), len(deps.Items), len(jobs.Items))
	}
	// Pods get the values through secretKeyRef only.
	fromSecret := func(env []corev1.EnvVar, name string) bool {
		for _, v := range env {
			if v.Name == name {
				return v.Value == "" && v.ValueFrom != nil && v.ValueFrom.SecretKeyRef != nil && v.ValueFrom.SecretKeyRef.Name == "auth"
			}
		}
		return false
	}
	for _, j := range jobs.Items {
		if !fromSecret(j.Spec.Template.Spec.Containers[0].Env, "BENCHRUN_REDIS_PASSWORD") {
			t.Errorf("job %s: no secretKeyRef password env", j.Name)
		}
	}
	for _, s := range sts.Items {
		if !fromSecret(s.Spec.Template.Spec.Containers[0].Env, "REDIS_PASSWORD") {
			t.Errorf("statefulset %s: no secretKeyRef password env", s.Name)
		}
	}
	for _, d := range deps.Items {
		if !fromSecret(d.Spec.Template.Spec.Containers[0].Env, "REDIS_PASSWORD") {
			t.Errorf("deployment %s: no secretKeyRef password env", d.Name)
		}
	}
}
