package ctxwatch

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestBlockedReadEndsWithItsContext(t *testing.T) {
	a, b := net.Pipe()
	defer func() { _ = a.Close(); _ = b.Close() }()
	var w Watcher
	ctx, cancel := context.WithCancel(context.Background())
	w.Watch(ctx, a)
	done := make(chan error, 1)
	go func() { _, err := a.Read(make([]byte, 1)); done <- err }()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("read succeeded with nothing sent")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("blocked read not interrupted by the cancelled context")
	}
	// The next iteration's context clears the deadline: I/O works again.
	w.Watch(context.Background(), a)
	go func() { _, _ = b.Write([]byte{1}) }()
	if _, err := a.Read(make([]byte, 1)); err != nil {
		t.Fatalf("read after a new Watch: %v", err)
	}
	w.Stop()
}
