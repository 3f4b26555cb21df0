package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/hetutest"
	"github.com/benchrun/benchrun/internal/redistest"
	"github.com/benchrun/benchrun/internal/resp"
	"github.com/benchrun/benchrun/internal/results"
)

// k6Bin is the binary under test: $BENCHRUN_K6 when set, else built once by TestMain.
var k6Bin string

// repoRoot is the module root (scripts live in scripts/k6).
var repoRoot = func() string { r, _ := filepath.Abs("../.."); return r }()

func TestMain(m *testing.M) {
	flag.Parse()
	k6Bin = os.Getenv("BENCHRUN_K6")
	if k6Bin == "" && !testing.Short() {
		dir, err := os.MkdirTemp("", "benchrun-k6-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		k6Bin = filepath.Join(dir, "k6")
		cmd := exec.Command("go", "build", "-trimpath", "-o", k6Bin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building k6:", err)
			os.Exit(1)
		}
		code := m.Run()
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func TestWithBenchrunOutput(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"k6 run s.js", "k6 run --out benchrun s.js"},
		{"k6 -v run s.js", "k6 -v run --out benchrun s.js"},
		{"k6 run --out benchrun=x.json s.js", "k6 run --out benchrun=x.json s.js"},
		{"k6 run -o benchrun s.js", "k6 run -o benchrun s.js"},
		{"k6 run --out=json=x s.js", "k6 run --out benchrun --out=json=x s.js"},
		{"k6 version", "k6 version"},
	} {
		got := strings.Join(withBenchrunOutput(strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
}

// redisServer is a private redis-server on a free loopback port.
type redisServer struct {
	addr string
}

// startRedis starts redis-server with an optional password, stopped at the end of the test.
func startRedis(t *testing.T, password string) *redisServer {
	t.Helper()
	var args []string
	if password != "" {
		args = append(args, "--requirepass", password)
	}
	return &redisServer{addr: redistest.Start(t, args...)}
}

// do runs one command (after AUTH when password is set) and returns the reply as text.
func (r *redisServer) do(t *testing.T, password string, args ...string) string {
	t.Helper()
	reply, err := resp.Do(context.Background(), r.addr, password, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return reply
}

// commandCalls parses INFO commandstats into command -> calls.
func commandCalls(info string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				out[name], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return out
}

// runK6 runs a script and returns the decoded result document and the text of the k6 output
// and of the result file.
func runK6(t *testing.T, script string, env map[string]string) (*results.Document, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "result.json")
	cmd := exec.Command(k6Bin, "run", "-q", "--summary-mode", "disabled", "--out", "benchrun="+out,
		filepath.Join(repoRoot, "scripts/k6", script))
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("k6 run %s: %v\n%s", script, err, b)
	}
	raw, _ := os.ReadFile(out)
	return readDoc(t, out), string(b) + string(raw)
}

// readDoc decodes (and so validates) a result document.
func readDoc(t *testing.T, path string) *results.Document {
	t.Helper()
	doc, err := results.DecodeFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// noSecret fails when secret appears in the result file or the k6 output.
func noSecret(t *testing.T, secret string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, secret) {
			t.Fatalf("the password leaked into the output or document")
		}
	}
}

// Ground truth: what benchrun records equals what Redis itself counted.
func TestRedisBasicMatchesCommandstats(t *testing.T) {
	const password = "s3cret-pa55word"
	r := startRedis(t, password)
	r.do(t, password, "CONFIG", "RESETSTAT")
	doc, out := runK6(t, "redis_basic.js", map[string]string{
		"REDIS_ADDR": r.addr, "REDIS_PASSWORD": password, "SCENARIOS": "set,get,ping",
		"DURATION": "1500ms", "GRACE": "1s", "VUS": "4", "BATCH": "50", "BODY_SIZE": "16",
		"KEYSPACE": "1000", "BENCHRUN_RUNNER": "runner-a",
	})
	calls := commandCalls(r.do(t, password, "INFO", "commandstats"))
	if !reflect.DeepEqual(doc.Runners, []string{"runner-a"}) || doc.Partial {
		t.Fatalf("runners %v partial %v", doc.Runners, doc.Partial)
	}
	if len(doc.Scenarios) != 3 {
		t.Fatalf("scenarios: %+v", doc.Scenarios)
	}
	for i, name := range []string{"set", "get", "ping"} {
		s := doc.Scenarios[i]
		if s.Name != name || s.Type != "redis."+name {
			t.Fatalf("scenario %d is %s/%s, want %s in run order", i, s.Name, s.Type, name)
		}
		if s.Calls == 0 || s.Errors != 0 {
			t.Fatalf("%s: calls %d errors %d %v", name, s.Calls, s.Errors, s.ErrorKinds)
		}
		if s.Calls != calls[name] {
			t.Errorf("%s: benchrun counted %d calls, Redis %d", name, s.Calls, calls[name])
		}
		if s.BytesSent == 0 || s.BytesReceived == 0 {
			t.Errorf("%s: no bytes counted", name)
		}
	}
	for _, s := range doc.Scenarios {
		checkLatencyTimeline(t, s)
	}
	if v := doc.Scenarios[0].ReturnValues["OK"]; v != doc.Scenarios[0].Calls {
		t.Errorf("set: %d OK of %d", v, doc.Scenarios[0].Calls)
	}
	get := doc.Scenarios[1].ReturnValues
	if get["bulk(16)"]+get["None"] != doc.Scenarios[1].Calls || get["bulk(16)"] == 0 {
		t.Errorf("get return values %v", get)
	}
	noSecret(t, password, out)
}

// checkLatencyTimeline: the latency over time of a scenario recorded by 4 VUs (one recorder
// each, merged) counts every call in the second it started, as the start timeline does, and
// its largest interval maximum is the scenario's maximum latency.
func checkLatencyTimeline(t *testing.T, s results.Scenario) {
	t.Helper()
	lt, st := s.LatencyTimeline, s.Starts
	if lt == nil || lt.BucketMs != 1000 || st.BucketMs != 1000 || lt.StartUnixMs != st.StartUnixMs || len(lt.Intervals) != len(st.Counts) {
		t.Fatalf("%s: latency timeline %+v, starts %+v", s.Name, lt, st)
	}
	var top float64
	n := 0
	for _, p := range lt.Points() {
		if want := st.Counts[(p.StartUnixMs-st.StartUnixMs)/1000]; p.Calls != want || p.P50Ms <= 0 || p.P50Ms > p.P99Ms || p.P99Ms > p.MaxMs {
			t.Errorf("%s: interval at %d ms: %+v, %d starts", s.Name, p.StartUnixMs, p, want)
		}
		top = max(top, p.MaxMs)
		n++
	}
	if top != float64(s.Latency.Max)/1000 || n == 0 {
		t.Errorf("%s: %d intervals, largest max %v ms, latency max %d µs", s.Name, n, top, s.Latency.Max)
	}
	t.Logf("%s: %d calls in %d intervals, p99 per second %v", s.Name, s.Calls, n, p99s(lt.Points()))
}

// p99s lists the points' p99 latencies (ms).
func p99s(pts []results.LatencyPoint) []float64 {
	out := make([]float64, len(pts))
	for i, p := range pts {
		out[i] = p.P99Ms
	}
	return out
}

func TestRedisUpsertMatchesExecCount(t *testing.T) {
	r := startRedis(t, "")
	r.do(t, "", "CONFIG", "RESETSTAT")
	doc, _ := runK6(t, "redis_upsert.js", map[string]string{
		"REDIS_ADDR": r.addr, "DURATION": "1500ms", "GRACE": "1s", "VUS": "6", "BATCH": "10",
		"KEYSPACE": "200", "PREFIX": "t:",
	})
	calls := commandCalls(r.do(t, "", "INFO", "commandstats"))
	if len(doc.Scenarios) != 1 {
		t.Fatalf("scenarios: %+v", doc.Scenarios)
	}
	s := doc.Scenarios[0]
	if s.Name != "redis_upsert" || s.Type != "redis.upsert" || s.Calls == 0 || s.Errors != 0 {
		t.Fatalf("scenario %s/%s calls %d errors %d %v", s.Name, s.Type, s.Calls, s.Errors, s.ErrorKinds)
	}
	// Every attempt ends with exactly one EXEC: the attempts benchrun reports add up to
	// Redis' EXEC count (with the "(other)" bucket unused at this size).
	var attempts int64
	for v, n := range s.ReturnValues {
		a, err := strconv.ParseInt(v, 10, 64)
		if err != nil || a < 1 {
			t.Fatalf("return value %q is not an attempt count", v)
		}
		attempts += a * n
	}
	if attempts != calls["exec"] {
		t.Errorf("attempts %d, Redis EXEC calls %d", attempts, calls["exec"])
	}
	if s.ReturnValues["1"] == 0 {
		t.Errorf("no conflict-free upsert: %v", s.ReturnValues)
	}
	// The unique index holds each number once and never more numbers than the key space.
	rows, _ := strconv.Atoi(r.do(t, "", "ZCARD", "t:upsert:idx:number"))
	if rows == 0 || rows > 200 {
		t.Errorf("index has %d entries, want 1..200", rows)
	}
}

func TestInterruptWritesPartialDocument(t *testing.T) {
	r := startRedis(t, "")
	out := filepath.Join(t.TempDir(), "result.json")
	cmd := exec.Command(k6Bin, "run", "-q", "--summary-mode", "disabled",
		filepath.Join(repoRoot, "scripts/k6/redis_basic.js"))
	cmd.Env = append(os.Environ(), "REDIS_ADDR="+r.addr, "SCENARIOS=get,ping", "DURATION=60s",
		"VUS=2", "BENCHRUN_RESULT_FILE="+out, "BENCHRUN_RUNNER=r1")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Logf("k6 exited: %v (non-zero is expected after a signal)", err)
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("k6 did not stop on SIGTERM\n%s", buf.String())
	}
	doc := readDoc(t, out)
	if !doc.Partial || len(doc.PartialReasons) != 1 || !strings.Contains(doc.PartialReasons[0], "signal") {
		t.Fatalf("partial %v reasons %v\n%s", doc.Partial, doc.PartialReasons, buf.String())
	}
	if len(doc.Scenarios) != 1 || doc.Scenarios[0].Name != "get" || doc.Scenarios[0].Calls == 0 {
		t.Fatalf("scenarios %+v", doc.Scenarios)
	}
}

// The four HeTu benchmark scenarios through bin/k6 against a real HeTu server, full layers.
func TestHetuRPCScript(t *testing.T) {
	if testing.Short() {
		t.Skip("needs bin/k6 and a HeTu server (skipped with -short)")
	}
	addr := hetutest.StartServer(t, "full", "")
	doc, out := runK6(t, "hetu_rpc.js", map[string]string{
		"HETU_URL": addr, "HETU_SEED": "1", "ID_RANGE": "200", "DURATION": "1500ms", "GRACE": "2s",
		"VUS": "4", "BATCH": "5",
	})
	want := map[string]struct{ typ, value string }{
		"hello_world":     {"hetu.hello_world", "世界收到"},
		"get":             {"hetu.just_get", "0"},
		"get_then_update": {"hetu.upsert", ""},
		"get2_update2":    {"hetu.exchange_data", ""},
	}
	if len(doc.Scenarios) != 4 || doc.Partial {
		t.Fatalf("partial %v scenarios %+v\n%s", doc.Partial, doc.Scenarios, out)
	}
	for i, name := range []string{"hello_world", "get", "get_then_update", "get2_update2"} {
		s := doc.Scenarios[i]
		w := want[name]
		if s.Name != name || s.Type != w.typ || s.Calls == 0 || s.Errors != 0 {
			t.Fatalf("scenario %d: %s/%s calls %d errors %d %v", i, s.Name, s.Type, s.Calls, s.Errors, s.ErrorKinds)
		}
		if w.value != "" && s.ReturnValues[w.value] != s.Calls {
			t.Errorf("%s: return values %v, want all %q", name, s.ReturnValues, w.value)
		}
		for v := range s.ReturnValues { // race retries
			if _, err := strconv.Atoi(v); err != nil && w.value == "" {
				t.Errorf("%s: return value %q is not a retry count", name, v)
			}
		}
	}
}

// A custom script: mixed commands in one scenario from several VUs, benchrun.time and
// benchrun.record, calls outside scenarios (setup) not recorded.
func TestCustomScriptMixedCalls(t *testing.T) {
	r := startRedis(t, "")
	script := filepath.Join(t.TempDir(), "custom.js")
	if err := os.WriteFile(script, []byte(`
import benchrun from 'k6/x/benchrun';
export const options = { scenarios: {
  mixed: { executor: 'per-vu-iterations', vus: 4, iterations: 25, exec: 'mixed' },
  custom: { executor: 'per-vu-iterations', vus: 2, iterations: 10, exec: 'custom', startTime: '1s' },
} };
const r = benchrun.redis({ addr: __ENV.REDIS_ADDR });
export function setup() { r.set('setup', '1'); }
export function mixed() {
  if (__VU % 2 === 0) { r.get('k'); r.set('k', 'v'); } else { r.set('k', 'v'); r.get('k'); }
}
export function custom() {
  try { benchrun.time(() => { throw new Error('thrown'); }); throw new Error('not rethrown'); }
  catch (e) { if (e.message !== 'thrown') { throw e; } }
  benchrun.time(() => 7);
  benchrun.record(1.5, 'x');
  benchrun.record(2, null, 'boom');
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "result.json")
	cmd := exec.Command(k6Bin, "run", "-q", "--summary-mode", "disabled", "--out", "benchrun="+out, script)
	cmd.Env = append(os.Environ(), "REDIS_ADDR="+r.addr)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("k6: %v\n%s", err, b)
	}
	doc := readDoc(t, out)
	if len(doc.Scenarios) != 2 {
		t.Fatalf("scenarios %+v", doc.Scenarios)
	}
	m, c := doc.Scenarios[0], doc.Scenarios[1]
	if m.Name != "mixed" || m.Calls != 200 || m.ReturnValues["OK"] != 100 || m.Errors != 0 {
		t.Errorf("mixed: %+v", m)
	}
	if c.Name != "custom" || c.Type != "custom" || c.Calls != 80 || c.Errors != 40 ||
		c.ReturnValues["7"] != 20 || c.ReturnValues["x"] != 20 || c.ErrorKinds["boom"] != 20 ||
		c.ErrorKinds["exception"] != 20 {
		t.Errorf("custom: %+v", c)
	}
}

// YCSB: reads and writes benchrun reports equal the HGETALL / HSET Redis counted.
func TestYCSBMatchesCommandstats(t *testing.T) {
	r := startRedis(t, "")
	doc, _ := runK6(t, "ycsb.js", map[string]string{
		"REDIS_ADDR": r.addr, "DURATION": "1s", "GRACE": "1s", "VUS": "3", "RECORD_COUNT": "500",
		"READ_PROPORTION": "0.5", "UPDATE_PROPORTION": "0.3", "INSERT_PROPORTION": "0.2",
		"DISTRIBUTION": "latest",
	})
	calls := commandCalls(r.do(t, "", "INFO", "commandstats"))
	s := doc.Scenarios[0]
	v := s.ReturnValues
	if s.Errors != 0 || v["read"] == 0 || v["update"] == 0 || v["insert"] == 0 {
		t.Fatalf("ycsb: %+v", s)
	}
	if v["read"] != calls["hgetall"] || v["update"]+v["insert"]+500 != calls["hset"] {
		t.Errorf("benchrun %v, Redis hgetall %d hset %d (500 loaded)", v, calls["hgetall"], calls["hset"])
	}
}
