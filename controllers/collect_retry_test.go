package controllers

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// flakyResults makes the env's reconciler read result ConfigMaps through fail: fail(name)
// returns the error a Get of that ConfigMap gets (nil: none).
func (e *env) flakyResults(fail func(name string) error) {
	e.t.Helper()
	ww, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		e.t.Fatal(err)
	}
	e.r = e.reconciler(interceptor.NewClient(ww, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, isCM := obj.(*corev1.ConfigMap); isCM && strings.Contains(key.Name, "-result-") {
				if err := fail(key.Name); err != nil {
					return err
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}))
}

// try reconciles once and returns the error.
func (e *env) try(name string) error {
	_, err := e.r.Reconcile(e.ctx, reconcileRequest(e.ns, name))
	e.drainEvents()
	return err
}

// TestCollectRetriesTransientErrors: 429, 500, a timeout and a conflict while reading runner
// results are retried (the run stays Collecting); once they stop, every runner's document is
// merged and the run succeeds. One 429 used to fail the run with NoResults for good.
func TestCollectRetriesTransientErrors(t *testing.T) {
	e := newEnv(t)
	errs := []error{
		kerrors.NewTooManyRequests("slow down", 1),
		kerrors.NewInternalError(context.DeadlineExceeded),
		kerrors.NewTimeoutError("the server timed out", 1),
		kerrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "x", nil),
		kerrors.NewServiceUnavailable("etcd leader changed"),
	}
	var n atomic.Int32
	e.flakyResults(func(string) error {
		if k := int(n.Add(1)) - 1; k < len(errs) {
			return errs[k]
		}
		return nil
	})
	run := e.startedRun(e.redisRun("transient", 2))
	e.finishRunner(run, 0, 30)
	e.finishRunner(run, 1, 20)
	e.reconcile(run.Name) // Running → Collecting
	for k := range errs {
		if err := e.try(run.Name); err == nil {
			t.Fatalf("error %d (%v) not retried", k, errs[k])
		}
		if p := e.get(run.Name).Status.Phase; p != v1alpha1.PhaseCollecting {
			t.Fatalf("after error %d: phase %s", k, p)
		}
	}
	got := e.until(run.Name, v1alpha1.PhaseSucceeded)
	if got.Status.Partial || len(got.Status.Results) != 2 || got.Status.Results[0].Calls != 50 {
		t.Fatalf("partial %v results %+v", got.Status.Partial, got.Status.Results)
	}
}

// TestCollectDeadlineKeepsWhatWasRead: runner 1's result stays unreadable (500); at the
// collect deadline the run ends with runner 0's document merged and runner 1 missing with the
// reason, instead of being retried for ever or losing runner 0's figures.
func TestCollectDeadlineKeepsWhatWasRead(t *testing.T) {
	e := newEnv(t)
	e.flakyResults(func(name string) error {
		if strings.HasSuffix(name, "-result-1") {
			return kerrors.NewInternalError(context.Canceled)
		}
		return nil
	})
	run := e.startedRun(e.redisRun("deadline-kept", 2))
	e.finishRunner(run, 0, 30)
	e.finishRunner(run, 1, 20)
	e.reconcile(run.Name) // Running → Collecting
	if err := e.try(run.Name); err == nil {
		t.Fatal("error not retried before the deadline")
	}
	e.clock.Step(collectTimeout)
	if err := e.try(run.Name); err != nil {
		t.Fatalf("at the deadline: %v", err)
	}
	got := e.get(run.Name)
	c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionSucceeded)
	if got.Status.Phase != v1alpha1.PhaseFailed || c == nil || c.Reason != "PartialResults" {
		t.Fatalf("phase %s condition %+v", got.Status.Phase, c)
	}
	if len(got.Status.Results) != 2 || got.Status.Results[0].Calls != 30 || !got.Status.Partial {
		t.Fatalf("runner 0's figures not kept: partial %v %+v", got.Status.Partial, got.Status.Results)
	}
	if !strings.Contains(strings.Join(got.Status.PartialReasons, ";"), "runner-1: result not readable by the collect deadline") {
		t.Fatalf("partial reasons %q", got.Status.PartialReasons)
	}
}

