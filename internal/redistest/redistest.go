// Package redistest runs private redis-server processes for tests, on free loopback ports,
// stopped when the test ends.
package redistest

import (
	"net"
	"os/exec"
	"testing"
	"time"
)

// Bin is the redis-server binary; it skips the test, saying why, when there is none or with
// -short.
func Bin(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs redis-server (skipped with -short)")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("needs redis-server (apt-get install -y redis-server)")
	}
	return bin
}

// FreeAddr is a loopback host:port nothing listens on right now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// Command is redis-server on addr without persistence, with extra arguments (later ones win,
// e.g. "--port", "0" for TLS only), not started yet; it is killed when the test ends.
func Command(t testing.TB, addr string, args ...string) *exec.Cmd {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Bin(t), append([]string{"--bind", host, "--port", port, "--save", "", "--appendonly", "no",
		"--dir", t.TempDir()}, args...)...)
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

// WaitListening waits until addr accepts TCP connections (5 s at most).
func WaitListening(t testing.TB, addr string) {
	t.Helper()
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return
		}
		if i > 100 {
			t.Fatalf("redis-server on %s did not start", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Start starts redis-server with extra arguments on a free loopback port and returns its
// host:port once it accepts connections.
func Start(t testing.TB, args ...string) string {
	t.Helper()
	addr := FreeAddr(t)
	if err := Command(t, addr, args...).Start(); err != nil {
		t.Fatal(err)
	}
	WaitListening(t, addr)
	return addr
}
