package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"

	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/k6ext/ctxwatch"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// EchoScenarioType is the scenario type of echo calls.
const EchoScenarioType = string(v1alpha1.ScenarioTCPEcho)

// MaxEchoSize bounds an echo message (the API's bodySize maximum).
const MaxEchoSize = 16 << 20

// MaxEchoPipeline bounds the messages in flight per connection (the API's pipeline maximum).
const MaxEchoPipeline = 1024

// errMismatch is an echo that differs from the message sent.
var errMismatch = errors.New("echo: the reply differs from the message sent")

// EchoOptions configure an echo client.
type EchoOptions struct {
	// Addr is host:port.
	Addr string
	// Size is the message size in bytes.
	Size int
	// Pipeline is the number of messages in flight (1: send, wait for the echo, send).
	Pipeline int
	// TLS, when set, wraps the connection.
	TLS *tls.Config
	// DialTimeout bounds the connect and TLS handshake (default 5 s).
	DialTimeout time.Duration
}

// EchoConn is one echo connection, owned by a single VU (or goroutine): it sends messages of
// the configured size and reads each one back, recording one sample per message.
type EchoConn struct {
	conn            net.Conn
	r               *bufio.Reader
	msg, reply      []byte
	pipeline        int
	starts          []time.Time // send times of the messages in flight, oldest first (a ring)
	head, n         int
	value           string // the recorded return value: the message size
	ctxwatch.Socket        // watch, close and count the bytes sent and received
}

// DialEcho connects to an echo server.
func DialEcho(ctx context.Context, o EchoOptions) (*EchoConn, error) {
	if o.Size < 1 || o.Size > MaxEchoSize {
		return nil, fmt.Errorf("echo: message size %d out of [1, %d]", o.Size, MaxEchoSize)
	}
	o.Pipeline = min(max(o.Pipeline, 1), MaxEchoPipeline)
	if o.DialTimeout == 0 {
		o.DialTimeout = 5 * time.Second
	}
	nc, err := dial(ctx, "echo", o.Addr, o.DialTimeout, o.TLS)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, o.Size)
	for i := range msg {
		msg[i] = 'a' + byte(i%26)
	}
	c := &EchoConn{conn: nc, r: bufio.NewReaderSize(nc, max(64<<10, o.Size)), msg: msg, reply: make([]byte, o.Size),
		pipeline: o.Pipeline, starts: make([]time.Time, o.Pipeline), value: strconv.Itoa(o.Size)}
	c.Attach(nc)
	return c, nil
}

// send writes k messages in one write and notes their send time.
func (c *EchoConn) send(k int) error {
	now := time.Now()
	for i := 0; i < k; i++ {
		c.starts[(c.head+c.n)%c.pipeline] = now
		c.n++
	}
	var err error
	if k == 1 {
		_, err = c.conn.Write(c.msg)
	} else {
		_, err = c.conn.Write(bytes.Repeat(c.msg, k))
	}
	if err == nil {
		c.CountSent(k * len(c.msg))
	}
	return err
}

// receive reads the oldest message in flight back and records it.
func (c *EchoConn) receive(rec *results.Recorder) error {
	start := c.starts[c.head]
	c.head, c.n = (c.head+1)%c.pipeline, c.n-1
	n, err := io.ReadFull(c.r, c.reply)
	c.CountRecv(n)
	if err == nil && !bytes.Equal(c.reply, c.msg) {
		err = errMismatch
	}
	if rec != nil {
		if err != nil {
			rec.Record(start, time.Since(start), "", echoErrKind(err))
		} else {
			rec.Record(start, time.Since(start), c.value, "")
		}
	}
	return err
}

// failInFlight records the messages still in flight after err as failed.
func (c *EchoConn) failInFlight(rec *results.Recorder, err error) {
	for ; c.n > 0; c.n-- {
		start := c.starts[c.head]
		c.head = (c.head + 1) % c.pipeline
		if rec != nil {
			rec.Record(start, time.Since(start), "", echoErrKind(err))
		}
	}
}

