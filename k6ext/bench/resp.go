package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/benchrun/benchrun/k6ext/ctxwatch"
	"github.com/benchrun/benchrun/k6ext/fastsock"
)

// RedisOptions configures a Redis connection.
type RedisOptions struct {
	// Addr is host:port of the Redis server.
	Addr string
	// Password is sent with AUTH when not empty (never logged).
	Password string
	// Username is sent with AUTH when not empty (ACL users).
	Username string
	// DB is selected with SELECT when not 0.
	DB int
	// DialTimeout bounds connecting (default 5s).
	DialTimeout time.Duration
	// TLS, when set, wraps the connection in TLS (managed endpoints such as Aliyun Redis or
	// Tair with TLS on). ServerName defaults to Addr's host.
	TLS *tls.Config
}

// TLSConfig builds the client TLS configuration of a Redis endpoint: caPEM verifies the
// server (system roots when empty), insecure skips verification (test endpoints only).
func TLSConfig(serverName, caPEM string, insecure bool) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: serverName, InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12} //nolint:gosec // insecure only on the user's explicit request
	if caPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caPEM)) {
			return nil, errors.New("redis TLS: the CA bundle holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// RedisError is an error reply from the server (e.g. "WRONGTYPE ...").
type RedisError string

// Error returns the server's message.
func (e RedisError) Error() string { return string(e) }

// Kind returns the first word of the error, the short kind recorded in results.
func (e RedisError) Kind() string {
	s := string(e)
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	return s
}

// errProtocol reports a malformed reply.
var errProtocol = errors.New("redis: protocol error")

// Conn is a minimal synchronous RESP2 connection: one request, one reply, no pool and no
// locks. It is meant to be owned by a single VU.
type Conn struct {
	conn            net.Conn
	r               *bufio.Reader
	w               *bufio.Writer
	fast            *fastsock.Conn // the plain TCP connection (nil under TLS): Call holds requests
	scratch         []byte
	ctxwatch.Socket // watch, close and count the bytes written to and read from the socket
}

// countingConn counts the bytes moved through a net.Conn.
type countingConn struct {
	net.Conn
	c *Conn
}

func (cc countingConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.CountRecv(n)
	return n, err
}

func (cc countingConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.CountSent(n)
	return n, err
}

// dial connects to addr over TCP within timeout and, when cfg is set, does the TLS handshake
// (ServerName defaults to addr's host); proto names the protocol in a handshake error.
func dial(ctx context.Context, proto, addr string, timeout time.Duration, cfg *tls.Config) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil || cfg == nil {
		return nc, err
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(nc, cfg)
	hctx, cancel := context.WithTimeout(ctx, timeout)
	err = tc.HandshakeContext(hctx)
	cancel()
	if err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("%s TLS handshake with %s: %w", proto, addr, err)
	}
	return tc, nil
}

// DialRedis connects to Redis and authenticates/selects as configured.
func DialRedis(ctx context.Context, o RedisOptions) (*Conn, error) {
	if o.DialTimeout == 0 {
		o.DialTimeout = 5 * time.Second
	}
	nc, err := dial(ctx, "redis", o.Addr, o.DialTimeout, o.TLS)
	if err != nil {
		return nil, err
	}
	nc = fastsock.Wrap(nc)
	c := &Conn{conn: nc}
	c.fast, _ = nc.(*fastsock.Conn) // nil under TLS
	c.Attach(nc)
	cc := countingConn{Conn: nc, c: c}
	c.r = bufio.NewReaderSize(cc, 16<<10)
	c.w = bufio.NewWriterSize(cc, 4<<10)
	if o.Password != "" {
		args := []string{"AUTH", o.Password}
		if o.Username != "" {
			args = []string{"AUTH", o.Username, o.Password}
		}
		if _, err := c.Do(args...); err != nil {
			_ = nc.Close()
			// The reply never contains the password; do not echo the arguments.
			return nil, fmt.Errorf("redis AUTH: %w", err)
		}
	}
	if o.DB != 0 {
		if _, err := c.Do("SELECT", strconv.Itoa(o.DB)); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("redis SELECT: %w", err)
		}
	}
	return c, nil
}

