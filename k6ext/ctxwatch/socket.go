package ctxwatch

import "context"

// Closer is a connection a Socket watches and closes.
type Closer interface {
	Conn
	// Close closes the connection.
	Close() error
}

// Socket is what the synchronous clients share around their connection: a Watcher on it
// and counters of the bytes sent and received. Clients embed a Socket and Attach their
// connection; the counters work without it.
type Socket struct {
	conn       Closer
	watch      Watcher
	sent, recv int64
}

// Attach sets the connection that Watch watches and Close closes.
func (s *Socket) Attach(conn Closer) { s.conn = conn }

// Watch makes blocked reads and writes fail as soon as ctx is done (k6 cancels a VU's
// context at the end of every iteration and on interrupt).
func (s *Socket) Watch(ctx context.Context) { s.watch.Watch(ctx, s.conn) }

// Close stops watching and closes the connection.
func (s *Socket) Close() error {
	s.watch.Stop()
	return s.conn.Close()
}

// Bytes returns and resets the bytes sent and received since the last call.
func (s *Socket) Bytes() (sent, recv int64) {
	sent, recv = s.sent, s.recv
	s.sent, s.recv = 0, 0
	return sent, recv
}

// CountSent adds n bytes sent.
func (s *Socket) CountSent(n int) { s.sent += int64(n) }

// CountRecv adds n bytes received.
func (s *Socket) CountRecv(n int) { s.recv += int64(n) }
