package hetu

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/hetutest"
)

// checkBenchmarkCalls runs the four benchmark RPCs and checks the published return values.
func checkBenchmarkCalls(t *testing.T, c *Conn) {
	t.Helper()
	// seed returns how many rows it wrote: 50 on a fresh server.
	if v, err := c.Call("seed", 1, 50); err != nil || returnStr(v) != "50" {
		t.Fatalf("seed(1, 50): %#v, %v", v, err)
	}
	for _, call := range []struct {
		name string
		args []any
		want string
	}{
		{"hello_world", nil, "世界收到"},
		{"just_get", []any{7}, "0"},
		{"upsert", []any{7}, "0"},
		{"exchange_data", []any{"AB1", 7}, "0"},
	} {
		// Several times each: the zlib stream and nonce counters must stay in step.
		for i := range 3 {
			v, err := c.Call(call.name, call.args...)
			if err != nil {
				t.Fatalf("%s #%d: %v", call.name, i, err)
			}
			if got := returnStr(v); got != call.want {
				t.Fatalf("%s #%d: got %q (%#v), want %q", call.name, i, got, v, call.want)
			}
		}
	}
}

func TestRealServerFullLayers(t *testing.T) {
	addr := hetutest.StartServer(t, "full", "")
	c, err := Dial(context.Background(), addr, Options{Instance: "bench", Layers: LayersMsgpackZlibCrypto})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	checkBenchmarkCalls(t, c)
	// release mode: an unknown endpoint closes the connection without a reply
	if _, err := c.Call("no_such_endpoint"); err == nil {
		t.Fatal("unknown endpoint answered")
	}
}

func TestRealServerMsgpackOnly(t *testing.T) {
	addr := hetutest.StartServer(t, "msgpack", "")
	c, err := Dial(context.Background(), "ws://"+addr+"/hetu/bench", Options{Layers: LayersMsgpack})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	checkBenchmarkCalls(t, c)
}

func TestRealServerAuthKey(t *testing.T) {
	const key = "k6-test-auth-key"
	addr := hetutest.StartServer(t, "full", key)
	c, err := Dial(context.Background(), addr, Options{Instance: "bench", AuthKey: []byte(key),
		Layers: LayersMsgpackZlibCrypto})
	if err != nil {
		t.Fatal(err)
	}
	checkBenchmarkCalls(t, c)
	_ = c.Close()
	for _, bad := range [][]byte{nil, []byte("wrong-key")} {
		c, err := Dial(context.Background(), addr, Options{Instance: "bench", AuthKey: bad,
			Layers: LayersMsgpackZlibCrypto, HandshakeTimeout: 5 * time.Second})
		if err == nil {
			_, err = c.Call("hello_world")
			_ = c.Close()
		}
		if err == nil {
			t.Fatalf("auth key %q accepted by a server with another key", bad)
		}
		var se *ServerError
		if errors.As(err, &se) {
			t.Fatalf("unexpected server error %v", err)
		}
	}
}

// TestRealServerSubscribePush subscribes to a row on one connection, updates it from another,
// and expects the server's ["updt", id, {row_id: row}] push on the first.
func TestRealServerSubscribePush(t *testing.T) {
	addr := hetutest.StartServer(t, "full", "")
	dial := func() *Conn {
		c, err := Dial(context.Background(), addr, Options{Instance: "bench", Layers: LayersMsgpackZlibCrypto})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	watcher, writer := dial(), dial()
	if _, err := writer.Call("upsert", 4242); err != nil {
		t.Fatal(err)
	}
	id, rows, err := watcher.Subscribe("Counter", "get", "number", 4242)
	if err != nil {
		t.Fatal(err)
	}
	if id == nil || rows == nil {
		t.Fatalf("subscribe: id %#v rows %#v, want a subscription to the existing row", id, rows)
	}
	if _, err := writer.Call("upsert", 4242); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	watcher.Watch(ctx)
	msg, err := watcher.Receive()
	if err != nil {
		t.Fatalf("no push after the row changed: %v", err)
	}
	m, ok := msg.([]any)
	if !ok || len(m) < 3 || m[0] != "updt" {
		t.Fatalf("got %#v, want [\"updt\", id, rows]", msg)
	}
	if returnStr(m[1]) != returnStr(id) {
		t.Errorf("push for subscription %v, want %v", m[1], id)
	}
	if err := watcher.Unsubscribe(id); err != nil {
		t.Fatal(err)
	}
}
