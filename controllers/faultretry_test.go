package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestFaultAppliedOnlyOnceDone: the pod delete of a due kill fails with 429; the fault is not
// recorded Applied (its record says Pending: which pod, which UID) and the next step deletes
// that pod and only then records Applied. It used to be recorded Applied before the delete
// and, the delete failing, Failed for good.
func TestFaultAppliedOnlyOnceDone(t *testing.T) {
	e := newEnv(t)
	ww, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	refuse := 1
	e.r = e.reconciler(interceptor.NewClient(ww, interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if refuse > 0 && e.isPod(obj) {
				refuse--
				return kerrors.NewTooManyRequests("slow down", 1)
			}
			return c.Delete(ctx, obj, opts...)
		},
	}))
	run := e.faultRun("retried-kill")
	run.Spec.Faults = run.Spec.Faults[1:2] // restart a replica 10 s into get
	run = e.startedRun(run)
	replica := e.targetPod(run, "redis-replica", 0, "replica")
	load := e.r.loadStart(e.ctx, &step{run: run})

	e.clock.t = load.Add(10 * time.Second)
	if err := e.try(run.Name); err == nil {
		t.Fatal("the refused delete was not retried")
	}
	rec, err := e.r.faultRecord(e.ctx, e.get(run.Name), 0)
	if err != nil || rec == nil || rec.Data[faultKeyOutcome] != faultPending || rec.Data[faultKeyPodUID] != string(replica.UID) {
		t.Fatalf("record after the refused delete: %+v, %v", rec, err)
	}
	if fs := e.get(run.Name).Status.Faults; len(fs) != 0 || e.podGone(replica.Name) {
		t.Fatalf("fault recorded or pod gone before the delete happened: %+v", fs)
	}
	e.clock.t = load.Add(11 * time.Second)
	e.reconcile(run.Name)
	fs := e.get(run.Name).Status.Faults
	if len(fs) != 1 || fs[0].Outcome != v1alpha1.FaultApplied || fs[0].Pod != replica.Name || !e.podGone(replica.Name) || fs[0].LateMs != 0 {
		t.Fatalf("after the retry: %+v (pod gone %v)", fs, e.podGone(replica.Name))
	}
}

// isPod tells whether obj is a pod.
func (e *env) isPod(obj client.Object) bool {
	_, ok := obj.(*corev1.Pod)
	return ok
}
