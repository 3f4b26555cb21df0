package plan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/workload"
	"github.com/benchrun/benchrun/internal/workload/celgen"
)

// TestNewProtocolFoo: a made-up type foo speaking a new protocol (its own address foo, an
// external kind foo, a custom target) flows through the plan, the target wiring and the
// generated CEL with nothing but its descriptor (registered by the test only): BENCHRUN_TARGET
// gets an entry foo from a custom target's port named foo or an external target of kind foo,
// BENCHRUN_PLAN its address and its settings object as the API has it, and the CEL lists
// name its type and kind. foo borrows the API's script field as its settings object (the API
// has no foo field; a real type adds its own in load_types.go).
func TestNewProtocolFoo(t *testing.T) {
	foo := workload.Descriptor{Type: "foo", BodySize: true, OpenModel: true, Custom: true,
		External: []v1alpha1.ExternalKind{"foo"}, Server: "a foo server", Params: []string{"batch"},
		Address: "foo", Settings: "script"}
	t.Cleanup(workload.Register(foo))

	run := func(tg v1alpha1.TargetSpec) *v1alpha1.BenchmarkRun {
		return &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "f"}, Spec: v1alpha1.BenchmarkRunSpec{Target: tg,
			Load: v1alpha1.LoadSpec{Workers: 1, TasksPerWorker: 2, Duration: metav1.Duration{Duration: 5 * time.Second},
				Scenarios: []v1alpha1.Scenario{{Name: "a", Type: "foo", Script: &v1alpha1.ScriptSource{ConfigMapName: "foo-settings", Key: "k"}}}}}}
	}
	tls := &v1alpha1.TLSSpec{Enabled: true, CASecretRef: &v1alpha1.SecretKeyRef{Name: "ca", Key: "pem"}}
	for _, tc := range []struct {
		name, target string
		run          *v1alpha1.BenchmarkRun
		eps          []v1alpha1.Endpoint
		secrets      int
	}{
		{"custom, port foo", `{"tcp":{"addrs":["s:1"]},"http":{"addrs":["s:1"]},"grpc":{"addrs":["s:1"]},"foo":{"addrs":["s:9"]}}`,
			run(v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{Image: "i"}}),
			[]v1alpha1.Endpoint{{Role: RoleCustom, Address: "s:1"}, {Role: RoleCustom + "-foo", Address: "s:9"}}, 0},
		{"external foo", `{"foo":{"addrs":["f:1"],"tls":true}}`,
			run(v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: "foo", Addresses: []string{"f:1"}, TLS: tls}}), nil, 1},
	} {
		inv, err := ForRunner(tc.run, tc.eps, 0, 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := inv.Env[EnvTarget]; got != tc.target {
			t.Errorf("%s: BENCHRUN_TARGET %s, want %s", tc.name, got, tc.target)
		}
		if len(inv.SecretEnv) != tc.secrets {
			t.Errorf("%s: secret env %v", tc.name, inv.SecretEnv)
		}
		if want := `"type":"foo","address":"foo",`; !strings.Contains(inv.Env[EnvPlan], want) ||
			!strings.Contains(inv.Env[EnvPlan], `"script":{"configMapName":"foo-settings","key":"k"}}`) {
			t.Errorf("%s: BENCHRUN_PLAN %s", tc.name, inv.Env[EnvPlan])
		}
		var spec Spec
		var target Target
		if json.Unmarshal([]byte(inv.Env[EnvPlan]), &spec) != nil || json.Unmarshal([]byte(inv.Env[EnvTarget]), &target) != nil {
			t.Fatalf("%s: the plan does not decode", tc.name)
		}
		if s := spec.Scenarios[0]; string(s.Settings["script"]) != `{"configMapName":"foo-settings","key":"k"}` || len(target.Addrs("foo")) != 1 {
			t.Errorf("%s: decoded %+v, %+v", tc.name, s, target)
		}
	}
	if _, err := ForRunner(run(v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}}), []v1alpha1.Endpoint{{Role: RoleRedis, Address: "r:1"}}, 0, 1); err == nil ||
		!strings.Contains(err.Error(), `scenario "a" needs a foo endpoint and the target has none`) {
		t.Errorf("foo against a Redis target: %v", err)
	}
	blocks, err := celgen.Blocks(workload.All())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"enum": ";grpc;foo", "externalEnum": ";grpc;foo", "streamKinds": "'grpc', 'foo'"} {
		if got := strings.Join(blocks[name], "\n"); !strings.Contains(got, want) {
			t.Errorf("generated block %s has no %q: %s", name, want, got)
		}
	}
}
