package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/benchrun/benchrun/internal/echo"
)

const customEchoRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-echo
spec:
  target:
    custom:
      image: benchrun.local/echo:dev
      command: [%q]
      args: [-listen, "127.0.0.1:$(BENCHRUN_PORT_ECHO)", -http, "127.0.0.1:$(BENCHRUN_PORT_HTTP)", -stats-file, %q]
      ports: [{name: echo, port: 7007}, {name: http, port: 8080}]
      readinessProbe: {tcpSocket: {port: echo}}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 3s
    scenarios:
    - name: echo_1000
      type: tcp.echo
      bodySize: 1000
    - name: echo_pipelined
      type: tcp.echo
      bodySize: 64
      pipeline: 8
    - name: get
      type: http
      http: {path: /hello}
`

// TestRunCustomEcho runs our echo server as a custom target with `benchrun run` (two k6
// runners, two tcp.echo scenarios and an http one on the port named http) end to end: the
// report has the echo-server shape and ya's tables for the http scenario, and the merged
// counts equal the server's own (bytes echoed, HTTP requests).
func TestRunCustomEcho(t *testing.T) {
	needBinaries(t)
	file, stats := echoRunFile(t, customEchoRun)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--output", "markdown", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, c.stdout.String())
	}
	stdout := c.stdout.String()
	for _, want := range []string{"TCP Echo Statistics:", "| Requests/sec | Latency min (ms) |", "### echo_1000",
		"0.98KiB messages in ", "0.06KiB messages in ", "Transfer/sec: ", "Average CPS", "| get "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	doc := completeDoc(t, out, 3)
	var st echo.Stats
	b, err := os.ReadFile(stats)
	if err != nil || json.Unmarshal(b, &st) != nil {
		t.Fatalf("echo server stats: %s %v", b, err)
	}
	var want int64
	for _, s := range doc.Scenarios {
		if s.Name == "get" {
			if st.HTTPRequests != s.Calls || s.ReturnValues["200"] != s.Calls {
				t.Errorf("http: the server answered %d requests, benchrun recorded %d (values %v)", st.HTTPRequests, s.Calls, s.ReturnValues)
			}
			continue
		}
		size := map[string]int64{"echo_1000": 1000, "echo_pipelined": 64}[s.Name]
		want += s.Calls * size
		if s.BytesReceived != s.Calls*size {
			t.Errorf("%s: %d bytes received for %d calls of %d bytes", s.Name, s.BytesReceived, s.Calls, size)
		}
	}
	if st.Bytes != want {
		t.Errorf("the echo server echoed %d bytes, the merged document accounts for %d", st.Bytes, want)
	}
	if st.Connections != 9 { // the readiness probe's, then 4 VUs × 2 scenarios
		t.Errorf("the echo server saw %d connections, want 9 (1 probe + 4 VUs × 2 scenarios)", st.Connections)
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// echoServer is cmd/echo-server, built once for the tests that run it as a custom target.
var echoServer struct {
	once sync.Once
	path string
	err  error
}

// echoRunFile writes a run file from template, whose two %s are the echo-server binary (built
// once per test binary) and the path of the stats file it writes; it returns both paths.
func echoRunFile(t *testing.T, template string) (file, stats string) {
	t.Helper()
	echoServer.once.Do(func() {
		echoServer.path = filepath.Join(testTmp, "echo-server")
		if out, err := goBuild(echoServer.path, "./cmd/echo-server"); err != nil {
			echoServer.err = fmt.Errorf("building echo-server: %w\n%s", err, out)
		}
	})
	if echoServer.err != nil {
		t.Fatal(echoServer.err)
	}
	stats = filepath.Join(t.TempDir(), "stats.json")
	return writeFile(t, "run.yaml", fmt.Sprintf(template, echoServer.path, stats)), stats
}

const echoSuite = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkSuite
metadata:
  name: cli-echo-suite
spec:
  template:
    target:
      custom:
        image: benchrun.local/echo:dev
        command: [%q]
        args: [-listen, "127.0.0.1:$(BENCHRUN_PORT_ECHO)", -stats-file, %q]
        ports: [{name: echo, port: 7007}]
        readinessProbe: {tcpSocket: {port: echo}}
    load:
      workers: 1
      tasksPerWorker: 2
      duration: 2s
      scenarios:
      - {name: echo_1000, type: tcp.echo, bodySize: 1000}
  variants:
  - name: small
  - name: wide
    load: {workers: 2}
`

// TestRunSuiteEchoTransfer: a local suite of two tcp.echo variants against our echo server
// has the echo comparison with each variant's transfer rate, the one its child's own report
// printed (Transfer/sec).
func TestRunSuiteEchoTransfer(t *testing.T) {
	needBinaries(t)
	file, _ := echoRunFile(t, echoSuite)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--out-dir", out, "--output", "markdown")
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, c.stdout.String())
	}
	_, md, _ := strings.Cut(c.stdout.String(), "TCP Echo Statistics (")
	md, _, _ = strings.Cut(md, "\n\n\n")
	if !strings.Contains(md, "| Latency std (ms) | Transfer/sec (MiB) |") {
		t.Fatalf("no transfer rate column in the suite's echo table:\n%s", c.stdout.String())
	}
	for _, v := range []string{"small", "wide"} {
		child := mustRead(t, filepath.Join(out, "cli-echo-suite-"+v+"-r1", "report.md"))
		_, after, ok := strings.Cut(child, "Transfer/sec: ")
		rate, _, _ := strings.Cut(after, "MiB")
		f, err := strconv.ParseFloat(rate, 64)
		if !ok || err != nil || f <= 0 {
			t.Fatalf("child %s: no Transfer/sec in its report:\n%s", v, child)
		}
		row := regexp.MustCompile(`(?m)^\| ` + v + ` +\| echo_1000 \|.*\| +([0-9.]+) \|$`).FindStringSubmatch(md)
		if row == nil || row[1] != strconv.FormatFloat(f, 'f', 2, 64) {
			t.Errorf("variant %s: suite echo row %q, child's Transfer/sec %s MiB", v, row, rate)
		}
	}
}
