// Package echo is benchrun's tiny TCP echo server (cmd/echo-server, the benchrun.local/echo
// image): every byte read on a connection is written back. It counts the connections and
// the bytes it echoed, so tests can check a benchmark's counts against the server's own; its
// HTTP handler answers every request (and GET /stats with the counters), counting them too.
package echo

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Server echoes every connection accepted on its listener.
type Server struct {
	conns, bytes           atomic.Int64
	httpReqs, httpBodyByte atomic.Int64
	grpcCalls, grpcBytes   atomic.Int64
	wg                     sync.WaitGroup
	mu                     sync.Mutex
	open                   map[net.Conn]struct{}
	closed                 bool
}

// Stats are a server's counters.
type Stats struct {
	// Connections counts the connections accepted.
	Connections int64 `json:"connections"`
	// Bytes counts the bytes echoed (written back).
	Bytes int64 `json:"bytes"`
	// HTTPRequests counts the HTTP requests answered (GET /stats excluded).
	HTTPRequests int64 `json:"httpRequests"`
	// HTTPBodyBytes counts the request body bytes read.
	HTTPBodyBytes int64 `json:"httpBodyBytes"`
	// GRPCCalls counts the gRPC Echo calls received (failed ones included; grpc.go).
	GRPCCalls int64 `json:"grpcCalls"`
	// GRPCBytes counts the payload bytes of the gRPC Echo requests.
	GRPCBytes int64 `json:"grpcBytes"`
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	return Stats{Connections: s.conns.Load(), Bytes: s.bytes.Load(), HTTPRequests: s.httpReqs.Load(), HTTPBodyBytes: s.httpBodyByte.Load(),
		GRPCCalls: s.grpcCalls.Load(), GRPCBytes: s.grpcBytes.Load()}
}

// ServeHTTP answers GET /stats with the counters as JSON, and every other request, whatever
// its method and path, with 200 and the body "ok" after reading its body (counted).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/stats" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
		return
	}
	n, _ := io.Copy(io.Discard, r.Body)
	s.httpReqs.Add(1)
	s.httpBodyByte.Add(n)
	_, _ = w.Write([]byte("ok"))
}

// HTTPServer returns an http.Server with s as handler speaking HTTP/1.1 and h2c.
func (s *Server) HTTPServer() *http.Server {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	return hs
}

// Serve accepts connections on ln until it is closed; it returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if !s.track(c) {
			_ = c.Close()
			return nil
		}
		s.conns.Add(1)
		s.wg.Add(1)
		go s.handle(c)
	}
}

// track records an open connection; false once the server is closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.open == nil {
		s.open = map[net.Conn]struct{}{}
	}
	s.open[c] = struct{}{}
	return true
}

// handle echoes one connection until the peer closes it.
func (s *Server) handle(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.open, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			w, werr := c.Write(buf[:n])
			s.bytes.Add(int64(w))
			if werr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF or a broken connection
		}
	}
}

// Close closes every open connection and waits for their handlers (close the listener
// first, so Serve returns).
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.open {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Listen starts a server on addr (e.g. 127.0.0.1:0) in the background; stop it with the
// returned function, which returns the final counters.
func Listen(addr string) (*Server, net.Listener, func() Stats, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, nil, err
	}
	s := &Server{}
	done := make(chan struct{})
	go func() { _ = s.Serve(ln); close(done) }()
	return s, ln, func() Stats {
		_ = ln.Close()
		<-done
		s.Close()
		return s.Stats()
	}, nil
}
