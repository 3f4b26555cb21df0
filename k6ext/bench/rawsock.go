package bench

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// sockReader is the reader under a Redis Conn's bufio.Reader. It counts the bytes read and,
// on a plain TCP connection, can send a request and wait for its reply in one step
// (pending): the request is written from inside the poller's read callback, so the
// goroutine parks until the reply is readable instead of first trying a read that can only
// find nothing (EAGAIN) because the server has not answered yet. That read was one of the
// three system calls of every call (a CPU profile of k6 GET at 50 connections: 94 % of the
// calls made it; hack/bench-redis.sh measures the saving).
//
// Ordering: RawConn.Read arms the poller (discarding older readiness) before it calls the
// callback, and the request is written from that callback, so the reply's readiness can
// never be missed.
type sockReader struct {
	conn    net.Conn
	raw     syscall.RawConn // nil when not a plain TCP connection (TLS): ordinary reads only
	c       *Conn
	pending []byte // request bytes to write before the next read
	// the callback's state (the callback is bound once, so a call allocates nothing)
	buf    []byte
	n      int
	opErr  error
	onRead func(fd uintptr) bool
}

// newSockReader returns the reader of c's connection nc.
func newSockReader(c *Conn, nc net.Conn) *sockReader {
	s := &sockReader{conn: nc, c: c}
	if tc, ok := nc.(*net.TCPConn); ok {
		if raw, err := tc.SyscallConn(); err == nil {
			s.raw = raw
		}
	}
	s.onRead = s.callback
	return s
}

// Read implements io.Reader: it writes the pending request first, if any.
func (s *sockReader) Read(p []byte) (int, error) {
	if len(s.pending) == 0 || s.raw == nil {
		n, err := s.conn.Read(p)
		s.c.CountRecv(n)
		return n, err
	}
	s.buf, s.n, s.opErr = p, 0, nil
	err := s.raw.Read(s.onRead)
	s.buf = nil
	if err == nil {
		err = s.opErr
	}
	if err != nil {
		s.pending = nil
		return 0, err
	}
	if len(s.pending) > 0 { // the socket buffer was full: the rest goes the ordinary way
		w, err := s.conn.Write(s.pending)
		s.c.CountSent(w)
		s.pending = nil
		if err != nil {
			return 0, err
		}
		n, err := s.conn.Read(p)
		s.c.CountRecv(n)
		return n, err
	}
	s.c.CountRecv(s.n)
	return s.n, nil
}

// callback is RawConn.Read's function: first the write of the pending request (then false:
// wait until readable), then the read (false again when it finds nothing yet).
func (s *sockReader) callback(fd uintptr) bool {
	if len(s.pending) > 0 {
		w, err := rawIO(syscall.SYS_WRITE, fd, s.pending)
		if w > 0 {
			s.c.CountSent(w)
			s.pending = s.pending[w:]
		}
		switch {
		case err == syscall.EAGAIN:
			return true
		case err != nil:
			s.opErr = s.opError("write", err)
			return true
		}
		return len(s.pending) > 0 // all sent: park until the reply is readable
	}
	n, err := rawIO(syscall.SYS_READ, fd, s.buf)
	switch {
	case err == syscall.EAGAIN:
		return false
	case err != nil:
		s.opErr = s.opError("read", err)
	case n == 0:
		s.opErr = io.EOF
	default:
		s.n = n
	}
	return true
}

// opError wraps a system call error as the net package does (*net.OpError around an
// *os.SyscallError), so errKind classifies it the same way.
func (s *sockReader) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: s.conn.LocalAddr(), Addr: s.conn.RemoteAddr(),
		Err: os.NewSyscallError(op, err)}
}

// rawIO is read(2) or write(2) (trap) of the non-empty p on the non-blocking socket fd,
// retried when interrupted by a signal. It is a raw system call: the runtime is not told,
// so its monitor does not hand the goroutine's P to another thread while the call runs (it
// cannot block: the socket is non-blocking). With ordinary system calls, the profile showed
// that hand-off machinery (sysmon, futex wake-ups, thread switches) at up to 7 % of k6's CPU.
func rawIO(trap, fd uintptr, p []byte) (int, error) {
	for {
		n, _, errno := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch errno {
		case 0:
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		return 0, errno
	}
}

// Call sends one encoded command and reads its reply like SkipReply. On a plain TCP
// connection with nothing buffered the request is written as the reply's read is armed
// (sockReader); otherwise through the write buffer.
func (c *Conn) Call(cmd []byte) (Reply, error) {
	if c.sock != nil && c.sock.raw != nil && c.w.Buffered() == 0 && c.r.Buffered() == 0 {
		c.sock.pending = cmd
		r, err := c.SkipReply()
		c.sock.pending = nil
		return r, err
	}
	_, _ = c.w.Write(cmd)
	if err := c.Flush(); err != nil {
		return Reply{}, err
	}
	return c.SkipReply()
}
