package controllers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestRecreatedRunAdoptsNothing: a run deleted and applied again under the same name before
// the garbage collector took its objects (envtest has no garbage collector: they stay) never
// adopts them. Its runner state ConfigMaps said "done" with the old run's documents; the new
// run used to take them as its own and collect the old run's results without any load. Now the
// old objects are deleted (UID precondition) and the new run creates and uses its own.
func TestRecreatedRunAdoptsNothing(t *testing.T) {
	e := newEnv(t)
	old := e.startedRun(e.redisRun("again", 1))
	e.finishRunner(old, 0, 40)
	old = e.get(old.Name)
	old.Finalizers = nil // deleted at once, its objects left behind
	if err := k8sClient.Update(e.ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Delete(e.ctx, old); err != nil {
		t.Fatal(err)
	}
	run := e.create(e.redisRun("again", 1))
	for range 6 {
		err := e.try(run.Name) // errForeign while the old objects go
		p := e.get(run.Name).Status.Phase
		t.Logf("phase %s: %v", p, err)
		if p == v1alpha1.PhaseStarting {
			break
		}
		e.markTargetReady()
	}
	run = e.get(run.Name)
	if run.Status.Phase != v1alpha1.PhaseStarting {
		t.Fatalf("phase %s, conditions %+v", run.Status.Phase, run.Status.Conditions)
	}
	var cm corev1.ConfigMap
	if !e.exists(&cm, e.stateName(run, 0)) || !metav1.IsControlledBy(&cm, run) || cm.Data[runner.KeyState] != "" {
		t.Fatalf("state ConfigMap %+v", cm.ObjectMeta)
	}
	e.readyRunners(run)
	e.until(run.Name, v1alpha1.PhaseRunning)
	e.reconcile(run.Name)
	if p := e.get(run.Name).Status.Phase; p != v1alpha1.PhaseRunning {
		t.Fatalf("the new run took the old run's documents: phase %s", p)
	}
}

// TestArchivePatchLost: the status patch that stores a superseded generation's history record
// is lost (500); the next step still finds that generation's documents and the record has them.
// The objects used to be deleted before the patch: the retry merged nothing.
func TestArchivePatchLost(t *testing.T) {
	e := newEnv(t)
	ww, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	lose := false
	e.r = e.reconciler(interceptor.NewClient(ww, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if run, ok := obj.(*v1alpha1.BenchmarkRun); ok && lose && len(run.Status.History) > 0 {
				lose = false
				return kerrors.NewInternalError(context.DeadlineExceeded)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}))
	run := e.startedRun(e.redisRun("lost-patch", 1))
	e.finishRunner(run, 0, 40)
	e.reconcile(run.Name) // → Collecting
	cur := e.get(run.Name)
	cur.Spec.Load.Duration.Duration *= 2
	if err := k8sClient.Update(e.ctx, cur); err != nil {
		t.Fatal(err)
	}
	lose = true
	if err := e.try(run.Name); err == nil {
		t.Fatal("the lost patch was not reported")
	}
	e.reconcile(run.Name)
	st := e.get(run.Name).Status
	if st.ObservedGeneration != 2 || len(st.History) != 1 || len(st.History[0].Results) != 2 || st.History[0].Results[0].Calls != 40 {
		t.Fatalf("history after a lost patch: %+v", st.History)
	}
}

// TestReleasePatchLost: the step that releases the barrier loses its status patch (500), and a
// runner stops during the load and stores its partial document before the next step. That step
// used to fail the run "runner failed before the load started" with no results; now it sees the
// released barrier, moves to Running and the document is collected.
func TestReleasePatchLost(t *testing.T) {
	e := newEnv(t)
	ww, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	lose := true
	e.r = e.reconciler(interceptor.NewClient(ww, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if run, ok := obj.(*v1alpha1.BenchmarkRun); ok && lose && run.Status.Phase == v1alpha1.PhaseRunning {
				lose = false
				return kerrors.NewInternalError(context.DeadlineExceeded)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}))
	run := e.redisRun("lost-release", 2)
	e.create(run)
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.targetReady(run.Name)
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	e.readyRunners(run)
	if err := e.try(run.Name); err == nil {
		t.Fatal("the lost patch was not reported")
	}
	e.stopRunner(run, 0, 15)
	e.finishRunner(run, 1, 20)
	got := e.until(run.Name, v1alpha1.PhaseFailed)
	if len(got.Status.Results) != 2 || got.Status.Results[0].Calls != 35 || got.Status.LoadStartTime == nil {
		t.Fatalf("results %+v conditions %+v", got.Status.Results, got.Status.Conditions)
	}
}
