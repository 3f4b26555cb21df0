package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestHeTuAppConfigMap: a HeTu target with its own app (spec.target.hetu.app) fails at once
// (InvalidTarget, naming the field) when the ConfigMap or its key is missing, instead of
// waiting for the volume until the target-ready timeout; with the ConfigMap it provisions.
func TestHeTuAppConfigMap(t *testing.T) {
	e := newEnv(t)
	hetuRun := func(name string) *v1alpha1.BenchmarkRun {
		run := e.redisRun(name, 1)
		run.Spec.Target = v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{App: &v1alpha1.HeTuAppSpec{ConfigMapName: "game", Key: "game.py"},
			Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle, Provider: v1alpha1.ProviderBuiltin}}}}
		run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "c", Type: v1alpha1.ScenarioHeTuCall, HeTuCall: &v1alpha1.HeTuCallSpec{RPC: "add"}}}
		return e.create(run)
	}
	done := func(name string) *metav1.Condition {
		return meta.FindStatusCondition(e.until(name, v1alpha1.PhaseFailed).Status.Conditions, v1alpha1.ConditionSucceeded)
	}
	if c := done(hetuRun("no-cm").Name); c.Reason != "InvalidTarget" || !strings.Contains(c.Message, "spec.target.hetu.app: ConfigMap game not found") {
		t.Errorf("no ConfigMap: %+v", c)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "game", Namespace: e.ns}, Data: map[string]string{"app.py": "x"}}
	if err := k8sClient.Create(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	if c := done(hetuRun("no-key").Name); c.Reason != "InvalidTarget" || !strings.Contains(c.Message, "ConfigMap game has no key game.py") {
		t.Errorf("no key: %+v", c)
	}
	cm.Data = map[string]string{"game.py": "import hetu"}
	if err := k8sClient.Update(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	e.until(hetuRun("ok").Name, v1alpha1.PhaseProvisioning)
}
