package controllers

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestProxyRefusedPassword: a proxy pod whose container refused the Redis password (its
// termination message, written by the proxy script) fails the run at once, long before
// timeouts.targetReady, with the message in TargetReady and Succeeded.
func TestProxyRefusedPassword(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("badpass", 1)
	run.Spec.Target.Redis = &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy, Provider: v1alpha1.ProviderBuiltin,
		PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "pw", Key: "password"}}
	e.create(run)
	run = e.until(run.Name, v1alpha1.PhaseProvisioning)
	// Staged: the proxy starts only once its servers serve (it resolves their per-pod names
	// at start; a name looked up too early stays a DNS miss for the negative-cache TTL).
	var dep appsv1.Deployment
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: targetName(run, "proxy")}, &dep); !apierrors.IsNotFound(err) {
		t.Fatalf("proxy Deployment before the servers are ready: %v", err)
	}
	if c := meta.FindStatusCondition(e.get(run.Name).Status.Conditions, v1alpha1.ConditionTargetReady); c == nil || !strings.Contains(c.Message, "StatefulSet") {
		t.Fatalf("TargetReady while the servers start: %+v", c)
	}
	e.markTargetReady() // the StatefulSets
	e.clock.Step(10 * time.Second)
	e.reconcile(run.Name)
	if got := e.get(run.Name).Status.Phase; got != v1alpha1.PhaseProvisioning {
		t.Fatalf("phase %s without a failed proxy pod", got)
	}
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: targetName(run, "proxy")}, &dep); err != nil {
		t.Fatalf("proxy Deployment once the servers serve: %v", err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: dep.Name + "-7d9f-x", Namespace: e.ns, Labels: dep.Spec.Template.Labels},
		Spec: dep.Spec.Template.Spec}
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		t.Fatal(err)
	}
	const why = "the Redis password is not valid UTF-8; camellia-redis-proxy holds passwords as Java strings and cannot use it (use a UTF-8 password with mode proxy)"
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", RestartCount: 1,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "benchrun: " + why + "\n"}}}}
	if err := k8sClient.Status().Update(e.ctx, pod); err != nil {
		t.Fatal(err)
	}
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	want := "proxy pod " + pod.Name + ": " + why
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionTargetReady); c == nil || c.Status != metav1.ConditionFalse || c.Message != want {
		t.Fatalf("TargetReady %+v", c)
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded); c == nil || c.Reason != "TargetFailed" || !strings.Contains(c.Message, why) {
		t.Fatalf("Succeeded %+v", c)
	}
	if !e.hasEvent("TargetFailed") {
		t.Fatalf("no TargetFailed Event: %q", e.events)
	}
}
