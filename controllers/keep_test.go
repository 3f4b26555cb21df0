package controllers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestSpecEditMidRunKeepsResults: a spec edit while the load runs stops that generation,
// and what its runners had stored (runner 0 done, runner 1 still running) lands in
// status.history with a report, before its state and result ConfigMaps are deleted.
func TestSpecEditMidRunKeepsResults(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("edited", 2))
	e.finishRunner(run, 0, 40)
	e.reconcile(run.Name)
	if got := e.get(run.Name).Status.Phase; got != v1alpha1.PhaseRunning {
		t.Fatalf("phase %s while runner 1 runs", got)
	}
	oldResult := runner.ResultName(prefix(run, run.Generation), 0)

	run = e.get(run.Name)
	run.Spec.Load.Duration = metav1.Duration{Duration: 2 * time.Minute}
	if err := k8sClient.Update(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	e.reconcile(run.Name) // runner 1 is stopped (stop.go); it never stores anything here
	e.clock.Step(stopWait)
	e.reconcile(run.Name)
	st := e.get(run.Name).Status
	if st.ObservedGeneration != 2 || len(st.History) != 1 {
		t.Fatalf("status %+v", st)
	}
	h := st.History[0]
	if h.Generation != 1 || h.Phase != v1alpha1.PhaseFailed || !h.Partial || len(h.Results) != 2 || h.Results[0].Calls != 40 || h.Report == nil {
		t.Fatalf("history record %+v", h)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, h.Report.ConfigMapName) || !strings.Contains(report.Data["report.md"], "PARTIAL RESULTS") {
		t.Fatalf("superseded generation's report: %v", report.Data["report.md"])
	}
	// The new generation's first step deletes them, once the history record is stored.
	if !e.exists(&corev1.ConfigMap{}, oldResult) {
		t.Fatal("superseded runner ConfigMaps deleted before the status patch that stores their history record")
	}
	e.reconcile(run.Name)
	if e.exists(&corev1.ConfigMap{}, oldResult) || e.exists(&corev1.ConfigMap{}, runner.StateName(prefix(run, 1), 0)) {
		t.Fatal("superseded runner ConfigMaps not cleaned up")
	}
	if !e.hasEvent("Superseded") || !e.hasEvent("Archived") {
		t.Fatalf("events %q", e.events)
	}
}

// TestDeleteMidRunKeepsResults: a run deleted while the load runs is held by its finalizer
// until what its runners stored is merged into a report ConfigMap that it does not own, so
// the report survives the run; a finished run loses its finalizer and deletes at once.
func TestDeleteMidRunKeepsResults(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("deleted", 2))
	run = e.get(run.Name)
	if !hasFinalizer(run) {
		t.Fatalf("running run without the %s finalizer: %v", finalizerResults, run.Finalizers)
	}
	e.finishRunner(run, 1, 25)
	if err := k8sClient.Delete(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	e.reconcile(run.Name) // runner 0 is stopped (stop.go); it never stores anything here
	e.clock.Step(stopWait)
	e.reconcile(run.Name)
	var gone v1alpha1.BenchmarkRun
	if err := k8sClient.Get(e.ctx, client.ObjectKeyFromObject(run), &gone); err == nil {
		t.Fatalf("run still there after its results were kept: finalizers %v", gone.Finalizers)
	}
	var kept corev1.ConfigMapList
	if err := k8sClient.List(e.ctx, &kept, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	var found *corev1.ConfigMap
	for i := range kept.Items {
		if kept.Items[i].Annotations[annotationKeptFrom] == run.Name {
			found = &kept.Items[i]
		}
	}
	if found == nil || len(found.OwnerReferences) != 0 || !strings.Contains(found.Data["report.md"], "PARTIAL RESULTS") ||
		!strings.Contains(found.Data["results.json"], `"calls": 25`) && !strings.Contains(found.Data["results.json"], `"calls":25`) {
		t.Fatalf("kept report %+v", found)
	}
	if !e.hasEvent("ResultsKept") {
		t.Fatalf("events %q", e.events)
	}

	// A finished run carries no finalizer: deleting it (or its namespace) never waits.
	done := e.startedRun(e.redisRun("finished", 1))
	e.finishRunner(done, 0, 5)
	e.until(done.Name, v1alpha1.PhaseSucceeded)
	e.reconcile(done.Name)
	if done = e.get(done.Name); hasFinalizer(done) {
		t.Fatalf("finished run keeps its finalizer %v", done.Finalizers)
	}
}

// TestLegacyResultInState: a runner of an older version stores its result in its state
// ConfigMap; the manager still collects it.
func TestLegacyResultInState(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("legacy", 1))
	var cm corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: e.stateName(run, 0)}, &cm); err != nil {
		t.Fatal(err)
	}
	cm.Data[runner.KeyState] = runner.StateDone
	cm.Data[runner.KeyLoadStartedAt] = e.clock.Now().Format(time.RFC3339Nano)
	cm.BinaryData = map[string][]byte{runner.KeyResult: encodeDoc(t, runnerDoc(t, run, 0, e.clock.Now(), 15))}
	if err := k8sClient.Update(e.ctx, &cm); err != nil {
		t.Fatal(err)
	}
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	if run.Status.Results[0].Calls != 15 {
		t.Fatalf("results %+v", run.Status.Results)
	}
}

// hasFinalizer tells whether run carries finalizerResults.
func hasFinalizer(run *v1alpha1.BenchmarkRun) bool {
	for _, f := range run.Finalizers {
		if f == finalizerResults {
			return true
		}
	}
	return false
}
