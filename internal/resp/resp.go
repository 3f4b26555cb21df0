// Package resp is a minimal one-shot Redis protocol client for control-plane checks (is the
// server up, what is its role): one connection per command, the reply as text. The load hot
// path has its own persistent client in k6ext/bench.
package resp

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

// Do sends one command to a Redis-protocol server and returns the reply as text:
// simple and bulk strings as they are, integers in decimal, arrays joined with newlines.
// An error reply is returned as an error. AUTH is sent first when password is set. The
// whole exchange takes at most 2 s, or until ctx's deadline when that is sooner.
func Do(ctx context.Context, address, password string, args ...string) (string, error) {
	replies, err := Pipeline(ctx, address, password, args)
	if err != nil {
		return "", err
	}
	return replies[0], nil
}

// Pipeline sends several commands on one connection (so they reach the same server behind a
// Service) and returns their replies as text, like Do; the first error reply fails the call.
func Pipeline(ctx context.Context, address, password string, cmds ...[]string) ([]string, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", address)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }()
	deadline, _ := dctx.Deadline()
	_ = c.SetDeadline(deadline)
	r := bufio.NewReader(c)
	if password != "" {
		if _, err := roundTrip(c, r, "AUTH", password); err != nil {
			return nil, fmt.Errorf("AUTH: %w", err)
		}
	}
	replies := make([]string, 0, len(cmds))
	for _, args := range cmds {
		reply, err := roundTrip(c, r, args...)
		if err != nil {
			return nil, err
		}
		replies = append(replies, reply)
	}
	return replies, nil
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
