//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/echo"
)

// TestCustomEchoTarget deploys our echo server (benchrun.local/echo:dev) as a custom target:
// a Deployment with two named ports (echo, http) behind a Service, ready by an httpGet probe;
// two runners load it with a plain and a pipelined tcp.echo scenario and an h2c POST http
// scenario (which goes to the port named http). The report has the echo-server shape (seed
// 002), and the messages and requests benchrun counted equal the server's own counters (read
// through the API server's Service proxy; cleanup Never keeps the server).
func TestCustomEchoTarget(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "custom-echo")
	m := runManifest("echo", `    custom:
      image: benchrun.local/echo:dev
      command: [echo-server]
      args: [-listen, ":$(BENCHRUN_PORT_ECHO)", -http, ":$(BENCHRUN_PORT_HTTP)"]
      ports:
      - {name: echo, port: 7007}
      - {name: http, port: 8080}
      readinessProbe:
        httpGet: {port: http, path: /stats}`, `
    scenarios:
    - name: echo_1000
      type: tcp.echo
      bodySize: 1000
    - name: echo_pipelined
      type: tcp.echo
      bodySize: 1000
      pipeline: 8
    - name: post_h2c
      type: http
      bodySize: 512
      http: {method: POST, path: /items, protocol: h2c}`, 2, "Never")
	apply(t, ns, m)
	run := waitPhase(t, ns, "echo", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if run.Status.Partial || run.Status.Target == nil || run.Status.Target.Kind != "custom" {
		t.Fatalf("partial %v (%v), target %+v", run.Status.Partial, run.Status.PartialReasons, run.Status.Target)
	}
	var calls, posts int64
	for _, r := range run.Status.Results {
		t.Logf("scenario %-15s calls=%d errors=%d cps=%.1f mean=%.3fms", r.Name, r.Calls, r.Errors, r.CPS, r.LatencyMs.Mean)
		if r.Calls <= 0 || r.Errors != 0 {
			t.Errorf("scenario %s: %d calls, %d errors", r.Name, r.Calls, r.Errors)
		}
		if r.Name == "post_h2c" {
			posts = r.Calls
		} else {
			calls += r.Calls
		}
	}
	if len(run.Status.Results) != 3 {
		t.Errorf("results: %+v", run.Status.Results)
	}
	md := mustKubectl(t, "", "-n", ns, "get", "configmap", run.Status.Report.ConfigMapName, "-o", `jsonpath={.data.report\.md}`)
	for _, w := range []string{"TCP Echo Statistics:", "| Requests/sec | Latency min (ms) |", "### echo_pipelined",
		"0.98KiB messages in ", "Requests/sec: ", "Transfer/sec: "} {
		if !strings.Contains(md, w) {
			t.Errorf("report.md lacks %q:\n%s", w, md)
		}
	}
	var svc string
	for _, ep := range run.Status.Target.Endpoints {
		if ep.Role == "custom-http" {
			svc, _, _ = strings.Cut(ep.Address, ".")
		}
	}
	if svc == "" {
		t.Fatalf("no custom-http endpoint: %+v", run.Status.Target.Endpoints)
	}
	out := mustKubectl(t, "", "get", "--raw", "/api/v1/namespaces/"+ns+"/services/http:"+svc+":http/proxy/stats")
	var st echo.Stats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("echo server stats %q: %v", out, err)
	}
	if st.Bytes != calls*1000 {
		t.Errorf("the echo server echoed %d bytes (%.2f messages of 1000 bytes); benchrun counted %d calls",
			st.Bytes, float64(st.Bytes)/1000, calls)
	}
	if st.HTTPRequests != posts || st.HTTPBodyBytes != posts*512 {
		t.Errorf("the server answered %d requests with %d body bytes; benchrun counted %d POSTs of 512 bytes",
			st.HTTPRequests, st.HTTPBodyBytes, posts)
	}
	if st.Connections != 2*16 { // 2 scenarios × 16 VUs (2 workers × 8 tasks), one connection each
		t.Errorf("the echo server saw %d connections, want 32", st.Connections)
	}
}
