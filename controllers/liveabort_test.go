package controllers

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/livemetrics"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/progress"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// progressDoc is a runner's progress: calls per scenario of the run at 2 ms, over 10 s.
func progressDoc(t *testing.T, run *v1alpha1.BenchmarkRun, calls int64, extra ...progress.Scenario) string {
	t.Helper()
	var d progress.Doc
	for _, sc := range run.Spec.Load.Scenarios {
		b := livemetrics.NewBucketCounts()
		livemetrics.AddHDR(b, [][2]int64{{2000, calls}})
		d.Scenarios = append(d.Scenarios, progress.Scenario{Name: sc.Name, Calls: calls, ElapsedSeconds: 10, SumMicros: 2000 * calls, Buckets: b})
	}
	d.Scenarios = append(d.Scenarios, extra...)
	raw, err := progress.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// liveLoad stands for k6 until it is stopped: Start writes the progress file, Stop makes
// Wait write a partial result document (k6 on SIGTERM).
type liveLoad struct {
	t        *testing.T
	e        *env
	run      *v1alpha1.BenchmarkRun
	i        int
	result   string
	progress string
	stop     chan struct{}
}

// Prepare implements runner.Load.
func (l *liveLoad) Prepare(context.Context, plan.Invocation) error { return nil }

// Start implements runner.Load.
func (l *liveLoad) Start(context.Context) error {
	return os.WriteFile(l.progress, []byte(progressDoc(l.t, l.run, 500)), 0o600)
}

// Stop implements runner.Stopper.
func (l *liveLoad) Stop() error { close(l.stop); return nil }

// Wait implements runner.Load.
func (l *liveLoad) Wait() (int, error) {
	select {
	case <-l.stop:
	case <-time.After(30 * time.Second):
		return 1, nil // never stopped: the test fails on the state
	}
	doc := runnerDoc(l.t, l.run, l.i, l.e.clock.Now(), 50)
	doc.Partial, doc.PartialReasons = true, []string{doc.Runners[0] + ": interrupted by a signal"}
	var b bytes.Buffer
	if err := results.Encode(&b, doc); err != nil {
		return 1, err
	}
	return 105, os.WriteFile(l.result, b.Bytes(), 0o600)
}

// liveAgent is runner i's real agent with k6 replaced by a liveLoad, publishing every 20ms.
func liveAgent(t *testing.T, e *env, run *v1alpha1.BenchmarkRun, i int) *runner.Agent {
	dir := t.TempDir()
	a := &runner.Agent{Client: k8sClient, Namespace: e.ns, StateName: e.stateName(run, i),
		BarrierName: runner.BarrierName(prefix(run, run.Generation)), ResultFile: filepath.Join(dir, "result.json"),
		ProgressFile: filepath.Join(dir, "progress.json"), ProgressInterval: 20 * time.Millisecond,
		CgroupDir: dir, Poll: 10 * time.Millisecond, Now: e.clock.Now}
	a.Load = &liveLoad{t: t, e: e, run: run, i: i, result: a.ResultFile, progress: a.ProgressFile, stop: make(chan struct{})}
	return a
}

// TestLiveAbortOnFail: real runner agents publish live progress into their state ConfigMaps;
// the manager shows it in status.live, waits delayAbortEval, then — the live p99 (about 2 ms)
// breaking 'p99 < 0.5' — writes stopAt into the barrier; the agents stop their load and
// store partial documents; the run ends Failed with reason AbortedOnThreshold naming the
// threshold and the observed value, with the collected results kept and an Event.
func TestLiveAbortOnFail(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("abort", 2)
	run.Spec.Thresholds = []v1alpha1.Threshold{{Expr: "p99 < 60000", AbortOnFail: true},
		{Scenario: "get", Expr: "p99 < 0.5", AbortOnFail: true, DelayAbortEval: &metav1.Duration{Duration: 10 * time.Second}}}
	e.create(run)
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.targetReady(run.Name)
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = liveAgent(t, e, run, i).Run(context.Background()) }()
	}
	waitFor(t, func() bool {
		obs, err := e.r.observeRunners(e.ctx, e.r.newStep(e.get(run.Name)))
		return err == nil && obs.ready == 2
	})
	run = e.until(run.Name, v1alpha1.PhaseRunning)
	waitFor(t, func() bool {
		obs, err := e.r.observeRunners(e.ctx, e.r.newStep(e.get(run.Name)))
		return err == nil && obs.configs[0].Data[progress.Key] != "" && obs.configs[1].Data[progress.Key] != ""
	})

	// Before the delay: live figures in status, no abort.
	e.clock.Step(time.Second)
	e.reconcile(run.Name)
	run = e.get(run.Name)
	if run.Status.Phase != v1alpha1.PhaseRunning || barrierStop(t, e, run) != "" {
		t.Fatalf("aborted before delayAbortEval: phase %s", run.Status.Phase)
	}
	l := run.Status.Live
	if l == nil || l.Runners != 2 || len(l.Scenarios) != 2 || l.Scenarios[0].Name != "get" || l.Scenarios[0].Calls != 1000 ||
		l.Scenarios[0].CPS != 100 || l.Scenarios[0].P99Ms <= 1.5 || l.Scenarios[0].P99Ms > 2 {
		t.Fatalf("status.live %+v", l)
	}

	// After the delay: the threshold is judged, broken, the runners are stopped.
	e.clock.Step(10 * time.Second)
	e.reconcile(run.Name)
	run = e.get(run.Name)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionLoadComplete)
	if c == nil || c.Reason != v1alpha1.ReasonAbortedOnThreshold || barrierStop(t, e, run) == "" {
		t.Fatalf("not aborted: %+v", c)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
	}
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	st := run.Status
	done := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionSucceeded)
	for _, want := range []string{"'p99 < 0.5'", "scenario get", "observed 1.9", "limit 0.5", "after 11s of load"} {
		if !strings.Contains(done.Message, want) {
			t.Errorf("Succeeded condition message lacks %q: %s", want, done.Message)
		}
	}
	if done.Reason != v1alpha1.ReasonAbortedOnThreshold || st.Verdict != v1alpha1.VerdictFailed || !st.Partial ||
		len(st.Results) != 2 || st.Results[0].Calls != 100 || st.Report.ConfigMapName == "" {
		t.Fatalf("finished %s (%s) verdict %s partial %v results %+v", done.Reason, done.Message, st.Verdict, st.Partial, st.Results)
	}
	if st.Live != nil {
		t.Errorf("status.live kept after collection: %+v", st.Live)
	}
	if tm := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionThresholdsMet); tm == nil || tm.Reason != v1alpha1.ReasonAbortedOnThreshold {
		t.Errorf("ThresholdsMet %+v", tm)
	}
	if !e.hasEvent("LoadCompleteAbortedOnThreshold") || !e.hasEvent(v1alpha1.ReasonAbortedOnThreshold) {
		t.Errorf("no abort Events in %q", e.events)
	}
}

