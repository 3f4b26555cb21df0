package bench

import (
	"context"
	"crypto/tls"
	"net"
	"testing"

	"github.com/benchrun/benchrun/internal/echo"
	"github.com/benchrun/benchrun/internal/results"
)

// tlsListener is a TLS listener on loopback with a certificate for "bench.test" signed by a
// fresh CA; it returns the CA in PEM.
func tlsListener(t *testing.T, protos ...string) (net.Listener, string) {
	t.Helper()
	ca, caKey, caPEM, _ := newCert(t, "ca", nil, nil)
	_, _, certPEM, keyPEM := newCert(t, "bench.test", ca, caKey)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: protos, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln, string(caPEM)
}

// tcp.echo and http over TLS, verified against the CA (the target's caSecretRef) with the
// server name given; an unverifiable server fails the connect.
func TestEchoAndHTTPOverTLS(t *testing.T) {
	ln, caPEM := tlsListener(t)
	srv := &echo.Server{}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cfg, err := TLSConfig("bench.test", caPEM, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := DialEcho(context.Background(), EchoOptions{Addr: ln.Addr().String(), Size: 100, Pipeline: 2, TLS: cfg})
	if err != nil {
		t.Fatal(err)
	}
	rec := results.NewRecorder("e", EchoScenarioType)
	if failed, err := c.Loop(context.Background(), 20, rec); failed != 0 || err != nil || rec.Scenario().Calls != 20 {
		t.Errorf("echo over TLS: %d failed, %v", failed, err)
	}
	_ = c.Close()
	wrong, _ := TLSConfig("other.test", caPEM, false)
	if _, err := DialEcho(context.Background(), EchoOptions{Addr: ln.Addr().String(), Size: 1, TLS: wrong}); err == nil {
		t.Error("a certificate for another name was accepted")
	}

	hl, caPEM2 := tlsListener(t, "h2", "http/1.1")
	hs := srv.HTTPServer()
	go func() { _ = hs.Serve(hl) }()
	defer func() { _ = hs.Close() }()
	for _, h2 := range []bool{false, true} {
		hcfg, _ := TLSConfig("bench.test", caPEM2, false)
		hc, err := NewHTTPClient(HTTPOptions{Addr: hl.Addr().String(), KeepAlive: true, HTTP2: h2, TLS: hcfg})
		if err != nil {
			t.Fatal(err)
		}
		rec := results.NewRecorder("h", HTTPScenarioType)
		if failed := hc.Loop(context.Background(), 10, rec); failed != 0 || rec.Scenario().ReturnValues["200"] != 10 {
			t.Errorf("https (h2 %v): %d failed, %v %v", h2, failed, rec.Scenario().ReturnValues, rec.Scenario().ErrorKinds)
		}
		hc.Close()
	}
	if got := srv.Stats().HTTPRequests; got != 20 {
		t.Errorf("the server answered %d https requests, want 20", got)
	}
}
