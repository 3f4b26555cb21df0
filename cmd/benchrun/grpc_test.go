package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/internal/echo"
)

const customGRPCRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-grpc
spec:
  target:
    custom:
      image: benchrun.local/echo:dev
      command: [%q]
      args: [-listen, "127.0.0.1:$(BENCHRUN_PORT_ECHO)", -grpc, "127.0.0.1:$(BENCHRUN_PORT_GRPC)", -stats-file, %q]
      ports: [{name: echo, port: 7007}, {name: grpc, port: 50051}]
      readinessProbe: {tcpSocket: {port: grpc}}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 3s
    scenarios:
    - name: echo_empty
      type: grpc
      grpc: {method: benchrun.echo.v1.Echo/Echo}
    - name: echo_10k
      type: grpc
      bodySize: 10240
      requests: 2000
      grpc: {method: benchrun.echo.v1.Echo/Echo, request: '{"text": "hi"}', metadata: {x-bench: "1"}}
`

// TestRunCustomGRPC runs our echo server's gRPC service as a custom target with `benchrun
// run` (two k6 runners; the grpc scenarios go to the port named grpc, not the first port):
// the report has ya's tables with OK as the return value and the packetd Grpc table, the
// fixed-count scenario makes exactly its 2000 calls, and the merged counts equal the server's
// own (calls and payload bytes).
func TestRunCustomGRPC(t *testing.T) {
	needBinaries(t)
	file, stats := echoRunFile(t, customGRPCRun)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--output", "markdown", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, c.stdout.String())
	}
	stdout := c.stdout.String()
	for _, want := range []string{"Average CPS", "| echo_10k ", "Return Value Distribution", "| OK ",
		"Grpc protocol table", "| PROTO | REQUEST | WORKERS | BODYSIZE |", "| Grpc  |    2000 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "grpc-protocol.csv")); err != nil || !strings.Contains(string(b), ",10KB,") {
		t.Errorf("grpc-protocol.csv: %s %v", b, err)
	}
	doc := completeDoc(t, out, 2)
	var st echo.Stats
	b, err := os.ReadFile(stats)
	if err != nil || json.Unmarshal(b, &st) != nil {
		t.Fatalf("echo server stats: %s %v", b, err)
	}
	var calls int64
	for _, s := range doc.Scenarios {
		calls += s.Calls
		if s.ReturnValues["OK"] != s.Calls {
			t.Errorf("%s: values %v", s.Name, s.ReturnValues)
		}
		if s.Name == "echo_10k" && (s.Calls != 2000 || st.GRPCBytes != 2000*10240) {
			t.Errorf("echo_10k: %d calls, the server received %d payload bytes (want 2000 × 10240)", s.Calls, st.GRPCBytes)
		}
	}
	if st.GRPCCalls != calls {
		t.Errorf("the server answered %d gRPC calls, the merged document accounts for %d", st.GRPCCalls, calls)
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}