// barrierStop is the barrier's stopAt ("" when unset).
func barrierStop(t *testing.T, e *env, run *v1alpha1.BenchmarkRun) string {
	t.Helper()
	var b corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: runner.BarrierName(prefix(run, run.Generation))}, &b); err != nil {
		t.Fatal(err)
	}
	return b.Data[runner.KeyStop]
}

// TestLiveProgressHostile: progress a runner can forge — oversized, garbage, absurd counts,
// scenarios the run does not have — is ignored without harm; honest progress that holds the
// abortOnFail thresholds does not stop the run, which completes and succeeds.
func TestLiveProgressHostile(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("hostile", 4)
	run.Spec.Thresholds = []v1alpha1.Threshold{{Expr: "p99 < 60000", AbortOnFail: true}, {Expr: "cps > 1", AbortOnFail: true}}
	run = e.startedRun(run)
	forged := progress.Scenario{Name: "forged", Calls: 1 << 40, ElapsedSeconds: 0.001}
	for i, p := range []string{
		progressDoc(t, run, 500, forged),
		strings.Repeat("x", progress.MaxBytes+1),
		"\x00{garbage",
		`{"scenarios":[{"name":"get","calls":9000000000000000000,"elapsedSeconds":1}]}`,
	} {
		e.setRunnerState(run, i, map[string]string{runner.KeyState: runner.StateRunning,
			runner.KeyLoadStartedAt: e.clock.Now().Format(time.RFC3339Nano), progress.Key: p}, nil)
	}
	e.clock.Step(time.Minute)
	e.reconcile(run.Name)
	run = e.get(run.Name)
	l := run.Status.Live
	if run.Status.Phase != v1alpha1.PhaseRunning || l == nil || l.Runners != 1 || l.Ignored != 3 || len(l.Scenarios) != 2 ||
		l.Scenarios[0].Calls != 500 || barrierStop(t, e, run) != "" {
		t.Fatalf("phase %s live %+v", run.Status.Phase, l)
	}
	for i := range 4 {
		e.finishRunner(run, i, 100)
	}
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	if run.Status.Verdict != v1alpha1.VerdictPassed {
		t.Fatalf("verdict %s", run.Status.Verdict)
	}
}

