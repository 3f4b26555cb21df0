package plan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

func echoRun(t v1alpha1.TargetSpec) *v1alpha1.BenchmarkRun {
	size, pipe := int32(1000), int32(4)
	return &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "echo"}, Spec: v1alpha1.BenchmarkRunSpec{
		Target: t,
		Load: v1alpha1.LoadSpec{Workers: 2, TasksPerWorker: 5, Duration: metav1.Duration{Duration: 30 * time.Second},
			Scenarios: []v1alpha1.Scenario{{Name: "echo", Type: v1alpha1.ScenarioTCPEcho, BodySize: &size, Pipeline: &pipe}}},
	}}
}

// A custom target's first port (role custom) and an external tcp target's addresses become
// BENCHRUN_TARGET.tcp; bodySize and pipeline reach the scenario plan.
func TestTCPEchoPlan(t *testing.T) {
	custom := echoRun(v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{Image: "e"}})
	eps := []v1alpha1.Endpoint{{Role: RoleCustom, Address: "echo-g1-server.ns.svc:7007"}, {Role: "custom-stats", Address: "x:8080"}}
	ext := echoRun(v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalTCP, Addresses: []string{"e1:7", "e2:7"},
		TLS: &v1alpha1.TLSSpec{Enabled: true, ServerName: "echo", CASecretRef: &v1alpha1.SecretKeyRef{Name: "ca", Key: "pem"}}}})
	for _, tc := range []struct {
		name    string
		run     *v1alpha1.BenchmarkRun
		eps     []v1alpha1.Endpoint
		addrs   int
		tls     bool
		secrets int
	}{{"custom", custom, eps, 1, false, 0}, {"external", ext, nil, 2, true, 1}} {
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
		if tcp := target.Stream("tcp"); tcp == nil || len(tcp.Addrs) != tc.addrs || tcp.TLS != tc.tls || target.Redis != nil {
			t.Errorf("%s: target %s", tc.name, inv.Env[EnvTarget])
		}
		if s := spec.Scenarios[0]; s.Type != "tcp.echo" || s.BodySize != 1000 || s.Pipeline != 4 || s.VUs != 10 {
			t.Errorf("%s: scenario %+v", tc.name, s)
		}
		if len(inv.SecretEnv) != tc.secrets {
			t.Errorf("%s: secret env %v", tc.name, inv.SecretEnv)
		}
	}
	if _, err := ForRunner(custom, nil, 0, 1); err == nil {
		t.Error("a custom target without endpoints gave a plan")
	}
}

// An http scenario gets its request with defaults filled in (GET /, keep-alive, HTTP/1.1) and
// BENCHRUN_TARGET.http from an external http target (TLS) or a custom target's first port.
func TestHTTPPlan(t *testing.T) {
	off := false
	ext := echoRun(v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalHTTP, Addresses: []string{"web:443"},
		TLS: &v1alpha1.TLSSpec{Enabled: true}}})
	ext.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "get", Type: v1alpha1.ScenarioHTTP},
		{Name: "post", Type: v1alpha1.ScenarioHTTP, HTTP: &v1alpha1.HTTPSpec{Method: "POST", Path: "/items", KeepAlive: &off,
			Protocol: v1alpha1.HTTP2, Headers: map[string]string{"X-A": "1"}}}}
	inv, err := ForRunner(ext, nil, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var target Target
	var spec Spec
	_ = json.Unmarshal([]byte(inv.Env[EnvTarget]), &target)
	_ = json.Unmarshal([]byte(inv.Env[EnvPlan]), &spec)
	if h := target.Stream("http"); h == nil || h.Addrs[0] != "web:443" || !h.TLS {
		t.Errorf("target %s", inv.Env[EnvTarget])
	}
	get, post := spec.Scenarios[0].HTTP, spec.Scenarios[1].HTTP
	if get == nil || get.Method != "GET" || get.Path != "/" || !get.KeepAlive || get.Protocol != "http1.1" || get.Headers != nil {
		t.Errorf("get %+v", get)
	}
	if post == nil || post.Method != "POST" || post.Path != "/items" || post.KeepAlive || post.Protocol != "h2c" || post.Headers["X-A"] != "1" {
		t.Errorf("post %+v", post)
	}
	custom := echoRun(v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{Image: "e"}})
	custom.Spec.Load.Scenarios = ext.Spec.Load.Scenarios[:1]
	inv, err = ForRunner(custom, []v1alpha1.Endpoint{{Role: RoleCustom, Address: "s:8080"}}, 0, 1)
	if err != nil || !strings.Contains(inv.Env[EnvTarget], `"http":{"addrs":["s:8080"]}`) {
		t.Errorf("custom: %v %s", err, inv.Env[EnvTarget])
	}
	inv, err = ForRunner(custom, []v1alpha1.Endpoint{{Role: RoleCustom, Address: "s:7007"}, {Role: "custom-http", Address: "s:8080"}}, 0, 1)
	if err != nil || !strings.Contains(inv.Env[EnvTarget], `"http":{"addrs":["s:8080"]}`) || !strings.Contains(inv.Env[EnvTarget], `"tcp":{"addrs":["s:7007"]}`) {
		t.Errorf("custom with a port named http: %v %s", err, inv.Env[EnvTarget])
	}
}
