package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"github.com/jhump/protoreflect/v2/grpcreflect"
	"go.k6.io/k6/v2/js/common"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/benchrun/benchrun/internal/results"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// GRPCScenarioType is the scenario type of unary gRPC calls.
const GRPCScenarioType = string(v1alpha1.ScenarioGRPC)

// MaxGRPCMessage bounds the messages a gRPC client sends and receives.
const MaxGRPCMessage = 64 << 20

// GRPCOptions configure a gRPC client.
type GRPCOptions struct {
	// Addr is host:port.
	Addr string
	// Method is package.Service/Method (a leading "/" is allowed).
	Method string
	// Request is the request message in protobuf JSON ("" or "{}": the empty message).
	Request string
	// BodyField is the top-level bytes or string field that gets BodySize bytes ("": the first one).
	BodyField string
	// BodySize is the number of bytes put in BodyField (0: none).
	BodySize int
	// Metadata are sent with every call.
	Metadata map[string]string
	// TLS, when set, makes the connection TLS (h2).
	TLS *tls.Config
	// Timeout bounds one call and the reflection look-up (default 30 s).
	Timeout time.Duration
}

// GRPCClient makes unary calls of one method over one HTTP/2 connection (a VU's). The
// request is encoded once, from the method's request type found by server reflection; each
// call is one recorded call: status OK the return value "OK", any other status an error of
// its code's kind. Replies are not decoded (their size is counted on the wire).
type GRPCClient struct {
	o          GRPCOptions
	conn       *grpc.ClientConn
	path       string // /package.Service/Method
	req        []byte // encoded request; nil until resolved
	md         metadata.MD
	sent, recv atomic.Int64 // wire bytes, counted by grpcCountedConn
}

// grpcCountedConn counts the bytes moved through a connection into its client.
type grpcCountedConn struct {
	net.Conn
	c *GRPCClient
}

func (cc grpcCountedConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.recv.Add(int64(n))
	return n, err
}

func (cc grpcCountedConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.sent.Add(int64(n))
	return n, err
}

// rawCodec sends pre-encoded request bytes and leaves replies undecoded.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }

func (rawCodec) Unmarshal(data []byte, v any) error { *v.(*int) = len(data); return nil }

func (rawCodec) Name() string { return "proto" }

// NewGRPCClient returns a client for o and resolves its request. A server that cannot be
// reached yet is not an error: the first call tries again (and is recorded as failed); a
// method or request the server does not know is.
func NewGRPCClient(ctx context.Context, o GRPCOptions) (*GRPCClient, error) {
	svc, m, ok := strings.Cut(strings.TrimPrefix(o.Method, "/"), "/")
	if o.Addr == "" || !ok || svc == "" || m == "" || strings.Contains(m, "/") {
		return nil, fmt.Errorf("grpc: addr is required and method must be package.Service/Method (got %q)", o.Method)
	}
	if o.BodySize < 0 || o.BodySize > MaxGRPCMessage-(64<<10) {
		return nil, fmt.Errorf("grpc: body size %d not within [0, %d]", o.BodySize, MaxGRPCMessage-(64<<10))
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	c := &GRPCClient{o: o, path: "/" + svc + "/" + m, md: metadata.New(o.Metadata)}
	creds := insecure.NewCredentials()
	if o.TLS != nil {
		creds = credentials.NewTLS(o.TLS)
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := grpc.NewClient("passthrough:///"+o.Addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			nc, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			return grpcCountedConn{Conn: nc, c: c}, nil
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxGRPCMessage), grpc.MaxCallSendMsgSize(MaxGRPCMessage)))
	if err != nil {
		return nil, fmt.Errorf("grpc: %w", err)
	}
	c.conn = conn
	if err := c.resolve(ctx); err != nil && !unreachable(err) {
		_ = conn.Close()
		return nil, err
	}
	return c, nil
}

// unreachable tells a server that cannot be reached (yet) from one that answered.
func unreachable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