// WriteCommand buffers one command; Flush sends it.
func (c *Conn) WriteCommand(args ...string) {
	b := appendHeader(c.scratch[:0], '*', len(args))
	for _, a := range args {
		b = appendHeader(b, '$', len(a))
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	c.scratch = b
	_, _ = c.w.Write(b) // errors are sticky in bufio.Writer and surface in Flush
}

// appendHeader appends a RESP header: the type byte (e.g. '*' array, '$' bulk string), n
// and CRLF.
func appendHeader(b []byte, typ byte, n int) []byte {
	b = append(b, typ)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// Flush sends the buffered commands.
func (c *Conn) Flush() error { return c.w.Flush() }

// Reply is a summary of one RESP reply that does not allocate: its type byte
// ('+', '-', ':', '$', '*'), the integer (':'), the length ('$', '*', -1 for nil) and the
// simple string or error text ('+', '-', only valid until the next read).
type Reply struct {
	Type byte
	Int  int64
	Line []byte
}

// IsNil reports whether the reply is a RESP nil.
func (r Reply) IsNil() bool { return (r.Type == '$' || r.Type == '*') && r.Int < 0 }

// Err returns the reply as an error when it is an error reply.
func (r Reply) Err() error {
	if r.Type == '-' {
		return RedisError(string(r.Line))
	}
	return nil
}

// readLine returns the next CRLF-terminated line without the CRLF (valid until the next read).
func (c *Conn) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, errProtocol
	}
	return line[:len(line)-2], nil
}

// SkipReply reads one reply, discarding bulk payloads and nested elements.
func (c *Conn) SkipReply() (Reply, error) {
	line, err := c.readLine()
	if err != nil {
		return Reply{}, err
	}
	r := Reply{Type: line[0]}
	switch line[0] {
	case '+', '-':
		r.Line = line[1:]
	case ':':
		r.Int, err = parseInt(line[1:])
	case '$':
		r.Int, err = parseInt(line[1:])
		if err == nil && r.Int >= 0 {
			_, err = c.r.Discard(int(r.Int) + 2)
		}
	case '*':
		r.Int, err = parseInt(line[1:])
		for i := int64(0); err == nil && i < r.Int; i++ {
			_, err = c.SkipReply()
		}
	default:
		err = errProtocol
	}
	return r, err
}

// Status is a simple-string reply such as "OK" or "PONG".
type Status string

// ReadValue reads one reply as a Go value: Status (simple strings), string (bulk strings),
// int64, nil, []any, or a RedisError value for an error reply (transport errors are
// returned as err).
func (c *Conn) ReadValue() (any, error) {
	line, err := c.readLine()
	if err != nil {
		return nil, err
	}
	switch line[0] {
	case '+':
		return Status(line[1:]), nil
	case '-':
		return RedisError(string(line[1:])), nil
	case ':':
		return parseInt(line[1:])
	case '$':
		n, err := parseInt(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := parseInt(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = c.ReadValue(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, errProtocol
}

// Do sends one command and reads its reply as a Go value; an error reply is returned as err.
func (c *Conn) Do(args ...string) (any, error) {
	c.WriteCommand(args...)
	if err := c.Flush(); err != nil {
		return nil, err
	}
	return c.ReadReply()
}

// Call sends one encoded command and reads its reply like SkipReply. On plain TCP the
// request is held (fastsock.Conn.HoldWrites) and written by the read of its reply, which
// then parks until the reply is readable instead of first finding nothing.
func (c *Conn) Call(cmd []byte) (Reply, error) {
	held := c.fast != nil && c.r.Buffered() == 0 // else the reply may be parsed without a read
	if held {
		c.fast.HoldWrites()
	}
	_, _ = c.w.Write(cmd)
	if err := c.Flush(); err != nil {
		if held {
			_ = c.fast.ReleaseWrites()
		}
		return Reply{}, err
	}
	return c.SkipReply()
}

// ReadReply reads one reply as a Go value; an error reply is returned as err.
func (c *Conn) ReadReply() (any, error) {
	v, err := c.ReadValue()
	if err != nil {
		return nil, err
	}
	if e, ok := v.(RedisError); ok {
		return nil, e
	}
	return v, nil
}

// parseInt parses a decimal integer without allocating.
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errProtocol
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, errProtocol
		}
		n = n*10 + int64(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// errKind maps an error to the short kind recorded in results.
func errKind(err error) string {
	var re RedisError
	switch {
	case errors.As(err, &re):
		return re.Kind()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.Is(err, io.ErrClosedPipe), errors.Is(err, net.ErrClosed):
		return "closed"
	case errors.Is(err, errProtocol):
		return "protocol"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "io"
}
