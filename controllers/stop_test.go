package controllers

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// stopRunner simulates runner i of a stopped generation: SIGTERM made k6 stop early, the
// agent stored the partial document, then its failed state.
func (e *env) stopRunner(run *v1alpha1.BenchmarkRun, i, calls int) {
	start := e.clock.Now()
	e.setRunnerState(run, i, map[string]string{
		runner.KeyState: runner.StateFailed, runner.KeyReason: "k6 exited with code 105",
		runner.KeyLoadStartedAt: start.Format(time.RFC3339Nano),
	}, runnerDoc(e.t, run, i, start, calls))
}

// checkStopping asserts the generation of run is stopping: its runner Job deleted, the
// LoadComplete condition Stopping.
func (e *env) checkStopping(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	e.t.Helper()
	got := e.get(run.Name)
	c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionLoadComplete)
	if got.Status.ObservedGeneration != run.Generation || c == nil || c.Reason != reasonStopping {
		e.t.Fatalf("not stopping: generation %d, LoadComplete %+v", got.Status.ObservedGeneration, c)
	}
	if e.exists(&batchv1.Job{}, runner.JobName(prefix(run, run.Generation))) {
		e.t.Fatal("the stopped generation's runner Job is still there")
	}
	return got
}

// TestSpecEditWaitsForStoppedRunners: a spec edit while runner 1 still loads stops it (its Job
// is deleted) and waits, at most stopWait, for the partial document it stores on SIGTERM; the
// history record merges both runners (40 + 15 calls).
func TestSpecEditWaitsForStoppedRunners(t *testing.T) {
	e := newEnv(t)
	gen1 := e.startedRun(e.redisRun("edit-flush", 2))
	e.finishRunner(gen1, 0, 40)
	e.reconcile(gen1.Name)

	run := e.get(gen1.Name)
	run.Spec.Load.Duration = metav1.Duration{Duration: 2 * time.Minute}
	if err := k8sClient.Update(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	if res := e.reconcile(run.Name); res.RequeueAfter != stopPoll {
		t.Fatalf("requeue %v while runners stop", res)
	}
	e.checkStopping(gen1)
	e.clock.Step(stopWait / 2)
	e.reconcile(run.Name)
	e.checkStopping(gen1) // still within stopWait: still waiting

	e.stopRunner(gen1, 1, 15)
	e.reconcile(run.Name)
	st := e.get(run.Name).Status
	if st.ObservedGeneration != 2 || len(st.History) != 1 {
		t.Fatalf("status %+v", st)
	}
	h := st.History[0]
	if h.Generation != 1 || !h.Partial || len(h.Results) != 2 || h.Results[0].Calls != 55 || h.Report == nil {
		t.Fatalf("history record %+v", h)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, h.Report.ConfigMapName) || !strings.Contains(report.Data["report.md"], "k6 exited with code 105") {
		t.Fatalf("superseded generation's report: %v", report.Data["report.md"])
	}
	if !e.hasEvent("LoadCompleteStopping") || !e.hasEvent("Superseded") {
		t.Fatalf("events %q", e.events)
	}
}

// TestDeleteWaitsForStoppedRunners: a run deleted while runner 0 still loads stops it and waits
// for its partial document before keeping the report (25 + 10 calls) and letting the run go.
func TestDeleteWaitsForStoppedRunners(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("delete-flush", 2))
	e.finishRunner(run, 1, 25)
	e.reconcile(run.Name)
	if err := k8sClient.Delete(e.ctx, e.get(run.Name)); err != nil {
		t.Fatal(err)
	}
	e.reconcile(run.Name)
	if got := e.checkStopping(run); !hasFinalizer(got) {
		t.Fatalf("stopping run lost its finalizer: %v", got.Finalizers)
	}

	e.stopRunner(run, 0, 10)
	e.reconcile(run.Name)
	if err := k8sClient.Get(e.ctx, client.ObjectKeyFromObject(run), &v1alpha1.BenchmarkRun{}); err == nil {
		t.Fatal("run still there after its runners stored their results")
	}
	var cms corev1.ConfigMapList
	if err := k8sClient.List(e.ctx, &cms, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	var kept *corev1.ConfigMap
	for i := range cms.Items {
		if cms.Items[i].Annotations[annotationKeptFrom] == run.Name {
			kept = &cms.Items[i]
		}
	}
	if kept == nil || !strings.Contains(strings.ReplaceAll(kept.Data["results.json"], " ", ""), `"calls":35`) {
		t.Fatalf("kept report %+v", kept)
	}
}
