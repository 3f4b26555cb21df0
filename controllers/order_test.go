package controllers

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// statefulSetPod creates pod 0 of sts as the StatefulSet controller does; envtest's API
// server runs without the ServiceAccount admission plugin, so its check (the pod's account
// must exist) is made here, as that plugin makes it.
func statefulSetPod(ctx context.Context, sts *appsv1.StatefulSet) []error {
	if sa := sts.Spec.Template.Spec.ServiceAccountName; sa != "" {
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: sa}, &corev1.ServiceAccount{}); err != nil {
			return []error{fmt.Errorf("create Pod %s-0 in StatefulSet %s failed: error looking up service account %s/%s: %w",
				sts.Name, sts.Name, sts.Namespace, sa, err)}
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sts.Name + "-0", Namespace: sts.Namespace,
		Labels: sts.Spec.Template.Labels}, Spec: sts.Spec.Template.Spec}
	if err := k8sClient.Create(ctx, pod); err != nil {
		return []error{fmt.Errorf("pod of StatefulSet %s: %w", sts.Name, err)}
	}
	return nil
}

// TestHARunCreatesPodsAccountFirst: provisioning an ha and a proxy target creates the
// redis-role ServiceAccount before the StatefulSets whose pods run as it. The StatefulSet
// controller (not part of envtest) is played at its fastest: the moment the manager creates a
// StatefulSet, one pod of its template is created on the real API server, after the check the
// ServiceAccount admission plugin makes (it refuses a pod of an account that does not exist yet: what became a FailedCreate
// Warning Event on every healthy HA or proxy run). No refusal, and no Warning recorded.
func TestHARunCreatesPodsAccountFirst(t *testing.T) {
	for _, mode := range []v1alpha1.RedisMode{v1alpha1.RedisHA, v1alpha1.RedisProxy} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			var refused []error
			ww, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
			if err != nil {
				t.Fatal(err)
			}
			e.r = e.reconciler(interceptor.NewClient(ww, interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if err := c.Create(ctx, obj, opts...); err != nil {
						return err
					}
					if sts, ok := obj.(*appsv1.StatefulSet); ok {
						refused = append(refused, statefulSetPod(ctx, sts)...)
					}
					return nil
				},
			}))
			run := e.redisRun("order", 1)
			run.Spec.Target.Redis.Mode = mode
			e.create(run)
			e.until("order", v1alpha1.PhaseProvisioning)
			e.targetReady("order")
			for _, err := range refused {
				t.Error(err)
			}
			var sts appsv1.StatefulSetList
			if err := k8sClient.List(e.ctx, &sts, client.InNamespace(e.ns)); err != nil || len(sts.Items) < 2 {
				t.Fatalf("%d StatefulSets: %v", len(sts.Items), err)
			}
			e.drainEvents()
			for _, ev := range e.events {
				if len(ev) >= 7 && ev[:7] == "Warning" {
					t.Errorf("Warning Event on a healthy %s run: %s", mode, ev)
				}
			}
		})
	}
}
