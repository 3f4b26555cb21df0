// Package fastsock cuts the per-call CPU of request/reply load clients on plain TCP: reads
// and writes are raw system calls on the non-blocking socket, and a request can be held and
// written by the read that waits for its reply.
//
// Why (perf profiles of k6 against loopback servers, see hack/bench-redis.sh and
// hack/bench-hetu.sh): with ordinary system calls the runtime's monitor (sysmon) hands a
// goroutine's P to another thread while a write runs (7-15 % of k6's CPU in sysmon alone, plus
// futex wake-ups and thread switches); and a read issued right after the request finds
// nothing (EAGAIN) on almost every call before the goroutine parks, one system call wasted.
package fastsock

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// RawIO is read(2) or write(2) (trap) of the non-empty p on the non-blocking descriptor fd,
// retried when interrupted by a signal; errno is 0 on success. It is a raw system call: the
// runtime is not told, so its monitor does not hand the goroutine's P to another thread
// meanwhile; it cannot block because the descriptor is non-blocking.
func RawIO(trap, fd uintptr, p []byte) (int, syscall.Errno) {
	for {
		n, _, errno := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno != syscall.EINTR {
			if errno != 0 {
				return 0, errno
			}
			return int(n), 0
		}
	}
}

// Conn is a *net.TCPConn whose Read and Write are raw system calls through its RawConn
// (deadlines, Close and addresses are the TCPConn's own). Not safe for concurrent reads or
// concurrent writes, like the clients that use it (one connection per VU).
type Conn struct {
	net.Conn
	raw  syscall.RawConn
	hold bool   // HoldWrites: writes wait for the next Read
	out  []byte // held bytes, out[sent:] not yet written
	sent int
	// the callbacks' state (the callbacks are bound once: a call allocates nothing)
	buf             []byte
	n               int
	err             error
	onRead, onWrite func(fd uintptr) bool
}

// Wrap returns nc as a *Conn when it is a *net.TCPConn, else nc unchanged (e.g. TLS).
func Wrap(nc net.Conn) net.Conn {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nc
	}
	c := &Conn{Conn: nc, raw: raw}
	c.onRead, c.onWrite = c.readCallback, c.writeCallback
	return c
}

// HoldWrites makes the writes until the next Read wait for it: that Read writes them from the
// poller's read callback, after arming it, and parks until the reply is readable, instead of
// a read that finds nothing first. Only call it when a Read follows (a request whose reply
// is read next); bytes held are sent by nothing else.
func (c *Conn) HoldWrites() { c.hold = true }

// ReleaseWrites ends HoldWrites without a Read, writing what was held.
func (c *Conn) ReleaseWrites() error {
	c.hold = false
	rest := c.out[c.sent:]
	defer c.resetOut()
	if len(rest) == 0 {
		return nil
	}
	_, err := c.Write(rest)
	return err
}

// Write writes p (holds it after HoldWrites), waiting for the socket to be writable.
func (c *Conn) Write(p []byte) (int, error) {
	if c.hold {
		c.out = append(c.out, p...)
		return len(p), nil
	}
	done := 0
	for done < len(p) {
		c.buf, c.n, c.err = p[done:], 0, nil
		err := c.raw.Write(c.onWrite)
		c.buf = nil
		done += c.n
		if err == nil {
			err = c.err
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// writeCallback is RawConn.Write's function: one write of buf (false: wait until writable).
func (c *Conn) writeCallback(fd uintptr) bool {
	n, errno := RawIO(syscall.SYS_WRITE, fd, c.buf)
	switch errno {
	case 0:
	case syscall.EAGAIN:
		return false
	default:
		c.err = c.opError("write", errno)
	}
	c.n = n
	return true
}

// Read reads into p, first writing what HoldWrites held.
func (c *Conn) Read(p []byte) (int, error) {
	c.hold = false
	if len(p) == 0 {
		return 0, nil
	}
	c.buf, c.n, c.err = p, 0, nil
	err := c.raw.Read(c.onRead)
	c.buf = nil
	if err == nil {
		err = c.err
	}
	if err != nil {
		c.resetOut()
		return 0, err
	}
	if c.sent < len(c.out) { // the send buffer was full: the rest the ordinary way, then read
		_, err := c.Write(c.out[c.sent:])
		c.resetOut()
		if err != nil {
			return 0, err
		}
		return c.Read(p)
	}
	c.resetOut()
	return c.n, nil
}

// resetOut empties the held bytes, keeping their buffer unless a large request grew it.
func (c *Conn) resetOut() {
	c.out, c.sent = c.out[:0], 0
	if cap(c.out) > 64<<10 {
		c.out = nil
	}
}

// readCallback is RawConn.Read's function: first the write of the held bytes (then false:
// park until readable), then the read (false again when it finds nothing yet).
func (c *Conn) readCallback(fd uintptr) bool {
	if c.sent < len(c.out) {
		w, errno := RawIO(syscall.SYS_WRITE, fd, c.out[c.sent:])
		c.sent += w
		switch errno {
		case 0:
		case syscall.EAGAIN:
			return true
		default:
			c.err = c.opError("write", errno)
			return true
		}
		return c.sent < len(c.out) // all written: wait for the reply
	}
	n, errno := RawIO(syscall.SYS_READ, fd, c.buf)
	switch {
	case errno == syscall.EAGAIN:
		return false
	case errno != 0:
		c.err = c.opError("read", errno)
	case n == 0:
		c.err = io.EOF
	default:
		c.n = n
	}
	return true
}

// opError wraps a system call error as the net package does (*net.OpError around an
// *os.SyscallError), so error classification stays the same.
func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(),
		Err: os.NewSyscallError(op, err)}
}
