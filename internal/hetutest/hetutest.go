// Package hetutest starts a real HeTu server for tests: benchrun's benchmark app
// (examples/hetu-bench) through hack/hetu-server.sh, from the runtime cached by
// hack/hetu-runtime.sh.
package hetutest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// repoRoot is the module root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "../.."))
}

// StartServer starts a HeTu server with the given layers ("full" or "msgpack") and auth key
// on a free loopback port, stops it when the test ends, and returns its host:port (instance
// "bench"). It skips the test, saying why, when the HeTu runtime is absent, when not root,
// or with -short.
func StartServer(t testing.TB, layers, authKey string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real HeTu server (skipped with -short)")
	}
	cache := os.Getenv("BENCHRUN_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache/benchrun")
	}
	// Lstat: the venv's python is a symlink valid only inside the rootfs.
	if _, err := os.Lstat(filepath.Join(cache, "hetu-runtime/rootfs/opt/hetu/bin/python")); err != nil {
		t.Skipf("HeTu runtime absent (%s/hetu-runtime): build it with hack/hetu-runtime.sh", cache)
	}
	if os.Geteuid() != 0 {
		t.Skip("hack/hetu-server.sh needs root (unshare + chroot)")
	}
	script := filepath.Join(repoRoot(), "hack/hetu-server.sh")
	port := freePortPair(t)
	cmd := exec.Command(script, "start", "--port", strconv.Itoa(port), "--layers", layers)
	cmd.Env = append(os.Environ(), "HETU_AUTH_KEY="+authKey)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hetu-server.sh start: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", "--port", strconv.Itoa(port)).Run() })
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// freePortPair returns a port p with p and p+1 (the server's private Redis) free.
func freePortPair(t testing.TB) int {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
			_ = l2.Close()
			return p
		}
	}
	t.Fatal("no free port pair")
	return 0
}
