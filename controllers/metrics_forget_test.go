package controllers

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// seriesOf counts the gathered series of reg whose namespace label is ns (and, unless run
// is "", whose benchmarkrun label is run).
func seriesOf(t *testing.T, reg *prometheus.Registry, ns, run string) int {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && (run == "" || labels["benchmarkrun"] == run) {
				n++
			}
		}
	}
	return n
}

// storeFinished stores a finished status on run (as the reconciler would have) and reconciles
// it once: History exports it.
func (e *env) storeFinished(name string) {
	e.t.Helper()
	run := e.get(name)
	done := finishedRun(e.ns, name, 1000, 2)
	run.Status = done.Status
	run.Status.ObservedGeneration = run.Generation
	if err := k8sClient.Status().Update(e.ctx, run); err != nil {
		e.t.Fatal(err)
	}
	e.reconcile(name)
}

// deleteRun deletes run name and reconciles it once it is gone (the delete event).
func (e *env) deleteRun(name string) {
	e.t.Helper()
	if err := k8sClient.Delete(e.ctx, e.get(name)); err != nil {
		e.t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &v1alpha1.BenchmarkRun{})
		if kerrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s not deleted: %v", name, err)
		}
	}
	e.reconcile(name)
}

// TestHistoryDropsDeletedRuns: on the real API server, a finished run's history series go
// when the run is deleted, the other runs' stay; when the last run of a namespace goes (as
// when the namespace is deleted), so do the namespace's runs_finished_total series, while
// another namespace's are untouched. Before, the series of deleted runs and namespaces stayed
// until the manager restarted.
func TestHistoryDropsDeletedRuns(t *testing.T) {
	e, other := newEnv(t), newEnv(t)
	reg := prometheus.NewRegistry()
	h := NewHistory(reg, 0)
	e.r.History, other.r.History = h, h
	for _, name := range []string{"a", "b"} {
		e.create(e.redisRun(name, 1))
		e.storeFinished(name)
	}
	other.create(other.redisRun("c", 1))
	other.storeFinished("c")
	perRun := seriesOf(t, reg, e.ns, "a")
	if perRun == 0 || seriesOf(t, reg, e.ns, "b") != perRun || seriesOf(t, reg, other.ns, "c") != perRun {
		t.Fatalf("exported series: a %d, b %d, c %d", perRun, seriesOf(t, reg, e.ns, "b"), seriesOf(t, reg, other.ns, "c"))
	}
	e.deleteRun("a")
	if n := seriesOf(t, reg, e.ns, "a"); n != 0 {
		t.Errorf("%d series of the deleted run a left", n)
	}
	if n := seriesOf(t, reg, e.ns, "b"); n != perRun {
		t.Errorf("run b: %d series, want %d", n, perRun)
	}
	if n := seriesOf(t, reg, e.ns, ""); n != perRun+1 { // b's and the namespace's runs_finished_total
		t.Errorf("namespace %s: %d series, want %d", e.ns, n, perRun+1)
	}
	e.deleteRun("b")
	if n := seriesOf(t, reg, e.ns, ""); n != 0 {
		t.Errorf("namespace %s without runs: %d series left", e.ns, n)
	}
	if n := seriesOf(t, reg, other.ns, ""); n != perRun+1 {
		t.Errorf("the other namespace: %d series, want %d", n, perRun+1)
	}
	// a new run of a deleted run's name is exported again
	e.create(e.redisRun("a", 1))
	e.storeFinished("a")
	if n := seriesOf(t, reg, e.ns, "a"); n != perRun {
		t.Errorf("a new run a: %d series, want %d", n, perRun)
	}
}
