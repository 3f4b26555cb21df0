package bench

import (
	"context"
	"net"
	"testing"

	"github.com/benchrun/benchrun/internal/echo"
	"github.com/benchrun/benchrun/internal/results"
)

// EchoConn.Loop against the real echo server: every message is one recorded call, the
// pipeline keeps several in flight, bytes are counted both ways.
func TestEchoLoop(t *testing.T) {
	_, ln, stop, err := echo.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	for _, pipe := range []int{1, 7} {
		c, err := DialEcho(context.Background(), EchoOptions{Addr: ln.Addr().String(), Size: 300, Pipeline: pipe})
		if err != nil {
			t.Fatal(err)
		}
		rec := results.NewRecorder("echo", EchoScenarioType)
		for range 3 {
			if failed, err := c.Loop(context.Background(), 50, rec); failed != 0 || err != nil {
				t.Fatalf("pipeline %d: %d failed, %v", pipe, failed, err)
			}
		}
		s := rec.Scenario()
		sent, recv := c.Bytes()
		if s.Calls != 150 || s.Errors != 0 || sent != 150*300 || recv != 150*300 || s.ReturnValues["300"] != 150 {
			t.Errorf("pipeline %d: %d calls %d errors, bytes %d/%d, values %v", pipe, s.Calls, s.Errors, sent, recv, s.ReturnValues)
		}
		_ = c.Close()
	}
	if st := stop(); st.Bytes != 2*150*300 {
		t.Errorf("server echoed %d bytes", st.Bytes)
	}
}

// A server that answers something else than the message: the call fails as "mismatch",
// the messages still in flight fail with it, and the error tells the caller to redial.
func TestEchoMismatchAndCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 1000)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			for i := range buf[:n] {
				buf[i] = 'Z'
			}
			_, _ = c.Write(buf[:n])
		}
	}()
	c, err := DialEcho(context.Background(), EchoOptions{Addr: ln.Addr().String(), Size: 10, Pipeline: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	rec := results.NewRecorder("echo", EchoScenarioType)
	failed, err := c.Loop(context.Background(), 100, rec)
	s := rec.Scenario()
	if err == nil || failed != 4 || s.Calls != 4 || s.ErrorKinds["mismatch"] != 4 {
		t.Errorf("err %v, %d failed, %d calls, kinds %v", err, failed, s.Calls, s.ErrorKinds)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if failed, err := c.Loop(ctx, 10, nil); err == nil || failed != 0 {
		t.Errorf("canceled loop: %d failed, %v", failed, err)
	}
	if _, err := DialEcho(context.Background(), EchoOptions{Addr: ln.Addr().String(), Size: 0}); err == nil {
		t.Error("size 0 accepted")
	}
}
