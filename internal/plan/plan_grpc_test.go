package plan

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// A custom target's port named grpc (else its first port) and an external grpc target's
// addresses become BENCHRUN_TARGET.grpc; the call (method, request, body field, metadata)
// and bodySize reach the scenario plan.
func TestGRPCPlan(t *testing.T) {
	size := int32(10240)
	run := func(t v1alpha1.TargetSpec) *v1alpha1.BenchmarkRun {
		return &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "g"}, Spec: v1alpha1.BenchmarkRunSpec{
			Target: t,
			Load: v1alpha1.LoadSpec{Workers: 1, TasksPerWorker: 4, Duration: metav1.Duration{Duration: 10 * time.Second},
				Scenarios: []v1alpha1.Scenario{{Name: "echo", Type: v1alpha1.ScenarioGRPC, BodySize: &size,
					GRPC: &v1alpha1.GRPCSpec{Method: "benchrun.echo.v1.Echo/Echo", Request: `{"text":"a"}`, BodyField: "payload",
						Metadata: map[string]string{"x-a": "1"}}}}},
		}}
	}
	custom := run(v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{Image: "e"}})
	ext := run(v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalGRPC, Addresses: []string{"g:443"},
		TLS: &v1alpha1.TLSSpec{Enabled: true, CASecretRef: &v1alpha1.SecretKeyRef{Name: "ca", Key: "pem"}}}})
	for _, tc := range []struct {
		name    string
		run     *v1alpha1.BenchmarkRun
		eps     []v1alpha1.Endpoint
		addr    string
		tls     bool
		secrets int
	}{
		{"custom grpc port", custom, []v1alpha1.Endpoint{{Role: RoleCustom, Address: "s:7007"}, {Role: "custom-grpc", Address: "s:50051"}}, "s:50051", false, 0},
		{"custom first port", custom, []v1alpha1.Endpoint{{Role: RoleCustom, Address: "s:50051"}}, "s:50051", false, 0},
		{"external", ext, nil, "g:443", true, 1},
	} {
		inv, err := ForRunner(tc.run, tc.eps, 0, 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var target Target
		var spec Spec
		if err := json.Unmarshal([]byte(inv.Env[EnvTarget]), &target); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(inv.Env[EnvPlan]), &spec); err != nil {
			t.Fatal(err)
		}
		if g := target.Stream("grpc"); g == nil || len(g.Addrs) != 1 || g.Addrs[0] != tc.addr || g.TLS != tc.tls {
			t.Errorf("%s: target %s", tc.name, inv.Env[EnvTarget])
		}
		s := spec.Scenarios[0]
		if g := s.GRPC; s.Type != "grpc" || s.BodySize != 10240 || g == nil || g.Method != "benchrun.echo.v1.Echo/Echo" ||
			g.Request != `{"text":"a"}` || g.BodyField != "payload" || g.Metadata["x-a"] != "1" {
			t.Errorf("%s: scenario %+v", tc.name, s)
		}
		if len(inv.SecretEnv) != tc.secrets {
			t.Errorf("%s: secret env %v", tc.name, inv.SecretEnv)
		}
	}
	if _, err := ForRunner(custom, nil, 0, 1); err == nil {
		t.Error("a custom target without endpoints: no error")
	}
}
