package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

func scriptRun(e *env, name string) *v1alpha1.BenchmarkRun {
	run := e.redisRun(name, 1)
	run.Spec.Load.Scenarios = append(run.Spec.Load.Scenarios, v1alpha1.Scenario{
		Name: "mine", Type: v1alpha1.ScenarioScript,
		Script: &v1alpha1.ScriptSource{ConfigMapName: "user-scripts", Key: "mine.js"},
	})
	return run
}

// TestScriptScenarioMissingConfigMap: a script scenario whose ConfigMap does not exist fails
// the run with a reason naming it.
func TestScriptScenarioMissingConfigMap(t *testing.T) {
	e := newEnv(t)
	run := e.create(scriptRun(e, "noscript"))
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.markTargetReady()
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != "ScriptNotFound" || !strings.Contains(c.Message, `scenario "mine": ConfigMap "user-scripts" not found`) {
		t.Fatalf("condition %+v", c)
	}
}

// TestScriptScenarioFromConfigMap: the user's script (a ConfigMap the manager's cache does not
// hold) is read and handed to the runners inside their invocation.
func TestScriptScenarioFromConfigMap(t *testing.T) {
	e := newEnv(t)
	const src = "export default function () { /* user code */ }"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-scripts", Namespace: e.ns},
		Data: map[string]string{"mine.js": src}}
	if err := k8sClient.Create(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	run := e.create(scriptRun(e, "withscript"))
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.markTargetReady()
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	var state corev1.ConfigMap
	if !e.exists(&state, e.stateName(run, 0)) {
		t.Fatal("no runner state ConfigMap")
	}
	inv, err := runner.DecodeInvocation(&state)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Files["custom/mine.js"] != src || inv.Script != "entry.js" {
		t.Fatalf("invocation: script %q, files %v", inv.Script, inv.Files)
	}
}
