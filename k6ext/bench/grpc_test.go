package bench

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/internal/echo"
	"github.com/benchrun/benchrun/internal/results"
)

// startGRPCEcho serves our gRPC Echo service (with reflection) on a loopback port.
func startGRPCEcho(t *testing.T) (*echo.Server, string) {
	t.Helper()
	s := &echo.Server{}
	gs, err := s.GRPCServer()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	return s, ln.Addr().String()
}

// GRPCClient.Loop against the real Echo server: the request type comes from server
// reflection, every call is one recorded call (OK the return value, a requested status code
// an error of that code's kind), the server's own call and payload counts equal ours.
func TestGRPCLoop(t *testing.T) {
	s, addr := startGRPCEcho(t)
	for _, tc := range []struct {
		name, request, field string
		size                 int
		kind                 string
	}{
		{"empty", "", "", 0, ""},
		{"payload 1000", `{"text": "hi"}`, "", 1000, ""},
		{"text field", "", "text", 10, ""},
		{"status 8", `{"code": 8}`, "", 0, "ResourceExhausted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Stats()
			c, err := NewGRPCClient(context.Background(), GRPCOptions{Addr: addr, Method: echo.GRPCEchoMethod,
				Request: tc.request, BodyField: tc.field, BodySize: tc.size, Metadata: map[string]string{"x-bench": "1"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rec := results.NewRecorder("g", GRPCScenarioType)
			failed := c.Loop(context.Background(), 200, rec)
			sc, st := rec.Scenario(), s.Stats()
			calls, payload := st.GRPCCalls-before.GRPCCalls, st.GRPCBytes-before.GRPCBytes
			wantPayload := int64(200 * tc.size)
			if tc.field == "text" {
				wantPayload = 0 // the server counts the payload field only
			}
			if sc.Calls != 200 || calls != 200 || payload != wantPayload {
				t.Errorf("%d calls recorded; server: %d calls, %d payload bytes (want %d)", sc.Calls, calls, payload, wantPayload)
			}
			if tc.kind != "" {
				if failed != 200 || sc.ErrorKinds[tc.kind] != 200 {
					t.Errorf("%d failed, kinds %v", failed, sc.ErrorKinds)
				}
			} else if failed != 0 || sc.ReturnValues["OK"] != 200 {
				t.Errorf("%d failed, values %v, kinds %v", failed, sc.ReturnValues, sc.ErrorKinds)
			}
			if sc.BytesSent < wantPayload || sc.BytesReceived < wantPayload || sc.BytesSent == 0 {
				t.Errorf("wire bytes sent %d received %d", sc.BytesSent, sc.BytesReceived)
			}
		})
	}
}

// What the server does not know is refused when the client is made; a server that is not
// up yet is not: its calls fail as Unavailable and the loop stops at the first.
func TestGRPCRefusedAndUnknown(t *testing.T) {
	_, addr := startGRPCEcho(t)
	for _, tc := range []struct{ method, request, field, want string }{
		{"benchrun.echo.v1.Echo/Nope", "", "", "has no method Nope"},
		{"benchrun.echo.v1.Nope/Echo", "", "", "server reflection"},
		{"Echo", "", "", "package.Service/Method"},
		{echo.GRPCEchoMethod, `{"nope": 1}`, "", "protobuf JSON"},
		{echo.GRPCEchoMethod, "", "code", "not a bytes or string field"},
	} {
		_, err := NewGRPCClient(context.Background(), GRPCOptions{Addr: addr, Method: tc.method, Request: tc.request, BodyField: tc.field, BodySize: 1})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s %s: %v, want %q", tc.method, tc.request, tc.field, err, tc.want)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	_ = ln.Close()
	c, err := NewGRPCClient(context.Background(), GRPCOptions{Addr: down, Method: echo.GRPCEchoMethod})
	if err != nil {
		t.Fatalf("a server not up yet: %v", err)
	}
	defer c.Close()
	rec := results.NewRecorder("g", GRPCScenarioType)
	if failed := c.Loop(context.Background(), 10, rec); failed != 1 || rec.Scenario().ErrorKinds["Unavailable"] != 1 {
		t.Errorf("%d failed, kinds %v", failed, rec.Scenario().ErrorKinds)
	}
}

// grpc over TLS (h2 negotiated by ALPN), verified against the CA with the server name given:
// calls succeed and are counted by the server; a wrong server name fails every call as
// Unavailable (the handshake), none reaches the server.
func TestGRPCOverTLS(t *testing.T) {
	ln, caPEM := tlsListener(t, "h2")
	s := &echo.Server{}
	gs, err := s.GRPCServer()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"bench.test", true}, {"other.test", false}} {
		cfg, err := TLSConfig(tc.name, caPEM, false)
		if err != nil {
			t.Fatal(err)
		}
		cfg.NextProtos = []string{"h2"}
		before := s.Stats().GRPCCalls
		c, err := NewGRPCClient(context.Background(), GRPCOptions{Addr: ln.Addr().String(), Method: echo.GRPCEchoMethod, BodySize: 100, TLS: cfg})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rec := results.NewRecorder("g", GRPCScenarioType)
		failed := c.Loop(context.Background(), 50, rec)
		c.Close()
		calls := s.Stats().GRPCCalls - before
		if tc.ok && (failed != 0 || calls != 50 || rec.Scenario().ReturnValues["OK"] != 50) {
			t.Errorf("%s: %d failed, server %d calls, values %v kinds %v", tc.name, failed, calls, rec.Scenario().ReturnValues, rec.Scenario().ErrorKinds)
		}
		if !tc.ok && (failed != 1 || calls != 0 || rec.Scenario().ErrorKinds["Unavailable"] != 1) {
			t.Errorf("%s: %d failed, server %d calls, kinds %v", tc.name, failed, calls, rec.Scenario().ErrorKinds)
		}
	}
}
