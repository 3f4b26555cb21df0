package controllers

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// startingRun creates a run of n runners and brings it to Starting with runner 0 ready.
func (e *env) startingRun(name string, n int32) *v1alpha1.BenchmarkRun {
	e.t.Helper()
	run := e.create(e.redisRun(name, n))
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.markTargetReady()
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	e.setRunnerState(run, 0, map[string]string{runner.KeyState: runner.StateReady}, nil)
	return run
}

// failedWith checks that run name failed with reason and a message holding want, and that
// its runners were removed.
func (e *env) failedWith(name, reason, want string) {
	e.t.Helper()
	run := e.until(name, v1alpha1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != reason || !strings.Contains(c.Message, want) {
		e.t.Fatalf("Succeeded condition %+v, want reason %s with %q", c, reason, want)
	}
	e.reconcile(name)
	if e.exists(&batchv1.Job{}, runner.JobName(prefix(run, run.Generation))) {
		e.t.Fatal("runners left waiting at the barrier")
	}
}

// TestRunnersStuck: runners that will not start fail the run with the reason instead of
// holding the target until the run timeout — a missing Secret after a minute, an
// unschedulable runner after timeouts.runnersReady.
func TestRunnersStuck(t *testing.T) {
	e := newEnv(t)
	run := e.startingRun("nosecret", 2)
	e.runnerPod(run, 1, corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "runner",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "redis-pw" not found`}}}}})
	e.reconcile(run.Name)
	if got := e.get(run.Name).Status.Phase; got != v1alpha1.PhaseStarting {
		t.Fatalf("phase %s right after the pod reported the missing Secret, want Starting (grace)", got)
	}
	e.clock.Step(61 * time.Second)
	e.failedWith(run.Name, "RunnersCannotStart", `runner-1: CreateContainerConfigError: secret "redis-pw" not found`)

	run = e.startingRun("unschedulable", 2)
	e.runnerPod(run, 1, corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
		Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient cpu."}}})
	e.clock.Step(5 * time.Minute)
	e.reconcile(run.Name)
	if got := e.get(run.Name).Status.Phase; got != v1alpha1.PhaseStarting {
		t.Fatalf("phase %s after 5m unschedulable, want Starting until runnersReady (10m)", got)
	}
	e.clock.Step(5 * time.Minute)
	e.failedWith(run.Name, "RunnersNotReady", "runner-1: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.")

	// Both failed runs are in the run-history metrics, with their duration and no results.
	if got := testutil.ToFloat64(e.r.History.finished.WithLabelValues(e.ns, "Failed", "")); got != 2 {
		t.Fatalf("benchrun_runs_finished_total{phase=Failed} = %v, want 2", got)
	}
	if n := testutil.CollectAndCount(e.r.History.duration); n != 2 {
		t.Fatalf("%d duration series, want 2", n)
	}
}
