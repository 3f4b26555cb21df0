package plan

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// A hetu.call scenario's RPC and argument templates reach the plan unchanged (benchrun.js
// expands them per call); one without hetuCall is refused.
func TestHeTuCallPlan(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "h"}, Spec: v1alpha1.BenchmarkRunSpec{
		Target: v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalHeTu, Addresses: []string{"h:2466"}}},
		Load: v1alpha1.LoadSpec{Workers: 1, TasksPerWorker: 2, Duration: metav1.Duration{Duration: 10 * time.Second},
			Scenarios: []v1alpha1.Scenario{{Name: "c", Type: v1alpha1.ScenarioHeTuCall,
				HeTuCall: &v1alpha1.HeTuCallSpec{RPC: "exchange_data", Args: []string{"'__rand_str__'", "__rand_int__"}}}}},
	}}
	inv, err := ForRunner(run, nil, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var spec Spec
	if err := json.Unmarshal([]byte(inv.Env[EnvPlan]), &spec); err != nil {
		t.Fatal(err)
	}
	if c := spec.Scenarios[0].HeTuCall; c == nil || c.RPC != "exchange_data" || len(c.Args) != 2 || c.Args[0] != "'__rand_str__'" {
		t.Errorf("plan %s", inv.Env[EnvPlan])
	}
	run.Spec.Load.Scenarios[0].HeTuCall = nil
	if _, err := ForRunner(run, nil, 0, 1); err == nil {
		t.Error("hetu.call without hetuCall: no error")
	}
}
