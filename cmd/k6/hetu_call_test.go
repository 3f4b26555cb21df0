package main

import (
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/hetutest"
	"github.com/benchrun/benchrun/internal/plan"
)

// TestHeTuCallScenarios runs hetu.call scenarios through our k6 (benchrun.js) against a real
// HeTu server (examples/hetu-bench, full layers): hello_world without arguments, just_get with
// a __rand_int__ argument (a number), exchange_data with a quoted string template and a
// number, and an RPC the app does not have. Each call is one recorded call of type
// hetu.<rpc> with the return value the built-in hetu.* scenarios record; the unknown RPC's
// calls are errors.
func TestHeTuCallScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a HeTu server (skipped with -short)")
	}
	addr := hetutest.StartServer(t, "full", "")
	keys := int64(200)
	call := func(name, rpc string, args ...string) v1alpha1.Scenario {
		return v1alpha1.Scenario{Name: name, Type: v1alpha1.ScenarioHeTuCall, KeySpace: &keys,
			HeTuCall: &v1alpha1.HeTuCallSpec{RPC: rpc, Args: args}}
	}
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "hetu-call"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalHeTu, Addresses: []string{addr},
				Instance: "bench", PacketLayers: v1alpha1.LayersMsgpackZlibCrypto}},
			Load: v1alpha1.LoadSpec{Workers: 1, TasksPerWorker: 4, Duration: metav1.Duration{Duration: 1500 * time.Millisecond},
				Scenarios: []v1alpha1.Scenario{
					call("hello", "hello_world"),
					call("get", "just_get", "__rand_int__"),
					call("exchange", "exchange_data", "'__rand_str__'", "__rand_int__"),
					call("nope", "no_such_rpc", "1"),
				}},
		},
	}
	inv, err := plan.ForRunnerIn(filepath.Join(repoRoot, "scripts", "k6"), run, nil, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	cmd, out := k6Command(t, inv, inv.Script)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("k6 run: %v\n%s", err, b)
	}
	doc := readDoc(t, out)
	types := map[string]string{"hello": "hetu.hello_world", "get": "hetu.just_get", "exchange": "hetu.exchange_data", "nope": "hetu.no_such_rpc"}
	if len(doc.Scenarios) != 4 {
		t.Fatalf("scenarios %+v", doc.Scenarios)
	}
	for _, s := range doc.Scenarios {
		t.Logf("%-8s %s: %d calls, values %v, errors %v", s.Name, s.Type, s.Calls, s.ReturnValues, s.ErrorKinds)
		if s.Type != types[s.Name] || s.Calls == 0 {
			t.Errorf("%s: type %s, %d calls", s.Name, s.Type, s.Calls)
		}
		switch s.Name {
		case "nope":
			if s.Errors != s.Calls {
				t.Errorf("nope: %d errors of %d calls", s.Errors, s.Calls)
			}
		case "hello":
			if s.Errors != 0 || s.ReturnValues["世界收到"] != s.Calls {
				t.Errorf("hello: %d errors, values %v", s.Errors, s.ReturnValues)
			}
		case "get":
			if s.Errors != 0 || s.ReturnValues["0"] != s.Calls {
				t.Errorf("get: %d errors, values %v", s.Errors, s.ReturnValues)
			}
		default:
			if s.Errors != 0 {
				t.Errorf("%s: %d errors %v", s.Name, s.Errors, s.ErrorKinds)
			}
		}
	}
}