// Loop sends n messages, keeping up to the pipeline depth in flight, and records each echo
// into rec (when not nil). It stops early when ctx ends or the connection fails; the
// messages in flight then are recorded as failed. It returns the number of failed messages
// and the error that broke the connection (the caller then closes it).
func (c *EchoConn) Loop(ctx context.Context, n int64, rec *results.Recorder) (int64, error) {
	var issued, failed int64
	fail := func(err error) (int64, error) {
		inFlight := int64(c.n)
		c.failInFlight(rec, err)
		return failed + inFlight, err
	}
	for issued < n || c.n > 0 {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		if k := int(min(int64(c.pipeline-c.n), n-issued)); k > 0 {
			if err := c.send(k); err != nil {
				return fail(err)
			}
			issued += int64(k)
		}
		if err := c.receive(rec); err != nil {
			failed++
			return fail(err)
		}
	}
	return failed, nil
}

// echoErrKind is the recorded error kind of a failed echo.
func echoErrKind(err error) string {
	if errors.Is(err, errMismatch) {
		return "mismatch"
	}
	return errKind(err)
}

// echoClient is the JS echo client of one VU: one lazily dialled connection.
type echoClient struct {
	m    *Module
	opts EchoOptions
	conn *EchoConn
}

func init() { registerHotPath("echo", (*Module).echo) }

// echo(opts) returns an echo client: opts is {addr, size, pipeline, tls, tlsServerName,
// tlsInsecure, tlsCA}. The connection is opened on first use, from the VU.
func (m *Module) echo(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	obj, ok := c.Argument(0).Export().(map[string]any)
	if !ok {
		common.Throw(rt, errors.New("benchrun.echo(opts): opts must be an object {addr, size, pipeline}"))
	}
	ec := &echoClient{m: m, opts: EchoOptions{Addr: str(obj["addr"]), Size: int(num(obj["size"])), Pipeline: int(num(obj["pipeline"]))}}
	if ec.opts.Size == 0 {
		ec.opts.Size = 1000
	}
	if ec.opts.Addr == "" || ec.opts.Size < 0 || ec.opts.Size > MaxEchoSize || ec.opts.Pipeline < 0 || ec.opts.Pipeline > MaxEchoPipeline {
		common.Throw(rt, fmt.Errorf("benchrun.echo: addr is required, size in [1, %d], pipeline in [1, %d]", MaxEchoSize, MaxEchoPipeline))
	}
	if b, _ := obj["tls"].(bool); b {
		cfg, err := TLSConfig(str(obj["tlsServerName"]), str(obj["tlsCA"]), obj["tlsInsecure"] == true)
		if err != nil {
			common.Throw(rt, err)
		}
		ec.opts.TLS = cfg
	}
	o := rt.NewObject()
	_ = o.Set("loop", func(c sobek.FunctionCall) sobek.Value { return rt.ToValue(ec.loop(c.Argument(0).ToInteger())) })
	_ = o.Set("open", ec.jsOpen)
	_ = o.Set("close", func(sobek.FunctionCall) sobek.Value {
		ec.drop()
		return sobek.Undefined()
	})
	return o
}

// loop is loop(n): n echoed messages in a Go loop, each recorded; returns the failures.
func (ec *echoClient) loop(n int64) int64 {
	rec := ec.m.recs.Current(EchoScenarioType)
	ctx := ec.m.vu.Context()
	if ec.conn == nil {
		conn, err := DialEcho(ctx, ec.opts)
		if err != nil {
			if rec != nil {
				rec.Record(time.Now(), 0, "", "connect") // a failed connect counts as a failed call
			}
			sleepCtx(ctx, 100*time.Millisecond)
			return 1
		}
		ec.conn = conn
	}
	ec.conn.Watch(ctx)
	failed, err := ec.conn.Loop(ctx, n, rec)
	if rec != nil {
		rec.AddBytes(ec.conn.Bytes())
	}
	if err != nil {
		ec.drop()
	}
	return failed
}

// drop closes the connection so the next loop redials.
func (ec *echoClient) drop() {
	if ec.conn != nil {
		_ = ec.conn.Close()
		ec.conn = nil
	}
}
