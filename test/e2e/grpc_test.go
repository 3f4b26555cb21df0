//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/echo"
)

// TestCustomGrpcTarget deploys our echo server's gRPC service (benchrun.local/echo:dev,
// echo-server -grpc) as a custom target: ports grpc and http (the counters), ready by an
// httpGet probe. Two runners make unary calls found by server reflection: 10 KiB payloads
// for a fixed 2000 calls, and calls asking for status NotFound. A second run reaches the
// same server as an external target of kind grpc (its Service address). The reports have
// the packetd Grpc table; the calls and payload bytes benchrun counted equal the server's
// own counters (read through the API server's Service proxy; cleanup Never keeps the server).
func TestCustomGrpcTarget(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "custom-grpc")
	apply(t, ns, runManifest("grpc", `    custom:
      image: benchrun.local/echo:dev
      command: [echo-server]
      args: [-listen, ":7007", -grpc, ":$(BENCHRUN_PORT_GRPC)", -http, ":$(BENCHRUN_PORT_HTTP)"]
      ports:
      - {name: grpc, port: 50051}
      - {name: http, port: 8080}
      readinessProbe:
        httpGet: {port: http, path: /stats}`, `
    scenarios:
    - name: payload_10k
      type: grpc
      bodySize: 10240
      requests: 2000
      grpc: {method: benchrun.echo.v1.Echo/Echo, bodyField: payload}
    - name: not_found
      type: grpc
      grpc: {method: benchrun.echo.v1.Echo/Echo, request: '{"code": 5}'}`, 2, "Never"))
	run := waitPhase(t, ns, "grpc", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if run.Status.Partial || run.Status.Target == nil || run.Status.Target.Kind != "custom" {
		t.Fatalf("partial %v (%v), target %+v", run.Status.Partial, run.Status.PartialReasons, run.Status.Target)
	}
	calls := grpcResults(t, run)
	if calls["payload_10k"] != 2000 {
		t.Errorf("payload_10k made %d calls, want the fixed 2000", calls["payload_10k"])
	}
	checkGrpcReport(t, ns, run)
	var grpcAddr, svc string
	for _, ep := range run.Status.Target.Endpoints {
		switch ep.Role {
		case "custom", "custom-grpc": // the port named grpc is the first one: role custom
			grpcAddr = ep.Address
		case "custom-http":
			svc, _, _ = strings.Cut(ep.Address, ".")
		}
	}
	if grpcAddr == "" || svc == "" {
		t.Fatalf("no grpc or custom-http endpoint: %+v", run.Status.Target.Endpoints)
	}
	apply(t, ns, runManifest("grpc-external", `    external:
      kind: grpc
      addresses: [`+grpcAddr+`]`, `
    scenarios:
    - name: empty
      type: grpc
      requests: 1000
      grpc: {method: benchrun.echo.v1.Echo/Echo, metadata: {x-bench: e2e}}`, 1, "Always"))
	ext := waitPhase(t, ns, "grpc-external", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, ext)
	extCalls := grpcResults(t, ext)
	checkGrpcReport(t, ns, ext)
	out := mustKubectl(t, "", "get", "--raw", "/api/v1/namespaces/"+ns+"/services/http:"+svc+":http/proxy/stats")
	var st echo.Stats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("echo server stats %q: %v", out, err)
	}
	total := calls["payload_10k"] + calls["not_found"] + extCalls["empty"]
	if st.GRPCCalls != total || st.GRPCBytes != calls["payload_10k"]*10240 {
		t.Errorf("the server answered %d gRPC calls with %d payload bytes; benchrun counted %d calls (%d of 10240 bytes)",
			st.GRPCCalls, st.GRPCBytes, total, calls["payload_10k"])
	}
}

// grpcResults checks a grpc run's status results (OK, or NotFound for not_found) and
// returns the calls by scenario.
func grpcResults(t *testing.T, run *v1alpha1.BenchmarkRun) map[string]int64 {
	t.Helper()
	calls := map[string]int64{}
	for _, r := range run.Status.Results {
		t.Logf("%s: scenario %-12s calls=%d errors=%d cps=%.1f mean=%.3fms", run.Name, r.Name, r.Calls, r.Errors, r.CPS, r.LatencyMs.Mean)
		calls[r.Name] = r.Calls
		wantErrors := int64(0)
		if r.Name == "not_found" {
			wantErrors = r.Calls
		}
		if r.Calls <= 0 || r.Errors != wantErrors {
			t.Errorf("%s: scenario %s: %d calls, %d errors", run.Name, r.Name, r.Calls, r.Errors)
		}
	}
	return calls
}

// checkGrpcReport checks that a run's report holds the packetd Grpc table and its CSV.
func checkGrpcReport(t *testing.T, ns string, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	md := mustKubectl(t, "", "-n", ns, "get", "configmap", run.Status.Report.ConfigMapName, "-o", `jsonpath={.data.report\.md}`)
	for _, w := range []string{"Grpc protocol table", "| PROTO | REQUEST | WORKERS | BODYSIZE |", "Return Value Distribution"} {
		if !strings.Contains(md, w) {
			t.Errorf("%s: report.md lacks %q:\n%s", run.Name, w, md)
		}
	}
	csv := mustKubectl(t, "", "-n", ns, "get", "configmap", run.Status.Report.ConfigMapName, "-o", `jsonpath={.data.grpc-protocol\.csv}`)
	if !strings.HasPrefix(csv, "PROTO,REQUEST,") {
		t.Errorf("%s: grpc-protocol.csv %q", run.Name, csv)
	}
}
