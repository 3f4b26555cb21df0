package hetu

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/hetutest"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/k6ext/bench"
)

func TestArgTemplates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		n, ok := ParseArgTemplate("__rand_int__").Value(rng, 30).(int64)
		if !ok || n < 1 || n > 30 {
			t.Fatalf("#%d __rand_int__ of 30: %v", i, n)
		}
	}
	if s, ok := ParseArgTemplate("'__rand_str3__'").Value(rng, 1).(string); !ok || len(s) != 3 || strings.Trim(s, nameChars) != "" {
		t.Errorf("'__rand_str3__': %q", s)
	}
	if s, ok := ParseArgTemplate("u-__rand_str__").Value(rng, 1).(string); !ok || len(s) != 10 || !strings.HasPrefix(s, "u-") {
		t.Errorf("u-__rand_str__: %q", s)
	}
	if s, ok := ParseArgTemplate("'42'").Value(rng, 1).(string); !ok || s != "42" {
		t.Errorf("'42' is a string, got %#v", s)
	}
	for tmpl, want := range map[string]any{"42": int64(42), "-7": int64(-7), "1234567890123456": "1234567890123456", "4x": "4x", "": ""} {
		if got := ParseArgTemplate(tmpl).Value(rng, 1); got != want {
			t.Errorf("%q: %#v, want %#v", tmpl, got, want)
		}
	}
}

// hetuPauser returns pause(from, to) for the HeTu server on addr: SIGSTOP, at from, every
// process under hack/hetu-server.sh's unshare (the server and its workers), SIGCONT at to;
// the channel is closed once they were continued.
func hetuPauser(t *testing.T, addr string) func(from, to time.Duration) <-chan struct{} {
	cache := os.Getenv("BENCHRUN_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache/benchrun")
	}
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	b, err := os.ReadFile(filepath.Join(cache, "hetu-server", port, "hetu.pid"))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	signal := func(sig syscall.Signal) {
		for _, pid := range descendants(root) {
			_ = syscall.Kill(pid, sig)
		}
	}
	t.Cleanup(func() { signal(syscall.SIGCONT) })
	return func(from, to time.Duration) <-chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(from)
			signal(syscall.SIGSTOP)
			time.Sleep(to - from)
			signal(syscall.SIGCONT)
		}()
		return done
	}
}

// descendants are the processes under pid (from /proc), without pid itself.
func descendants(pid int) []int {
	children := map[int][]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	for q := children[pid]; len(q) > 0; q = q[1:] {
		out = append(out, q[0])
		q = append(q, children[q[0]]...)
	}
	return out
}

