// Command echo-client is the baseline of `make bench`'s echo section: a plain Go client loop
// (per connection: write a message, read it back, note the time; nothing recorded) against an
// echo server, with the same connections, message size and duration as our k6's tcp.echo.
//
//	echo-client -addr 127.0.0.1:7007 -conns 16 -size 1000 -seconds 5
//
// It prints one JSON line: {"calls": N, "seconds": S, "callsPerSec": R}.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7007", "echo server address")
	conns := flag.Int("conns", 16, "connections, one goroutine each")
	size := flag.Int("size", 1000, "message size in bytes")
	secs := flag.Float64("seconds", 5, "how long to run")
	flag.Parse()
	msg := bytes.Repeat([]byte("x"), *size)
	var calls atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(time.Duration(*secs * float64(time.Second)))
	var failed atomic.Bool
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", *addr)
			if err != nil {
				fmt.Fprintln(os.Stderr, "echo-client:", err)
				failed.Store(true)
				return
			}
			defer func() { _ = c.Close() }()
			buf := make([]byte, *size)
			var n int64
			for now := time.Now(); now.Before(deadline); now = time.Now() {
				if _, err := c.Write(msg); err != nil {
					break
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					break
				}
				n++
			}
			calls.Add(n)
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	if failed.Load() {
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"calls": calls.Load(), "seconds": el, "callsPerSec": float64(calls.Load()) / el})
}
