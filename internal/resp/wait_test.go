package resp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/redistest"
)

// TestWaitPingRealServers: WaitPing waits for a redis-server that starts late (and needs
// AUTH), returns once both servers answer, and names the missing one when ctx ends.
func TestWaitPingRealServers(t *testing.T) {
	const password = `p@ss "w" \ ünï`
	early, late := redistest.FreeAddr(t), redistest.FreeAddr(t)
	if err := redistest.Command(t, early, "--requirepass", password).Start(); err != nil {
		t.Fatal(err)
	}
	redistest.WaitListening(t, early)
	lateServer := redistest.Command(t, late, "--requirepass", password)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	err := WaitPing(ctx, []string{early, late}, password, 50*time.Millisecond, nil)
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
