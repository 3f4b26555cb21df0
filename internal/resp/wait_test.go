package resp

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestWaitPingRealServers: WaitPing waits for a redis-server that starts late (and needs
// AUTH), returns once both servers answer, and names the missing one when ctx ends.
func TestWaitPingRealServers(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil || testing.Short() {
		t.Skip("needs redis-server (skipped with -short)")
	}
	const password = `p@ss "w" \ ünï`
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		return l.Addr().String()
	}
	server := func(addr string) *exec.Cmd {
		_, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
			"--dir", t.TempDir(), "--requirepass", password)
		t.Cleanup(func() {
			if cmd.Process != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
		return cmd
	}
	early, late := free(), free()
	if err := server(early).Start(); err != nil {
		t.Fatal(err)
	}
	lateServer := server(late)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	err = WaitPing(ctx, []string{early, late}, password, 50*time.Millisecond, nil)
	cancel()
	if err == nil || !strings.Contains(err.Error(), late) || strings.Contains(err.Error(), early) || strings.Contains(err.Error(), password) {
		t.Fatalf("with %s down: %v", late, err)
	}

	started := make(chan error, 1)
	time.AfterFunc(300*time.Millisecond, func() { started <- lateServer.Start() })
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t0 := time.Now()
	var logged []string
	if err := WaitPing(ctx, []string{early, late}, password, 50*time.Millisecond, func(f string, a ...any) {
		logged = append(logged, f)
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 300*time.Millisecond {
		t.Errorf("returned after %s, before the late server started", d)
	}
	if len(logged) == 0 {
		t.Error("nothing logged while waiting")
	}

	// A wrong password is not "ready".
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := WaitPing(ctx, []string{early}, "wrong", 50*time.Millisecond, nil); err == nil {
		t.Error("wrong password accepted")
	}
}