// grpcRequests caches encoded requests by address and options: the VUs of a scenario ask
// the server's reflection service once and share one copy of the request (at most
// maxGRPCCache bytes in all; beyond that each client keeps its own).
var grpcRequests = struct {
	mu    sync.Mutex
	m     map[string][]byte
	bytes int
}{m: map[string][]byte{}}

// maxGRPCCache bounds the bytes of the cached requests.
const maxGRPCCache = 256 << 20

// resolve encodes the request (from the cache, else by server reflection).
func (c *GRPCClient) resolve(ctx context.Context) error {
	key := fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%d", c.o.Addr, c.path, c.o.Request, c.o.BodyField, c.o.BodySize)
	grpcRequests.mu.Lock()
	b, ok := grpcRequests.m[key]
	grpcRequests.mu.Unlock()
	if ok {
		c.req = b
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	md, err := c.method(ctx)
	if err != nil {
		return err
	}
	b, err = encodeRequest(md.Input(), c.o)
	if err != nil {
		return err
	}
	grpcRequests.mu.Lock()
	if _, ok := grpcRequests.m[key]; !ok && grpcRequests.bytes+len(b) <= maxGRPCCache {
		grpcRequests.m[key] = b
		grpcRequests.bytes += len(b)
	}
	grpcRequests.mu.Unlock()
	c.req = b
	return nil
}

// method finds the method's descriptor through the server's reflection service (v1, else v1alpha).
func (c *GRPCClient) method(ctx context.Context) (protoreflect.MethodDescriptor, error) {
	rc := grpcreflect.NewClientAuto(ctx, c.conn)
	defer rc.Reset()
	svc, name, _ := strings.Cut(c.path[1:], "/")
	fd, err := rc.FileContainingSymbol(protoreflect.FullName(svc))
	if err != nil {
		if unreachable(err) {
			return nil, err
		}
		return nil, fmt.Errorf("grpc: service %s: server reflection: %w", svc, err)
	}
	full := protoreflect.FullName(svc)
	sd := fd.Services().ByName(full.Name())
	if sd == nil || sd.FullName() != full {
		return nil, fmt.Errorf("grpc: %s is not a service", svc)
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		return nil, fmt.Errorf("grpc: service %s has no method %s", svc, name)
	}
	if md.IsStreamingClient() || md.IsStreamingServer() {
		return nil, fmt.Errorf("grpc: method %s/%s streams; grpc scenarios make unary calls", svc, name)
	}
	return md, nil
}

// encodeRequest builds the request message of type in from o (JSON, then the body field).
func encodeRequest(in protoreflect.MessageDescriptor, o GRPCOptions) ([]byte, error) {
	msg := dynamicpb.NewMessage(in)
	if s := strings.TrimSpace(o.Request); s != "" {
		if err := protojson.Unmarshal([]byte(s), msg); err != nil {
			return nil, fmt.Errorf("grpc: request is not a %s in protobuf JSON: %w", in.FullName(), err)
		}
	}
	if o.BodySize > 0 || o.BodyField != "" {
		f, err := bodyField(in, o.BodyField)
		if err != nil {
			return nil, err
		}
		body := strings.Repeat("x", o.BodySize)
		if f.Kind() == protoreflect.BytesKind {
			msg.Set(f, protoreflect.ValueOfBytes([]byte(body)))
		} else {
			msg.Set(f, protoreflect.ValueOfString(body))
		}
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(msg)
}

// bodyField is the field named name (or the first one) of type bytes or string, not repeated.
func bodyField(in protoreflect.MessageDescriptor, name string) (protoreflect.FieldDescriptor, error) {
	fields := in.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		ok := (f.Kind() == protoreflect.BytesKind || f.Kind() == protoreflect.StringKind) && !f.IsList() && !f.IsMap()
		if name == "" && ok {
			return f, nil
		}
		if name != "" && (string(f.Name()) == name || f.JSONName() == name) {
			if !ok {
				return nil, fmt.Errorf("grpc: field %s of %s is not a bytes or string field", name, in.FullName())
			}
			return f, nil
		}
	}
	if name == "" {
		return nil, fmt.Errorf("grpc: %s has no bytes or string field to put bodySize bytes in", in.FullName())
	}
	return nil, fmt.Errorf("grpc: %s has no field %s", in.FullName(), name)
}

// Bytes returns and resets the wire bytes sent and received since the last call.
func (c *GRPCClient) Bytes() (sent, recv int64) { return c.sent.Swap(0), c.recv.Swap(0) }

// Close closes the connection.
func (c *GRPCClient) Close() { _ = c.conn.Close() }

// Do makes one call and records it into rec (when not nil). It returns the call's status code.
func (c *GRPCClient) Do(ctx context.Context, rec *results.Recorder) codes.Code {
	start := time.Now()
	if c.req == nil { // the server was not reachable when the client was made
		err := c.resolve(ctx)
		if err != nil {
			code := status.Code(err)
			if !unreachable(err) {
				code = codes.FailedPrecondition
			}
			if rec != nil {
				rec.Record(start, time.Since(start), "", code.String())
			}
			return code
		}
		start = time.Now()
	}
	cctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, c.md), c.o.Timeout)
	var n int
	err := c.conn.Invoke(cctx, c.path, &c.req, &n, grpc.ForceCodec(rawCodec{}))
	d := time.Since(start)
	cancel()
	code := status.Code(err)
	if rec != nil {
		if code == codes.OK {
			rec.Record(start, d, "OK", "")
		} else {
			rec.Record(start, d, "", code.String())
		}
	}
	return code
}

