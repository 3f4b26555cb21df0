package livemetrics

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestPusherClosedPort: pushes to a port nothing listens on fail fast, never block Push, and
// the pusher's Stats give the failures and the last error as one short line naming no URL
// credentials.
func TestPusherClosedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	p := NewPusher(Config{URL: "http://" + addr + "/api/v1/write", Password: "s3cret-pw", Username: "u", Timeout: time.Second}, nil)
	began := time.Now()
	for range 3 {
		p.Push([]byte("x"))
	}
	if d := time.Since(began); d > 100*time.Millisecond {
		t.Errorf("Push blocked for %s", d)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().Failed+p.Stats().Dropped < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	st := p.Close(time.Second)
	t.Logf("stats %+v", st)
	if st.Failed == 0 || st.Sent != 0 || !strings.Contains(st.LastError, "refused") || strings.Contains(st.LastError, "s3cret") ||
		len(st.LastError) > MaxErrorBytes || strings.ContainsAny(st.LastError, "\n\r") {
		t.Errorf("stats after pushing to a closed port: %+v", st)
	}
}

// TestErrorLine: credentials (basic-auth password, bearer token, URL user information) are
// replaced, the text made one line and cut to MaxErrorBytes on a rune boundary.
func TestErrorLine(t *testing.T) {
	cfg := Config{URL: "https://bob:pa55@metrics.example/api/v1/write", BearerToken: "tok-123", Password: "pw-456"}
	got := ErrorLine(errors.New("401 for bob:pa55 with tok-123 and pw-456\nsecond line"), cfg)
	if want := "401 for *** with *** and *** second line"; got != want {
		t.Errorf("ErrorLine: %q, want %q", got, want)
	}
	long := ErrorLine(errors.New(strings.Repeat("é", 300)), Config{})
	if len(long) > MaxErrorBytes || !strings.HasSuffix(long, "…") || !strings.HasPrefix(long, "éé") {
		t.Errorf("long error: %d bytes %q", len(long), long)
	}
}