// TestCollectPermanentMissing: a result ConfigMap deleted after its runner stored it, and a
// document that does not decode, make those runners' results missing at once (no retry).
func TestCollectPermanentMissing(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("permanent", 3))
	for i := range 3 {
		e.finishRunner(run, i, 10*(i+1))
	}
	var res corev1.ConfigMap
	key := client.ObjectKey{Namespace: e.ns, Name: runner.ResultName(prefix(run, run.Generation), 1)}
	if err := k8sClient.Get(e.ctx, key, &res); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Delete(e.ctx, &res); err != nil {
		t.Fatal(err)
	}
	key.Name = runner.ResultName(prefix(run, run.Generation), 2)
	if err := k8sClient.Get(e.ctx, key, &res); err != nil {
		t.Fatal(err)
	}
	res.BinaryData[runner.KeyResult] = []byte("not gzip")
	if err := k8sClient.Update(e.ctx, &res); err != nil {
		t.Fatal(err)
	}
	got := e.until(run.Name, v1alpha1.PhaseFailed)
	if len(got.Status.Results) != 2 || got.Status.Results[0].Calls != 10 || len(got.Status.PartialReasons) < 2 {
		t.Fatalf("results %+v reasons %q", got.Status.Results, got.Status.PartialReasons)
	}
}

// TestSupersededCollectDeadline: a spec edited while its generation collects and its results
// cannot be read (500) does not wedge: the superseded generation's collection is retried until
// the collect deadline counted from when it began, then the new generation is accepted with
// the old one in status.history (what could not be read marked missing).
func TestSupersededCollectDeadline(t *testing.T) {
	e := newEnv(t)
	e.flakyResults(func(string) error { return kerrors.NewServiceUnavailable("down") })
	run := e.startedRun(e.redisRun("superseded", 1))
	e.finishRunner(run, 0, 30)
	e.reconcile(run.Name) // Running → Collecting
	cur := e.get(run.Name)
	cur.Spec.Load.Duration = metav1.Duration{Duration: 2 * cur.Spec.Load.Duration.Duration}
	if err := k8sClient.Update(e.ctx, cur); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := e.try(run.Name); err == nil {
			t.Fatal("superseded collection error not retried")
		}
		e.clock.Step(collectTimeout / 4)
	}
	if st := e.get(run.Name).Status; st.ObservedGeneration != 1 {
		t.Fatalf("accepted before the deadline: %+v", st)
	}
	e.clock.Step(collectTimeout / 4)
	if err := e.try(run.Name); err != nil {
		t.Fatalf("at the deadline: %v", err)
	}
	st := e.get(run.Name).Status
	if st.ObservedGeneration != 2 || len(st.History) != 1 || st.History[0].Phase != v1alpha1.PhaseFailed {
		t.Fatalf("status %+v", st)
	}
}

// TestCollectGivesUpAfterLastTry: a run still Collecting collectLastTry after its deadline (every
// last attempt ended without a step: the manager crashed reading a document) ends Failed with
// CollectTimeout without reading any document again.
func TestCollectGivesUpAfterLastTry(t *testing.T) {
	e := newEnv(t)
	var reads atomic.Int32
	e.flakyResults(func(string) error { reads.Add(1); return nil })
	run := e.startedRun(e.redisRun("crashing", 1))
	e.finishRunner(run, 0, 30)
	e.reconcile(run.Name) // Running → Collecting
	e.clock.Step(collectTimeout + collectLastTry)
	if err := e.try(run.Name); err != nil {
		t.Fatal(err)
	}
	got := e.get(run.Name)
	c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionSucceeded)
	if got.Status.Phase != v1alpha1.PhaseFailed || c == nil || c.Reason != "CollectTimeout" || reads.Load() != 0 {
		t.Fatalf("phase %s condition %+v, %d documents read", got.Status.Phase, c, reads.Load())
	}
}
