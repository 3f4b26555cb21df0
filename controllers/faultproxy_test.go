package controllers

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestFaultProbeThroughProxy: with redis mode proxy, runner 0's fault probe writes through
// the proxy Service (the write endpoint the load uses, not the master behind it), and faults
// on roles master and proxy act on the master pod and on the first proxy pod.
func TestFaultProbeThroughProxy(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("proxyfault", 1)
	run.Spec.Target.Redis.Mode = v1alpha1.RedisProxy
	run.Spec.Target.Redis.Replicas = ptrInt32(1)
	run.Spec.Faults = []v1alpha1.Fault{
		{Scenario: "set", Offset: metav1.Duration{Duration: 10 * time.Second}, Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleMaster},
		{Scenario: "set", Offset: metav1.Duration{Duration: 40 * time.Second}, Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleProxy},
	}
	run = e.startedRun(run)
	var cm corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: e.stateName(run, 0)}, &cm); err != nil {
		t.Fatal(err)
	}
	inv, err := runner.DecodeInvocation(&cm)
	if err != nil {
		t.Fatal(err)
	}
	p := runner.ProbeFor(inv.Env, inv.Env[plan.EnvFaultProbe], "")
	if want := targetName(run, "proxy") + "." + e.ns + ".svc:6380"; p == nil || p.Addr != want {
		t.Fatalf("fault probe %+v, want one writing through the proxy %s (env %v)", p, want, inv.Env)
	}

	master := e.targetPod(run, "redis-master", 0, "master")
	e.targetPod(run, "redis-replica", 0, "replica")
	proxies := []*corev1.Pod{e.proxyPod(run, "b"), e.proxyPod(run, "a")}
	load := e.r.loadStart(e.ctx, &step{run: run})
	// set starts at 1m + 2s grace: the master kill is due at 1m12s, the proxy kill at 1m42s
	e.clock.t = load.Add(72 * time.Second)
	e.reconcile(run.Name)
	e.clock.t = load.Add(102 * time.Second)
	e.reconcile(run.Name)
	fs := e.get(run.Name).Status.Faults
	if len(fs) != 2 || fs[0].Pod != master.Name || fs[1].Pod != proxies[1].Name || fs[0].Outcome != v1alpha1.FaultApplied || fs[1].Outcome != v1alpha1.FaultApplied {
		t.Fatalf("status.faults: %+v", fs)
	}
	if !e.podGone(master.Name) || !e.podGone(proxies[1].Name) || e.podGone(proxies[0].Name) {
		t.Errorf("gone: master %v, proxy %s %v, proxy %s %v", e.podGone(master.Name), proxies[1].Name, e.podGone(proxies[1].Name),
			proxies[0].Name, e.podGone(proxies[0].Name))
	}
}

// proxyPod simulates the Deployment controller and kubelet: a Running proxy pod from the
// proxy Deployment's template, named with suffix.
func (e *env) proxyPod(run *v1alpha1.BenchmarkRun, suffix string) *corev1.Pod {
	e.t.Helper()
	var dep appsv1.Deployment
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: targetName(run, "proxy")}, &dep); err != nil {
		e.t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: dep.Name + "-" + suffix, Namespace: e.ns, Labels: dep.Spec.Template.Labels},
		Spec: dep.Spec.Template.Spec}
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if err := k8sClient.Status().Update(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	return pod
}
