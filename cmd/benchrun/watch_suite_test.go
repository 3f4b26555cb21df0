package main

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestWatchSuite: `benchrun watch SUITE` on a real kube-apiserver follows a BenchmarkSuite:
// a line naming the child run now going (with that run's phase), a line when the suite ends,
// then its report.md; exit 0 when it Succeeded, 3 when its verdict failed.
func TestWatchSuite(t *testing.T) {
	c, kubeconfig := startCluster(t, "bench")
	env := []string{"KUBECONFIG=" + kubeconfig}
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		phase  v1alpha1.SuitePhase
		reason string
		exit   int
	}{{"pass", v1alpha1.SuiteSucceeded, "AllSucceeded", exitOK}, {"slow", v1alpha1.SuiteFailed, v1alpha1.ReasonThresholdsNotMet, exitThresholds}} {
		s := ioSuite(tc.name)
		child := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: tc.name + "-io8-r1"},
			Spec: v1alpha1.BenchmarkRunSpec{Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}}, Load: testLoad()}}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: tc.name + "-report"},
			Data: map[string]string{"report.md": "# BenchmarkSuite " + tc.name + "\n"}}
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, child); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		child.Status = v1alpha1.BenchmarkRunStatus{Phase: v1alpha1.PhaseRunning}
		s.Status = v1alpha1.BenchmarkSuiteStatus{Phase: v1alpha1.SuiteRunning, Progress: "1/2", ObservedGeneration: 1, Children: []v1alpha1.SuiteChild{
			{Name: tc.name + "-redis8-r1", Variant: "redis8", Repetition: 1, Phase: v1alpha1.PhaseSucceeded},
			{Name: child.Name, Variant: "io8", Repetition: 1, Phase: v1alpha1.PhaseRunning}}}
		if err := c.Status().Update(ctx, child); err != nil {
			t.Fatal(err)
		}
		if err := c.Status().Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		go func() { // the suite ends while watched
			time.Sleep(2 * time.Second)
			now := metav1.Now()
			s.Status.Phase, s.Status.Progress, s.Status.CompletionTime = tc.phase, "2/2", &now
			s.Status.Children[1].Phase = v1alpha1.PhaseSucceeded
			s.Status.Report = &v1alpha1.ReportRef{ConfigMapName: cm.Name}
			s.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: tc.reason,
				Message: "2 of 2 child runs ended", LastTransitionTime: now}}
			if tc.phase == v1alpha1.SuiteSucceeded {
				s.Status.Conditions[0].Status = metav1.ConditionTrue
			}
			if err := c.Status().Update(ctx, s); err != nil {
				t.Error(err)
			}
		}()
		w := newCLI(t, env, "watch", tc.name, "--interval", "200ms", "--timeout", "60s")
		code := w.run(t)
		out := w.stdout.String()
		if code != tc.exit || !strings.Contains(out, "suite "+tc.name+"  phase Running  1/2 child runs ended  now "+child.Name+"  phase Running") ||
			!strings.Contains(out, "phase "+string(tc.phase)+"  2/2 child runs ended  2 of 2 child runs ended") ||
			!strings.HasSuffix(out, "# BenchmarkSuite "+tc.name+"\n") {
			t.Errorf("watch %s: exit %d (want %d)\n%s", tc.name, code, tc.exit, out)
		}
	}
}
