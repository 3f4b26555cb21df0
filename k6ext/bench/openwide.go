package bench

import (
	"context"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"
	"google.golang.org/grpc/codes"

	"github.com/benchrun/benchrun/internal/results"
)

// The open model (RunOpen) for the workloads beyond Redis commands and tcp.echo: each
// worker gets its own caller, built from the client the script made (the same settings), with
// its own connection.

// runOpenJS runs cfg from a client's open() and returns {calls, dropped} to the script.
func runOpenJS(m *Module, cfg OpenConfig) sobek.Value {
	rt := m.vu.Runtime()
	res, err := RunOpen(m.vu.Context(), cfg)
	if err != nil {
		common.Throw(rt, err)
	}
	return rt.ToValue(map[string]any{"calls": res.Calls, "dropped": res.Dropped})
}

// httpCaller sends the client's request template, one request at a time on its own
// connection (HTTPClient holds at most one).
type httpCaller struct {
	o HTTPOptions
	c *HTTPClient
}

// Dial makes the worker's client (the connection opens on the first request).
func (h *httpCaller) Dial(context.Context) bool {
	if h.c == nil {
		c, err := NewHTTPClient(h.o)
		if err != nil {
			return false
		}
		h.c = c
	}
	return true
}

// Call sends one request: the status code is the value, 4xx/5xx and transport errors the kind.
func (h *httpCaller) Call(ctx context.Context) (val, kind string) {
	if !h.Dial(ctx) {
		return "", "connect"
	}
	status, err := h.c.Do(ctx, nil)
	switch {
	case err != nil:
		return "", httpErrKind(err)
	case status >= 400:
		return "", h.c.code(status)
	}
	return h.c.code(status), ""
}

// Bytes returns and resets the bytes moved.
func (h *httpCaller) Bytes() (sent, recv int64) {
	if h.c == nil {
		return 0, 0
	}
	return h.c.Bytes()
}

// Close closes the idle connection.
func (h *httpCaller) Close() {
	if h.c != nil {
		h.c.Close()
	}
}

// openHTTP is an http client's open({segments, maxVUs, addrs, stop}).
func openHTTP(m *Module, o HTTPOptions, arg sobek.Value) sobek.Value {
	cfg, _, err := ParseOpen(m.vu, arg)
	if err != nil {
		common.Throw(m.vu.Runtime(), err)
	}
	cfg.Type = HTTPScenarioType
	cfg.Caller = func(_ int, addr string) OpenCaller {
		w := o
		if addr != "" {
			w.Addr = addr
		}
		return &httpCaller{o: w}
	}
	return runOpenJS(m, cfg)
}

// grpcCaller makes the client's unary call on its own HTTP/2 connection.
type grpcCaller struct {
	o GRPCOptions
	c *GRPCClient
}

// Dial makes the worker's client and resolves the request (by reflection).
func (g *grpcCaller) Dial(ctx context.Context) bool {
	if g.c == nil {
		c, err := NewGRPCClient(ctx, g.o)
		if err != nil {
			return false
		}
		g.c = c
	}
	return true
}

// Call makes one call: "OK", or the status code as the error kind.
func (g *grpcCaller) Call(ctx context.Context) (val, kind string) {
	if !g.Dial(ctx) {
		return "", codes.FailedPrecondition.String()
	}
	if code := g.c.Do(ctx, nil); code != codes.OK {
		return "", code.String()
	}
	return "OK", ""
}

// Bytes returns and resets the bytes moved.
func (g *grpcCaller) Bytes() (sent, recv int64) {
	if g.c == nil {
		return 0, 0
	}
	return g.c.Bytes()
}

// Close closes the connection.
func (g *grpcCaller) Close() {
	if g.c != nil {
		g.c.Close()
		g.c = nil
	}
}

// openGRPC is a grpc client's open({segments, maxVUs, addrs, stop}).
func openGRPC(m *Module, o GRPCOptions, arg sobek.Value) sobek.Value {
	cfg, _, err := ParseOpen(m.vu, arg)
	if err != nil {
		common.Throw(m.vu.Runtime(), err)
	}
	cfg.Type = GRPCScenarioType
	cfg.Caller = func(_ int, addr string) OpenCaller {
		w := o
		if addr != "" {
			w.Addr = addr
		}
		return &grpcCaller{o: w}
	}
	return runOpenJS(m, cfg)
}

// ycsbCaller runs the workload's operations on its own connection with its own random source
// (the key chooser and its insert counter are shared, as between VUs).
type ycsbCaller struct {
	w    ycsbWorkload
	opts RedisOptions
	conn *Conn
	none ycsbOps // no per-operation recorders: the open loop records by value
}

// Dial connects unless connected.
func (y *ycsbCaller) Dial(ctx context.Context) bool {
	if y.conn == nil {
		c, err := DialRedis(ctx, y.opts)
		if err != nil {
			return false
		}
		y.conn = c
		c.Watch(ctx)
	}
	return true
}

// Call runs one operation: its name (read, update, insert, read-modify-write) is the value,
// recorded with the error kind when it failed.
func (y *ycsbCaller) Call(ctx context.Context) (val, kind string) {
	if !y.Dial(ctx) {
		return "", "connect"
	}
	op, _, err := y.w.issue(y.conn, &y.none)
	if err == nil {
		err = y.w.readReply(y.conn)
	}
	if err != nil {
		if !isRedisError(err) {
			y.Close() // redial on the next call
		}
		return op, errKind(err)
	}
	return op, ""
}

// Bytes returns and resets the bytes moved.
func (y *ycsbCaller) Bytes() (sent, recv int64) {
	if y.conn == nil {
		return 0, 0
	}
	return y.conn.Bytes()
}

// Close closes the connection.
func (y *ycsbCaller) Close() {
	if y.conn != nil {
		_ = y.conn.Close()
		y.conn = nil
	}
}

// jsOpen is a ycsb workload's open({segments, maxVUs, addrs, stop}): the workload's
// operation mix at an arrival rate, each operation also recorded under its own name.
func (w *ycsbWorkload) jsOpen(c sobek.FunctionCall) sobek.Value {
	m := w.rc.m
	cfg, _, err := ParseOpen(m.vu, c.Argument(0))
	if err != nil {
		common.Throw(m.vu.Runtime(), err)
	}
	cfg.Type, cfg.OpsByValue = "ycsb", true
	cfg.Caller = func(_ int, addr string) OpenCaller {
		y := &ycsbCaller{w: *w, opts: w.rc.opts}
		y.w.rng = newRand()
		if addr != "" {
			y.opts.Addr = addr
		}
		return y
	}
	return runOpenJS(m, cfg)
}

// Document is the result document of everything recorded in this process so far, as runner
// (what the benchrun output writes at the end): for tests of the extensions built on RunOpen.
func Document(runner string) (*results.Document, error) { return recorders.document(runner) }
