package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/common"

	"github.com/benchrun/benchrun/internal/results"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// HTTPScenarioType is the scenario type of HTTP calls.
const HTTPScenarioType = string(v1alpha1.ScenarioHTTP)

// HTTPOptions configure an HTTP client.
type HTTPOptions struct {
	// Addr is host:port.
	Addr string
	// Method is the HTTP method (default GET).
	Method string
	// Path is the request path and query (default /).
	Path string
	// Headers are added to every request.
	Headers map[string]string
	// BodySize is the request body size in bytes (0: no body).
	BodySize int
	// KeepAlive reuses the connection between requests.
	KeepAlive bool
	// HTTP2 speaks HTTP/2: h2c with prior knowledge, or h2 over TLS.
	HTTP2 bool
	// TLS, when set, makes the requests https.
	TLS *tls.Config
	// Timeout bounds one request (default 30 s).
	Timeout time.Duration
}

// HTTPClient sends one request template over one connection at a time (a VU's): each
// response, read to its end, is one recorded call with its status code as the return value.
type HTTPClient struct {
	o          HTTPOptions
	client     *http.Client
	url        string
	header     http.Header
	body       []byte
	sent, recv atomic.Int64 // bytes on the wire, counted by countedConn (the transport reads in its own goroutine)
	codes      map[int]string
}

// countedConn counts the bytes moved through a connection into its client.
type countedConn struct {
	net.Conn
	c *HTTPClient
}

func (cc countedConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.recv.Add(int64(n))
	return n, err
}

func (cc countedConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.sent.Add(int64(n))
	return n, err
}

// NewHTTPClient returns a client for o; it connects on the first request.
func NewHTTPClient(o HTTPOptions) (*HTTPClient, error) {
	if o.Addr == "" || o.BodySize < 0 || o.BodySize > MaxEchoSize {
		return nil, fmt.Errorf("http: addr is required and the body size within [0, %d]", MaxEchoSize)
	}
	if o.Method == "" {
		o.Method = http.MethodGet
	}
	if o.Path == "" || o.Path[0] != '/' {
		o.Path = "/" + o.Path
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	c := &HTTPClient{o: o, header: http.Header{}, body: bytes.Repeat([]byte("x"), o.BodySize), codes: map[int]string{}}
	for k, v := range o.Headers {
		c.header.Set(k, v)
	}
	scheme := "http://"
	if o.TLS != nil {
		scheme = "https://"
	}
	c.url = scheme + o.Addr + o.Path
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countedConn{Conn: conn, c: c}, nil
		},
		TLSClientConfig: o.TLS, DisableKeepAlives: !o.KeepAlive, DisableCompression: true,
		MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, TLSHandshakeTimeout: 5 * time.Second,
	}
	if o.HTTP2 {
		tr.Protocols = new(http.Protocols)
		if o.TLS != nil {
			tr.Protocols.SetHTTP2(true)
		} else {
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
	}
	c.client = &http.Client{Transport: tr, Timeout: o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c, nil
}

// Bytes returns and resets the bytes sent and received since the last call.
func (c *HTTPClient) Bytes() (sent, recv int64) { return c.sent.Swap(0), c.recv.Swap(0) }

// Close closes the idle connections.
func (c *HTTPClient) Close() { c.client.CloseIdleConnections() }

// code is the status code as a string, cached.
func (c *HTTPClient) code(n int) string {
	s, ok := c.codes[n]
	if !ok {
		s = strconv.Itoa(n)
		if len(c.codes) < 64 {
			c.codes[n] = s
		}
	}
	return s
}

// Do sends one request, reads the response to its end and records it into rec (when not
// nil): status codes below 400 as the return value, 4xx and 5xx as errors of that kind. It
// returns the transport error, if any.
func (c *HTTPClient) Do(ctx context.Context, rec *results.Recorder) (status int, err error) {
	var body io.Reader
	if len(c.body) > 0 {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.o.Method, c.url, body)
	if err != nil {
		return 0, err
	}
	req.Header = c.header.Clone()
	start := time.Now()
	resp, err := c.client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		status = resp.StatusCode
	}
	d := time.Since(start)
	if rec != nil {
		switch {
		case err != nil:
			rec.Record(start, d, "", httpErrKind(err))
		case status >= 400:
			rec.Record(start, d, "", c.code(status))
		default:
			rec.Record(start, d, c.code(status), "")
		}
	}
	return status, err
}

// Loop sends n requests in a Go loop, each recorded. It stops at the first transport error
// or when ctx ends, and returns the number of failed requests (4xx/5xx included).
func (c *HTTPClient) Loop(ctx context.Context, n int64, rec *results.Recorder) int64 {
	var failed int64
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		status, err := c.Do(ctx, rec)
		if err != nil || status >= 400 {
			failed++
		}
		if err != nil {
			sleepCtx(ctx, 10*time.Millisecond) // do not spin on a refused connection
			break
		}
	}
	if rec != nil {
		rec.AddBytes(c.Bytes())
	}
	return failed
}

// httpErrKind is the recorded error kind of a failed request.
func httpErrKind(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return "connect"
	}
	return errKind(err)
}

func init() { registerHotPath("http", (*Module).httpJS) }

// httpJS is http(opts): a client with loop(n) and close(); opts is {addr, method, path,
// headers, bodySize, keepAlive, h2c, tls, tlsServerName, tlsInsecure, tlsCA}.
func (m *Module) httpJS(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	obj, ok := c.Argument(0).Export().(map[string]any)
	if !ok {
		common.Throw(rt, errors.New("benchrun.http(opts): opts must be an object {addr, method, path, ...}"))
	}
	o := HTTPOptions{Addr: str(obj["addr"]), Method: str(obj["method"]), Path: str(obj["path"]),
		BodySize: int(num(obj["bodySize"])), KeepAlive: obj["keepAlive"] != false, HTTP2: obj["h2c"] == true}
	if h, ok := obj["headers"].(map[string]any); ok {
		o.Headers = map[string]string{}
		for k, v := range h {
			o.Headers[k] = str(v)
		}
	}
	if b, _ := obj["tls"].(bool); b {
		cfg, err := TLSConfig(str(obj["tlsServerName"]), str(obj["tlsCA"]), obj["tlsInsecure"] == true)
		if err != nil {
			common.Throw(rt, err)
		}
		o.TLS = cfg
	}
	hc, err := NewHTTPClient(o)
	if err != nil {
		common.Throw(rt, err)
	}
	out := rt.NewObject()
	_ = out.Set("loop", func(c sobek.FunctionCall) sobek.Value {
		return rt.ToValue(hc.Loop(m.vu.Context(), c.Argument(0).ToInteger(), m.recs.Current(HTTPScenarioType)))
	})
	_ = out.Set("open", func(c sobek.FunctionCall) sobek.Value { return openHTTP(m, o, c.Argument(0)) })
	_ = out.Set("close", func(sobek.FunctionCall) sobek.Value {
		hc.Close()
		return sobek.Undefined()
	})
	return out
}
