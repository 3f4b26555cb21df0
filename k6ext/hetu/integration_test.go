package hetu

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// startTestServer starts a real HeTu server (examples/hetu-bench through
// hack/hetu-server.sh) on a free port and returns host:port; it is stopped when the test
// ends. The test is skipped, saying why, when the cached HeTu runtime is absent.
func startTestServer(t *testing.T, layers, authKey string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real HeTu server (skipped with -short)")
	}
	root, _ := filepath.Abs("../..")
	cache := os.Getenv("BENCHRUN_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache/benchrun")
	}
	if _, err := os.Lstat(filepath.Join(cache, "hetu-runtime/rootfs/opt/hetu/bin/python")); err != nil {
		t.Skipf("HeTu runtime absent (%s/hetu-runtime): build it with hack/hetu-runtime.sh", cache)
	}
	if os.Geteuid() != 0 {
		t.Skip("hack/hetu-server.sh needs root (unshare + chroot)")
	}
	port := freePortPair(t)
	args := []string{"start", "--port", strconv.Itoa(port), "--layers", layers}
	cmd := exec.Command(filepath.Join(root, "hack/hetu-server.sh"), args...)
	cmd.Env = append(os.Environ(), "HETU_AUTH_KEY="+authKey)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hetu-server.sh start: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command(filepath.Join(root, "hack/hetu-server.sh"), "stop", "--port", strconv.Itoa(port)).Run()
	})
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// freePortPair returns a port p with p and p+1 (the server's private Redis) free.
func freePortPair(t *testing.T) int {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
			l2.Close()
			return p
		}
	}
	t.Fatal("no free port pair")
	return 0
}

// checkBenchmarkCalls runs the four benchmark RPCs and checks the published return values.
func checkBenchmarkCalls(t *testing.T, c *Conn) {
	t.Helper()
	for _, call := range []struct {
		name string
		args []any
		want string
	}{
		{"hello_world", nil, "世界收到"},
		{"seed", []any{1, 50}, "50"},
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
	addr := startTestServer(t, "full", "")
	c, err := Dial(context.Background(), addr, Options{Instance: "bench", Layers: LayersMsgpackZlibCrypto})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkBenchmarkCalls(t, c)
	// release mode: an unknown endpoint closes the connection without a reply
	if _, err := c.Call("no_such_endpoint"); err == nil {
		t.Fatal("unknown endpoint answered")
	}
}

func TestRealServerMsgpackOnly(t *testing.T) {
	addr := startTestServer(t, "msgpack", "")
	c, err := Dial(context.Background(), "ws://"+addr+"/hetu/bench", Options{Layers: LayersMsgpack})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkBenchmarkCalls(t, c)
}

func TestRealServerAuthKey(t *testing.T) {
	const key = "k6-test-auth-key"
	addr := startTestServer(t, "full", key)
	c, err := Dial(context.Background(), addr, Options{Instance: "bench", AuthKey: []byte(key),
		Layers: LayersMsgpackZlibCrypto})
	if err != nil {
		t.Fatal(err)
	}
	checkBenchmarkCalls(t, c)
	c.Close()
	for _, bad := range [][]byte{nil, []byte("wrong-key")} {
		c, err := Dial(context.Background(), addr, Options{Instance: "bench", AuthKey: bad,
			Layers: LayersMsgpackZlibCrypto, HandshakeTimeout: 5 * time.Second})
		if err == nil {
			_, err = c.Call("hello_world")
			c.Close()
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