// Loop makes n calls in a Go loop, each recorded. It stops when ctx ends, or after a call
// the server could not be reached for (Unavailable), and returns the number of failed calls.
func (c *GRPCClient) Loop(ctx context.Context, n int64, rec *results.Recorder) int64 {
	var failed int64
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		code := c.Do(ctx, rec)
		if code == codes.OK {
			continue
		}
		failed++
		if code == codes.Unavailable || code == codes.FailedPrecondition {
			sleepCtx(ctx, 10*time.Millisecond) // do not spin on a refused connection
			break
		}
	}
	if rec != nil {
		rec.AddBytes(c.Bytes())
	}
	return failed
}

func init() { registerHotPath("grpc", (*Module).grpcJS) }

// grpcJS is grpc(opts): a client with loop(n) and close(); opts is {addr, method, request,
// bodyField, bodySize, metadata, tls, tlsServerName, tlsInsecure, tlsCA}.
func (m *Module) grpcJS(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	obj, ok := c.Argument(0).Export().(map[string]any)
	if !ok {
		common.Throw(rt, errors.New("benchrun.grpc(opts): opts must be an object {addr, method, request, ...}"))
	}
	o := GRPCOptions{Addr: str(obj["addr"]), Method: str(obj["method"]), Request: str(obj["request"]),
		BodyField: str(obj["bodyField"]), BodySize: int(num(obj["bodySize"]))}
	if h, ok := obj["metadata"].(map[string]any); ok {
		o.Metadata = map[string]string{}
		for k, v := range h {
			o.Metadata[k] = str(v)
		}
	}
	if b, _ := obj["tls"].(bool); b {
		cfg, err := TLSConfig(str(obj["tlsServerName"]), str(obj["tlsCA"]), obj["tlsInsecure"] == true)
		if err != nil {
			common.Throw(rt, err)
		}
		cfg.NextProtos = []string{"h2"}
		o.TLS = cfg
	}
	gc, err := NewGRPCClient(m.vu.Context(), o)
	if err != nil {
		common.Throw(rt, err)
	}
	out := rt.NewObject()
	_ = out.Set("loop", func(c sobek.FunctionCall) sobek.Value {
		return rt.ToValue(gc.Loop(m.vu.Context(), c.Argument(0).ToInteger(), m.recs.Current(GRPCScenarioType)))
	})
	_ = out.Set("open", func(c sobek.FunctionCall) sobek.Value { return openGRPC(m, o, c.Argument(0)) })
	_ = out.Set("close", func(sobek.FunctionCall) sobek.Value {
		gc.Close()
		return sobek.Undefined()
	})
	return out
}
