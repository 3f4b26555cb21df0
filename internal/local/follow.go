package local

import (
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// masterFollower is the local counterpart of the cluster's master Service for mode ha when the
// run declares faults: it listens on 127.0.0.1 and forwards each new connection to the master
// the sentinels report at that moment, so a client (or the fault probe) that reconnects after
// a failover reaches the new master, as a pod does through the Service that follows the pod
// labelled master. Connections already forwarded stay with their server.
type masterFollower struct {
	ln      net.Listener
	resolve func(ctx context.Context) string
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  bool
}

// startFollower listens on a free loopback port and forwards to resolve's address.
func startFollower(resolve func(ctx context.Context) string) (*masterFollower, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &masterFollower{ln: ln, resolve: resolve, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.accept()
	return f, nil
}

// addr is the address clients connect to.
func (f *masterFollower) addr() string { return f.ln.Addr().String() }

// accept serves connections until the listener is closed.
func (f *masterFollower) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go f.forward(c)
	}
}

// track adds (or with add false removes) a connection; it reports false once closed.
func (f *masterFollower) track(c net.Conn, add bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !add {
		delete(f.conns, c)
		return true
	}
	if f.closed {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

// forward connects c to the current master and copies both ways until either side closes.
func (f *masterFollower) forward(c net.Conn) {
	defer f.wg.Done()
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	target := f.resolve(ctx)
	cancel()
	s, err := net.DialTimeout("tcp", target, time.Second)
	if err != nil {
		return
	}
	defer func() { _ = s.Close() }()
	if !f.track(c, true) || !f.track(s, true) {
		return
	}
	defer f.track(c, false)
	defer f.track(s, false)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
	<-done
}

// close stops accepting, closes every forwarded connection and waits for the forwarders.
func (f *masterFollower) close() {
	f.mu.Lock()
	f.closed = true
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	_ = f.ln.Close()
	f.wg.Wait()
}