// TestLiveAbortFlushTimeout: runners that do not react to stopAt (an older runner image) get
// their Job deleted (SIGTERM) after half of abortFlushTimeout and hold the run at most
// abortFlushTimeout; then what was stored is collected and the run ends Failed
// AbortedOnThreshold (relative threshold: live CPS against status.baseline).
func TestLiveAbortFlushTimeout(t *testing.T) {
	e := newEnv(t)
	base := e.finishedRun(e.redisRun("base", 1), 100, v1alpha1.PhaseSucceeded)
	run := e.redisRun("stubborn", 2)
	run.Spec.Baseline = &v1alpha1.BaselineSpec{Name: base.Name}
	run.Spec.Thresholds = []v1alpha1.Threshold{{Scenario: "set", Expr: "cps >= +1000%", AbortOnFail: true}}
	run = e.startedRun(run)
	e.finishRunner(run, 0, 100)
	e.setRunnerState(run, 1, map[string]string{runner.KeyState: runner.StateRunning,
		runner.KeyLoadStartedAt: e.clock.Now().Format(time.RFC3339Nano)}, nil)
	e.reconcile(run.Name) // LoadComplete False (Waiting) from here on
	e.clock.Step(time.Minute)
	e.setRunnerState(run, 1, map[string]string{progress.Key: progressDoc(t, run, 500)}, nil)
	e.reconcile(run.Name)
	if c := meta.FindStatusCondition(e.get(run.Name).Status.Conditions, v1alpha1.ConditionLoadComplete); c == nil ||
		c.Reason != v1alpha1.ReasonAbortedOnThreshold || !strings.Contains(c.Message, "'cps >= +1000%' broken live on scenario set: observed 50, limit 1") {
		t.Fatalf("LoadComplete %+v", c)
	}
	job := runner.JobName(prefix(run, run.Generation))
	e.clock.Step(abortFlushTimeout/2 - time.Second)
	e.reconcile(run.Name)
	if p := e.get(run.Name).Status.Phase; p != v1alpha1.PhaseRunning || !e.exists(&batchv1.Job{}, job) {
		t.Fatalf("collected or Job deleted before half the flush timeout: %s", p)
	}
	e.clock.Step(time.Second)
	e.reconcile(run.Name)
	if p := e.get(run.Name).Status.Phase; p != v1alpha1.PhaseRunning || e.exists(&batchv1.Job{}, job) {
		t.Fatalf("after half the flush timeout the runner Job must be deleted (SIGTERM), the run still waiting: %s", p)
	}
	e.clock.Step(abortFlushTimeout / 2)
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	done := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if done.Reason != v1alpha1.ReasonAbortedOnThreshold || !run.Status.Partial || len(run.Status.Results) != 2 || run.Status.Results[0].Calls != 100 {
		t.Fatalf("finished %+v partial %v results %+v", done, run.Status.Partial, run.Status.Results)
	}
}
