package echo

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Echo over real TCP, the counters, HTTP requests counted (GET /stats is not), and Close
// ending open connections.
func TestServer(t *testing.T) {
	s, ln, stop, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("echo %q %v", buf, err)
	}
	h := httptest.NewServer(s)
	defer h.Close()
	for range 3 {
		resp, err := http.Post(h.URL+"/x", "text/plain", strings.NewReader("abcd"))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("post: %v %v", resp, err)
		}
		_ = resp.Body.Close()
	}
	resp, err := http.Get(h.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var st Stats
	_ = json.NewDecoder(resp.Body).Decode(&st)
	_ = resp.Body.Close()
	if st != (Stats{Connections: 1, Bytes: 5, HTTPRequests: 3, HTTPBodyBytes: 12}) {
		t.Errorf("stats %+v", st)
	}
	done := make(chan Stats)
	go func() { done <- stop() }() // the client connection is still open
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stop did not close the open connection")
	}
	if _, err := c.Read(buf); err == nil {
		t.Error("connection still open after stop")
	}
}
