package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWarnsRemoteWriteFailing: `benchrun run` with real k6 and redis-server and a
// remote-write endpoint nothing listens on prints a warning counting the failed pushes with
// the last error (no token), and the run itself succeeds. Needs a k6 built with this tree's
// k6ext (the progress document's remoteWrite): `make k6`.
func TestRunWarnsRemoteWriteFailing(t *testing.T) {
	needRedis(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	file := writeFile(t, "run.yaml", fmt.Sprintf(liveRun, "http://"+addr+"/api/v1/write"))
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	stderr := c.stderr.String()
	t.Logf("stderr:\n%s", stderr)
	if !strings.Contains(stderr, "pushes to the remote-write endpoint failed on 2 runner(s)") || !strings.Contains(stderr, "connection refused") {
		t.Errorf("no remote-write warning on stderr")
	}
	if strings.Contains(stderr, "T0ken-n0t-in-logs") {
		t.Error("the bearer token was printed")
	}
}
