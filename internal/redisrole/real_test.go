package redisrole

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// startRedis runs a private redis-server on a free loopback port with extra arguments.
func startRedis(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil || testing.Short() {
		t.Skip("needs redis-server (skipped with -short)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--save", "", "--appendonly", "no", "--dir", t.TempDir()}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return addr
		}
		if i > 100 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRoleOfRealServers asks a real master and a real replica (replicaof, with a password).
func TestRoleOfRealServers(t *testing.T) {
	ctx := context.Background()
	master := startRedis(t, "--requirepass", "s3cret")
	host, port, _ := net.SplitHostPort(master)
	replica := startRedis(t, "--requirepass", "s3cret", "--masterauth", "s3cret", "--replicaof", host, port)
	if role, err := Role(ctx, master, "s3cret"); err != nil || role != "master" {
		t.Fatalf("master: %q, %v", role, err)
	}
	if role, err := Role(ctx, replica, "s3cret"); err != nil || role != "replica" {
		t.Fatalf("replica: %q, %v", role, err)
	}
	if _, err := Role(ctx, master, "wrong"); err == nil {
		t.Fatal("a wrong password was accepted")
	}
}