// runOpen runs cfg and returns its calls, dropped and summary.
func runOpen(t *testing.T, cfg bench.OpenConfig) (bench.OpenResult, results.Scenario, results.ScenarioSummary) {
	t.Helper()
	res, err := bench.RunOpen(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := bench.Document("test")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Scenarios {
		if s.Name == cfg.Scenario {
			return res, s, results.Summarize(&results.Document{Scenarios: []results.Scenario{s}}, results.DefaultOptions()).Scenarios[0]
		}
	}
	t.Fatalf("scenario %s not recorded", cfg.Scenario)
	return res, results.Scenario{}, results.ScenarioSummary{}
}

// schedule is a constant rate for d.
func schedule(t *testing.T, rate float64, d time.Duration) *bench.Schedule {
	s, err := bench.NewSchedule([]bench.Segment{{From: rate, To: rate, Duration: d}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The open model on a real HeTu server (all packet layers): hello_world at 300/s within 1 %
// of the target; a 1 s SIGSTOP of the server shows in the corrected p99, not in the service
// time's; with 2 workers and the server stopped through the end, the calls left are dropped;
// exchange_data's argument templates make valid calls.
func TestOpenModelHeTu(t *testing.T) {
	addr := hetutest.StartServer(t, "full", "")
	caller := func(rpc string, args ...string) func(int, string) bench.OpenCaller {
		var tmpl []ArgTemplate
		for _, a := range args {
			tmpl = append(tmpl, ParseArgTemplate(a))
		}
		return func(int, string) bench.OpenCaller {
			return &openCaller{url: addr, opts: Options{Instance: "bench", Layers: LayersMsgpackZlibCrypto}, rpc: rpc,
				args: tmpl, keySpace: 50, rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
		}
	}
	pause := hetuPauser(t, addr)
	t.Run("rate", func(t *testing.T) {
		res, s, sum := runOpen(t, bench.OpenConfig{Scenario: "hetu_rate", Type: "hetu.hello_world", Schedule: schedule(t, 300, 3*time.Second),
			MaxVUs: 8, Caller: caller("hello_world")})
		t.Logf("target 300/s: CPS %.2f (ratio %.4f), corrected p50/p99 %v/%v ms, service p50/p99 %v/%v ms, values %v errors %v",
			sum.CPS, sum.Open.AchievedRatio, sum.LatencyMs.P50, sum.LatencyMs.P99, sum.Open.ServiceTimeMs.P50, sum.Open.ServiceTimeMs.P99,
			s.ReturnValues, s.ErrorKinds)
		if res.Calls != 900 || res.Dropped != 0 || s.Errors != 0 || s.ReturnValues["世界收到"] != 900 {
			t.Errorf("calls %d dropped %d errors %d values %v; want 900 hello_world answers", res.Calls, res.Dropped, s.Errors, s.ReturnValues)
		}
		if r := sum.Open.AchievedRatio; r < 0.99 || r > 1.01 {
			t.Errorf("achieved/target = %.4f, want within 1 %%", r)
		}
	})
	t.Run("pause", func(t *testing.T) {
		pause(1500*time.Millisecond, 2500*time.Millisecond)
		res, s, sum := runOpen(t, bench.OpenConfig{Scenario: "hetu_pause", Type: "hetu.hello_world", Schedule: schedule(t, 200, 4*time.Second),
			MaxVUs: 4, Caller: caller("hello_world")})
		t.Logf("1 s SIGSTOP at 200/s: corrected p50/p99/max %v/%v/%v ms, service p50/p99/max %v/%v/%v ms, dropped %d errors %v",
			sum.LatencyMs.P50, sum.LatencyMs.P99, sum.LatencyMs.Max, sum.Open.ServiceTimeMs.P50, sum.Open.ServiceTimeMs.P99,
			sum.Open.ServiceTimeMs.Max, res.Dropped, s.ErrorKinds)
		if res.Calls+res.Dropped != 800 || res.Dropped > 3 || s.Errors != 0 {
			t.Errorf("calls %d + dropped %d, errors %v: want 800 calls, the backlog caught up", res.Calls, res.Dropped, s.ErrorKinds)
		}
		if sum.LatencyMs.P99 < 700 || sum.Open.ServiceTimeMs.P99 > sum.LatencyMs.P99/5 {
			t.Errorf("corrected p99 %v ms (want >= 700), service p99 %v ms (want < a fifth of it)", sum.LatencyMs.P99, sum.Open.ServiceTimeMs.P99)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		resumed := pause(time.Second, 3*time.Second)
		res, s, _ := runOpen(t, bench.OpenConfig{Scenario: "hetu_dropped", Type: "hetu.hello_world", Schedule: schedule(t, 200, 2*time.Second),
			MaxVUs: 2, Caller: caller("hello_world")})
		<-resumed
		t.Logf("dropped %d of 400, calls %d", res.Dropped, res.Calls)
		if res.Calls+res.Dropped != 400 || s.Dropped != res.Dropped || res.Dropped < 160 || res.Dropped > 220 {
			t.Errorf("calls %d + dropped %d (recorded %d); want 400 with about 200 dropped", res.Calls, res.Dropped, s.Dropped)
		}
	})
	t.Run("args", func(t *testing.T) {
		res, s, _ := runOpen(t, bench.OpenConfig{Scenario: "hetu_args", Type: "hetu.get2_update2", Schedule: schedule(t, 100, time.Second),
			MaxVUs: 4, Caller: caller("exchange_data", "'__rand_str3__'", "__rand_int__")})
		if res.Calls != 100 || s.Errors != 0 {
			t.Errorf("exchange_data: calls %d errors %v values %v", res.Calls, s.ErrorKinds, s.ReturnValues)
		}
	})
}
