package local

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// redisDo sends one command to a Redis-protocol server and returns the reply as text:
// simple and bulk strings as they are, integers in decimal, arrays joined with newlines.
// An error reply is returned as an error. AUTH is sent first when password is set.
func redisDo(ctx context.Context, address, password string, args ...string) (string, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", address)
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(c)
	if password != "" {
		if _, err := roundTrip(c, r, "AUTH", password); err != nil {
			return "", fmt.Errorf("AUTH: %w", err)
		}
	}
	return roundTrip(c, r, args...)
}

func roundTrip(c net.Conn, r *bufio.Reader, args ...string) (string, error) {
	var b strings.Builder
	_, _ = fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		_, _ = fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	return readReply(r)
}

func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("%s", line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		parts := make([]string, 0, n)
		for range n {
			p, err := readReply(r)
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, "\n"), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

// waitFor calls check every 100 ms until it succeeds, the process exits or ctx ends; the
// error names the last failure.
func waitFor(ctx context.Context, what string, p *Process, check func(context.Context) error) error {
	var last error
	for {
		if last = check(ctx); last == nil {
			return nil
		}
		if p != nil && p.Exited() {
			return fmt.Errorf("%s exited during start (%w): %w%s", what, p.Err(), last, p.logTail())
		}
		select {
		case <-ctx.Done():
			tail := ""
			if p != nil {
				tail = p.logTail()
			}
			return fmt.Errorf("%s not ready: %w%s", what, last, tail)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
