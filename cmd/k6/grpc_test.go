package main

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/echo"
	"github.com/benchrun/benchrun/internal/plan"
)

// TestGRPCMatchesServerCount runs our k6 (benchrun.js, the Go gRPC hot path) against our real
// gRPC Echo server on loopback (request type by server reflection) with three scenarios: empty
// requests for 2 s, a fixed count of 3000 calls with 10 KiB payloads, and calls asking for
// status ResourceExhausted. The server's own call and payload counts equal what benchrun
// recorded, OK is the return value, the requested status the error kind, the document
// carries the method and body size (the packetd table's columns).
func TestGRPCMatchesServerCount(t *testing.T) {
	srv := &echo.Server{}
	gs, err := srv.GRPCServer()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	body, requests := int32(10240), int64(3000)
	method := echo.GRPCEchoMethod
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "grpc"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalGRPC, Addresses: []string{ln.Addr().String()}}},
			Load: v1alpha1.LoadSpec{Workers: 1, TasksPerWorker: 4, Duration: metav1.Duration{Duration: 2 * time.Second},
				Scenarios: []v1alpha1.Scenario{
					{Name: "empty", Type: v1alpha1.ScenarioGRPC, GRPC: &v1alpha1.GRPCSpec{Method: method, Metadata: map[string]string{"x-bench": "1"}}},
					{Name: "payload", Type: v1alpha1.ScenarioGRPC, BodySize: &body, Requests: &requests, GRPC: &v1alpha1.GRPCSpec{Method: method, BodyField: "payload"}},
					{Name: "exhausted", Type: v1alpha1.ScenarioGRPC, GRPC: &v1alpha1.GRPCSpec{Method: method, Request: `{"code": 8}`}},
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
	st := srv.Stats()
	var calls int64
	for _, s := range doc.Scenarios {
		calls += s.Calls
		t.Logf("%-9s %d calls, %.0f/s, values %v, errors %v, bytes %d/%d", s.Name, s.Calls,
			float64(s.Calls)/s.LastEnd.Sub(s.FirstStart).Seconds(), s.ReturnValues, s.ErrorKinds, s.BytesSent, s.BytesReceived)
		if s.Type != "grpc" || s.Calls < 100 || s.BytesSent == 0 || s.BytesReceived == 0 || s.Command != method {
			t.Errorf("%s: type %s, %d calls, bytes %d/%d, command %q", s.Name, s.Type, s.Calls, s.BytesSent, s.BytesReceived, s.Command)
		}
		switch s.Name {
		case "exhausted":
			if s.Errors != s.Calls || s.ErrorKinds["ResourceExhausted"] != s.Calls {
				t.Errorf("exhausted: %d errors of %d, kinds %v", s.Errors, s.Calls, s.ErrorKinds)
			}
		case "payload":
			if s.Calls != requests || s.BodySize != int64(body) || s.ReturnValues["OK"] != s.Calls {
				t.Errorf("payload: %d calls of %d, body size %d, values %v", s.Calls, requests, s.BodySize, s.ReturnValues)
			}
			if st.GRPCBytes != s.Calls*int64(body) || s.BytesSent < st.GRPCBytes || s.BytesReceived < st.GRPCBytes {
				t.Errorf("the server received %d payload bytes for %d calls of %d bytes; wire bytes %d/%d",
					st.GRPCBytes, s.Calls, body, s.BytesSent, s.BytesReceived)
			}
		default:
			if s.Errors != 0 || s.ReturnValues["OK"] != s.Calls {
				t.Errorf("%s: %d errors, values %v, kinds %v", s.Name, s.Errors, s.ReturnValues, s.ErrorKinds)
			}
		}
	}
	if len(doc.Scenarios) != 3 || st.GRPCCalls != calls {
		t.Errorf("%d scenarios; the server answered %d calls, benchrun recorded %d", len(doc.Scenarios), st.GRPCCalls, calls)
	}
}
