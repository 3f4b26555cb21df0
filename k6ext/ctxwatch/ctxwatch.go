// Package ctxwatch interrupts a connection's blocked reads and writes when a context ends.
// k6 cancels a VU's context at the end of every iteration and on interrupt; the synchronous
// clients of k6/x/benchrun and k6/x/hetu use this so a VU never stays blocked on a socket.
package ctxwatch

import (
	"context"
	"sync"
	"time"
)

// Conn is what a Watcher needs of a connection: read and write deadlines.
type Conn interface {
	// SetReadDeadline bounds blocked reads.
	SetReadDeadline(t time.Time) error
	// SetWriteDeadline bounds blocked writes.
	SetWriteDeadline(t time.Time) error
}

// Watcher ties one connection's deadlines to the context being watched.
type Watcher struct {
	mu      sync.Mutex // guards watched against the context callback
	watched context.Context
	stop    func() bool
}

// Watch makes conn's blocked reads and writes fail as soon as ctx is done. Calling it again
// with the same ctx is cheap; a new ctx replaces the previous one and clears the deadlines.
func (w *Watcher) Watch(ctx context.Context, conn Conn) {
	if ctx == w.watched || ctx == nil {
		return
	}
	w.Stop()
	w.mu.Lock()
	w.watched = ctx
	_ = conn.SetReadDeadline(time.Time{})
	_ = conn.SetWriteDeadline(time.Time{})
	w.mu.Unlock()
	w.stop = context.AfterFunc(ctx, func() {
		// The callback may run after the next iteration started watching its own context.
		w.mu.Lock()
		if w.watched == ctx {
			_ = conn.SetReadDeadline(time.Now())
			_ = conn.SetWriteDeadline(time.Now())
		}
		w.mu.Unlock()
	})
}

// Stop stops watching (before the connection is closed).
func (w *Watcher) Stop() {
	if w.stop != nil {
		w.stop()
	}
}
