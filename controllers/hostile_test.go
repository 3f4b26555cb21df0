package controllers

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/results/resultstest"
	"github.com/benchrun/benchrun/internal/runner"
)

// storeRaw simulates runner i's agent storing gz (any bytes) as its result, then its state.
func (e *env) storeRaw(run *v1alpha1.BenchmarkRun, i int, gz []byte, data map[string]string) {
	e.t.Helper()
	var res corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: runner.ResultName(prefix(run, run.Generation), i)}, &res); err != nil {
		e.t.Fatal(err)
	}
	res.BinaryData = map[string][]byte{runner.KeyResult: gz}
	if err := k8sClient.Update(e.ctx, &res); err != nil {
		e.t.Fatal(err)
	}
	data[runner.KeyResultBytes] = fmt.Sprint(len(gz))
	e.setRunnerState(run, i, data, nil)
}

// reconcileAlloc reconciles run name once and returns the bytes the manager allocated.
func (e *env) reconcileAlloc(name string) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	e.reconcile(name)
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestDeleteRunWithHostileDocument: runner 0 stored the 16 KiB gzip document of millions of
// empty scenarios. Deleting the run mid-run (the finalizer merges what was stored) costs
// bounded memory, the run goes away, and runner 1's results are in the kept report with
// runner 0's refusal as a partial reason. On main the decode allocated over 12 GiB (the
// manager crash-looped and the run could not be deleted).
func TestDeleteRunWithHostileDocument(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("hostile-del", 3))
	e.storeRaw(run, 0, resultstest.ManyScenarios(runner.MaxResultBytes-1024), map[string]string{runner.KeyState: runner.StateDone})
	e.finishRunner(run, 1, 25)
	if err := k8sClient.Delete(e.ctx, e.get(run.Name)); err != nil {
		t.Fatal(err)
	}
	alloc := e.reconcileAlloc(run.Name) // runner 2 is stopped (stop.go)
	e.clock.Step(stopWait)
	alloc = max(alloc, e.reconcileAlloc(run.Name))
	t.Logf("largest reconcile allocated %d MiB", alloc>>20)
	if alloc > 64<<20 {
		t.Errorf("a reconcile allocated %d MiB, want under 64 MiB", alloc>>20)
	}
	var gone v1alpha1.BenchmarkRun
	if err := k8sClient.Get(e.ctx, client.ObjectKeyFromObject(run), &gone); err == nil {
		t.Fatalf("run still there: finalizers %v, phase %s", gone.Finalizers, gone.Status.Phase)
	}
	var kept corev1.ConfigMapList
	if err := k8sClient.List(e.ctx, &kept, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	var report string
	for _, cm := range kept.Items {
		if cm.Annotations[annotationKeptFrom] == run.Name {
			report = cm.Data["report.md"]
			if !strings.Contains(cm.Data["results.json"], `"calls": 25`) && !strings.Contains(cm.Data["results.json"], `"calls":25`) {
				t.Errorf("runner 1's calls not in the kept results: %s", cm.Data["results.json"])
			}
		}
	}
	if !strings.Contains(report, "runner-0: unreadable result") || !strings.Contains(report, "more than 64 entries") {
		t.Errorf("kept report does not name runner 0's refused document:\n%s", report)
	}
}

// TestCollectHostileRunner: runner 0's document holds, next to the run's scenario, one named
// with Markdown, HTML and newlines, an operation named like HTML and a partial reason faking
// a heading; its state reports 1e308 CPU seconds. The run's status, conditions, Events and
// report.md carry only the spec's scenario names and escaped one-line reasons, runner CPU is
// clamped (never negative), and runner 1's results are merged. On main the hostile name was
// in status.results and report.md raw and the runners' CPU came out negative.
func TestCollectHostileRunner(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("hostile-names", 2))
	start := e.clock.Now()
	doc := runnerDoc(t, run, 0, start, 30)
	evil := results.Scenario{Name: "x |\n\n## All thresholds passed\n<script>alert(1)</script>", Latency: results.Histogram{Unit: "us", SignificantFigures: 3}, Starts: results.Timeline{BucketMs: 1000}}
	doc.Scenarios = append(doc.Scenarios, evil)
	doc.Partial, doc.PartialReasons = true, []string{"evicted\n# PASSED <img src=x onerror=alert(1)>"}
	var b strings.Builder
	if err := results.Encode(&b, doc); err != nil {
		t.Fatal(err)
	}
	gz, err := runner.EncodeResult([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	e.storeRaw(run, 0, gz, map[string]string{runner.KeyState: runner.StateDone, runner.KeyLoadStartedAt: start.Format("2006-01-02T15:04:05.999999999Z07:00"),
		runner.KeyUsage: `{"cpuSeconds":1e308,"wallSeconds":1,"memoryPeakBytes":104857600}`})
	e.finishRunner(run, 1, 20)
	run = e.until(run.Name, v1alpha1.PhaseFailed) // partial: runner 0 says so
	st := run.Status
	if len(st.Results) != len(run.Spec.Load.Scenarios) {
		t.Fatalf("status.results %+v: want the spec's scenarios only", st.Results)
	}
	for i, r := range st.Results {
		if r.Name != run.Spec.Load.Scenarios[i].Name || r.Calls != 50 {
			t.Errorf("status.results[%d] %s with %d calls: want %s with both runners' 50", i, r.Name, r.Calls, run.Spec.Load.Scenarios[i].Name)
		}
	}
	texts := append([]string{}, st.PartialReasons...)
	for _, c := range st.Conditions {
		texts = append(texts, c.Message)
	}
	texts = append(texts, e.events...)
	for _, s := range texts {
		if strings.ContainsAny(s, "\n\r") || strings.Contains(s, "<script>") || strings.Contains(s, "## All") {
			t.Errorf("runner text reached status/Events raw: %q", s)
		}
	}
	var report corev1.ConfigMap
	if !e.exists(&report, st.Report.ConfigMapName) {
		t.Fatal("no report")
	}
	md := report.Data["report.md"]
	for _, raw := range []string{"<script>", "<img", "\n## All", "\n# PASSED"} {
		if strings.Contains(md, raw) {
			t.Errorf("report.md carries %q raw", raw)
		}
	}
	for _, u := range st.Resources {
		if u.Role == "runner" && (u.CPUAvgCores < 0 || u.CPUMaxCores < 0) {
			t.Errorf("runner usage %+v: negative cores", u)
		}
	}
}
