package bench

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/benchrun/benchrun/internal/results"
)

// countingServer is a real net/http server on loopback counting requests, body bytes and
// protocols; /missing answers 404.
type countingServer struct {
	requests, bodyBytes, h2 atomic.Int64
	conns                   atomic.Int64
	srv                     *httptest.Server
}

func newCountingServer(t *testing.T, h2c bool) *countingServer {
	t.Helper()
	cs := &countingServer{}
	cs.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		cs.requests.Add(1)
		cs.bodyBytes.Add(n)
		if r.ProtoMajor == 2 {
			cs.h2.Add(1)
		}
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Echo", r.Header.Get("X-Bench"))
		_, _ = w.Write([]byte("hello"))
	}))
	cs.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			cs.conns.Add(1)
		}
	}
	if h2c {
		cs.srv.Config.Protocols = new(http.Protocols)
		cs.srv.Config.Protocols.SetHTTP1(true)
		cs.srv.Config.Protocols.SetUnencryptedHTTP2(true)
	}
	cs.srv.Start()
	t.Cleanup(cs.srv.Close)
	return cs
}

// HTTP loops against a real server: every response one call, status codes as values, 404 as
// an error of kind "404", keep-alive reuses one connection, h2c speaks HTTP/2, bodies sent.
func TestHTTPLoop(t *testing.T) {
	for _, tc := range []struct {
		name      string
		h2c, keep bool
		path      string
		body      int
	}{
		{"get keep-alive", false, true, "/", 0},
		{"post no keep-alive", false, false, "/items?x=1", 100},
		{"h2c", true, true, "/", 10},
		{"404", false, true, "/missing", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := newCountingServer(t, tc.h2c)
			addr := strings.TrimPrefix(cs.srv.URL, "http://")
			method := "GET"
			if tc.body > 0 {
				method = "POST"
			}
			c, err := NewHTTPClient(HTTPOptions{Addr: addr, Method: method, Path: tc.path, BodySize: tc.body,
				KeepAlive: tc.keep, HTTP2: tc.h2c, Headers: map[string]string{"X-Bench": "1"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rec := results.NewRecorder("h", HTTPScenarioType)
			failed := c.Loop(context.Background(), 50, rec)
			s := rec.Scenario()
			if s.Calls != 50 || cs.requests.Load() != 50 || cs.bodyBytes.Load() != int64(50*tc.body) {
				t.Errorf("%d calls, server: %d requests, %d body bytes", s.Calls, cs.requests.Load(), cs.bodyBytes.Load())
			}
			if tc.path == "/missing" {
				if failed != 50 || s.ErrorKinds["404"] != 50 {
					t.Errorf("404: %d failed, kinds %v", failed, s.ErrorKinds)
				}
			} else if failed != 0 || s.ReturnValues["200"] != 50 {
				t.Errorf("%d failed, values %v kinds %v", failed, s.ReturnValues, s.ErrorKinds)
			}
			wantConns := int64(1)
			if !tc.keep {
				wantConns = 50
			}
			if cs.conns.Load() != wantConns {
				t.Errorf("%d connections, want %d", cs.conns.Load(), wantConns)
			}
			if tc.h2c && cs.h2.Load() != 50 {
				t.Errorf("%d HTTP/2 requests of 50", cs.h2.Load())
			}
			if s.BytesSent < int64(50*tc.body) || s.BytesReceived < 50*5 {
				t.Errorf("bytes sent %d received %d", s.BytesSent, s.BytesReceived)
			}
		})
	}
}

// A refused connection is one failed call of kind "connect"; the loop stops there.
func TestHTTPRefused(t *testing.T) {
	cs := newCountingServer(t, false)
	addr := strings.TrimPrefix(cs.srv.URL, "http://")
	cs.srv.Close()
	c, err := NewHTTPClient(HTTPOptions{Addr: addr, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := results.NewRecorder("h", HTTPScenarioType)
	if failed := c.Loop(context.Background(), 10, rec); failed != 1 || rec.Scenario().ErrorKinds["connect"] != 1 {
		t.Errorf("%d failed, kinds %v", failed, rec.Scenario().ErrorKinds)
	}
}
