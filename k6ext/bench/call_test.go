package bench

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/redistest"
)

// redisCalls returns Redis' own count of cmd calls (INFO commandstats).
func redisCalls(t *testing.T, c *Conn, cmd string) int64 {
	t.Helper()
	v, err := c.Do("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(v.(string), "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
			return n
		}
	}
	return 0
}

// Conn.Call on plain TCP (the request written from the poller's read callback) against a
// real redis-server: every reply right, Redis' own count equal to the calls, the byte counts
// exact, and mixing with the ordinary Do path keeps the stream in step.
func TestCallAgainstRealRedis(t *testing.T) {
	addr := redistest.Start(t)
	c, err := DialRedis(context.Background(), RedisOptions{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if c.fast == nil {
		t.Fatal("a plain TCP connection has no raw socket: the one-step path is not tested")
	}
	c.Watch(context.Background())
	set, _ := renderTemplate([]string{"SET", "k", "vvv"}, false)
	get, _ := renderTemplate([]string{"GET", "k"}, false)
	big, _ := renderTemplate([]string{"GET", "nokey"}, false)
	_, _ = c.Bytes()
	const n = 2000
	var sent, recv int64
	for i := range n {
		r, err := c.Call(set)
		if err != nil || r.Type != '+' || string(r.Line) != "OK" {
			t.Fatalf("SET %d: %c %q %v", i, r.Type, r.Line, err)
		}
		r, err = c.Call(get)
		if err != nil || r.Type != '$' || r.Int != 3 {
			t.Fatalf("GET %d: %c %d %v", i, r.Type, r.Int, err)
		}
		r, err = c.Call(big)
		if err != nil || !r.IsNil() {
			t.Fatalf("GET nokey %d: %c %d %v", i, r.Type, r.Int, err)
		}
		sent += int64(len(set) + len(get) + len(big))
		recv += int64(len("+OK\r\n") + len("$3\r\nvvv\r\n") + len("$-1\r\n"))
		if i%500 == 0 { // the ordinary path in between
			if v, err := c.Do("GET", "k"); err != nil || v != "vvv" {
				t.Fatalf("Do GET: %v %v", v, err)
			}
			sent += int64(len("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
			recv += int64(len("$3\r\nvvv\r\n"))
		}
	}
	if s, r := c.Bytes(); s != sent || r != recv {
		t.Errorf("bytes counted sent %d received %d, want %d and %d", s, r, sent, recv)
	}
	if got := redisCalls(t, c, "set"); got != n {
		t.Errorf("Redis counted %d SETs, want %d", got, n)
	}
}

// A request larger than the socket's send buffer: the callback's write is partial and the
// rest goes through the ordinary (blocking) write; the reply is still read right.
func TestCallLargerThanSendBuffer(t *testing.T) {
	addr := redistest.Start(t)
	c, err := DialRedis(context.Background(), RedisOptions{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	c.Watch(context.Background())
	val := strings.Repeat("v", 32<<20) // far beyond the loopback send buffer
	cmd, _ := renderTemplate([]string{"SET", "big", val}, false)
	_, _ = c.Bytes()
	if r, err := c.Call(cmd); err != nil || string(r.Line) != "OK" {
		t.Fatalf("SET 32 MiB: %c %q %v", r.Type, r.Line, err)
	}
	if s, _ := c.Bytes(); s != int64(len(cmd)) {
		t.Errorf("sent %d bytes, want %d", s, len(cmd))
	}
	get, _ := renderTemplate([]string{"STRLEN", "big"}, false)
	if r, err := c.Call(get); err != nil || r.Int != int64(len(val)) {
		t.Fatalf("STRLEN: %c %d %v", r.Type, r.Int, err)
	}
}

// A call waiting on a stopped server ends when the watched context ends (timeout kind, as on
// the ordinary path), and a closed server gives eof.
func TestCallInterruptedAndClosed(t *testing.T) {
	addr, cmd := pausedRedis(t)
	c, err := DialRedis(context.Background(), RedisOptions{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	ping, _ := renderTemplate([]string{"PING"}, false)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	c.Watch(ctx)
	_ = cmd.Process.Signal(syscall.SIGSTOP)
	start := time.Now()
	_, err = c.Call(ping)
	_ = cmd.Process.Signal(syscall.SIGCONT)
	if err == nil || errKind(err) != "timeout" {
		t.Fatalf("call on a stopped server: %v (kind %q), want a timeout", err, errKind(err))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("interrupted after %v", d)
	}

	c2, err := DialRedis(context.Background(), RedisOptions{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c2.Close() }()
	c2.Watch(context.Background())
	quit, _ := renderTemplate([]string{"QUIT"}, false)
	if r, err := c2.Call(quit); err != nil || string(r.Line) != "OK" {
		t.Fatalf("QUIT: %c %q %v", r.Type, r.Line, err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := c2.Call(ping); err == nil || (errKind(err) != "eof" && errKind(err) != "io") {
		t.Fatalf("call after the server closed: %v (kind %q), want eof or io", err, errKind(err))
	}
}
