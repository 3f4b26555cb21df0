package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/internal/echo"
)

const openRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-open
spec:
  target:
    redis:
      mode: single
      config:
        enable-debug-command: "yes"
  load:
    workers: 1
    tasksPerWorker: 2
    duration: 4s
    scenarios:
    - name: get_rate
      type: redis.get
      keySpace: 1000
      arrival: {rate: 1000, maxVUs: 8}
    - name: search
      type: redis.command
      redisCommand: {command: "DEBUG SLEEP 0.002"}
      arrival:
        maxVUs: 16
        search: {startRate: 100, factor: 2, stepDuration: 2s, maxSteps: 4, maxP99: 100ms, maxErrorPercent: 1, stopAfter: 0}
`

// TestRunOpenModel runs an arrival-rate scenario and a saturation search with two k6 runners
// against a real redis-server whose DEBUG SLEEP 0.002 calls saturate it below 500 calls/s.
// The search runs every step (stopAfter: 0), so the table always has the plateau step;
// TestRunOpenSearchStopsEarly covers the early stop.
func TestRunOpenModel(t *testing.T) {
	needRedis(t)
	file := writeFile(t, "run.yaml", openRun)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--output", "markdown", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	stdout := c.stdout.String()
	t.Log(stdout)
	for _, want := range []string{"Open Model (arrival rate;", "Saturation Search search (p99 <= 100ms, (errors+dropped) <= 1 %)", "| step-04 "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	doc := completeDoc(t, out, 2)
	for _, s := range doc.Scenarios {
		if s.ServiceTime == nil || s.TargetRate == 0 || len(s.VUs) != 2 {
			t.Errorf("%s: serviceTime %v targetRate %v vus %v", s.Name, s.ServiceTime != nil, s.TargetRate, s.VUs)
		}
	}
	sum := readSummary(t, out)
	get, search := sum.Scenarios[0], sum.Scenarios[1]
	if o := get.Open; o == nil || o.TargetRate != 1000 || o.AchievedRatio < 0.98 || o.AchievedRatio > 1.02 || o.Dropped != 0 {
		t.Errorf("get_rate open figures %+v, want 1000/s achieved within 2 %%, none dropped", o)
	}
	s := search.Open.Search
	if s == nil || len(s.Steps) != 4 {
		t.Fatalf("search: %+v", search.Open)
	}
	// The server saturates below 500/s: the 800/s step fails, a step below it meets the rule.
	if s.Steps[3].Passed || s.BestRate < 100 || s.BestRate > 400 || s.Steps[3].CPS > 0.8*s.Steps[3].TargetRate {
		t.Errorf("search: 800/s step passed %v at %v CPS, best %v/s; want it to fail on the ~450/s plateau, best 100..400/s",
			s.Steps[3].Passed, s.Steps[3].CPS, s.BestRate)
	}
	svg, err := os.ReadFile(filepath.Join(out, "search-search.svg"))
	if err != nil || !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), "step-04") {
		t.Errorf("search-search.svg: %v\n%.200s", err, svg)
	}
}

const openEchoRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-open-echo
spec:
  target:
    custom:
      image: benchrun.local/echo:dev
      command: [%q]
      args: [-listen, "127.0.0.1:$(BENCHRUN_PORT_ECHO)", -stats-file, %q]
      ports: [{name: echo, port: 7007}]
      readinessProbe: {tcpSocket: {port: echo}}
  load:
    duration: 3s
    scenarios:
    - name: echo_open
      type: tcp.echo
      bodySize: 200
      arrival: {rate: 1000, maxVUs: 4}
    runners:
      parallelism: 2
`

// TestRunOpenEcho runs a tcp.echo scenario at an arrival rate against our echo server with two
// k6 runners (and the default single worker: an all-open run needs no closed-loop VUs): 3 s at
// 1000/s is 3000 messages due, each sent or dropped, and the server echoed exactly the bytes
// benchrun recorded.
func TestRunOpenEcho(t *testing.T) {
	needBinaries(t)
	file, stats := echoRunFile(t, openEchoRun)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--output", "markdown", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, c.stdout.String())
	}
	doc := completeDoc(t, out, 1)
	s := doc.Scenarios[0]
	var st echo.Stats
	b, err := os.ReadFile(stats)
	if err != nil || json.Unmarshal(b, &st) != nil {
		t.Fatalf("echo server stats: %s %v", b, err)
	}
	t.Logf("calls %d dropped %d, server echoed %d bytes", s.Calls, s.Dropped, st.Bytes)
	if s.Calls+s.Dropped != 3000 || s.Dropped > 30 || s.ServiceTime == nil || s.TargetRate != 1000 {
		t.Errorf("calls %d + dropped %d, want 3000 due (targetRate %v)", s.Calls, s.Dropped, s.TargetRate)
	}
	if st.Bytes != s.Calls*200 || s.BytesReceived != s.Calls*200 {
		t.Errorf("server echoed %d bytes, benchrun received %d, want %d", st.Bytes, s.BytesReceived, s.Calls*200)
	}
}
