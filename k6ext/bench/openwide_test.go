package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/echo"
	"github.com/benchrun/benchrun/internal/redistest"
	"github.com/benchrun/benchrun/internal/results"
)

// The open model on every built-in workload beyond Redis commands and tcp.echo, against real
// servers run as processes the tests can SIGSTOP: redis-server (ycsb) and cmd/echo-server
// (http, grpc); HeTu is in k6ext/hetu.

// echoServerBin is cmd/echo-server, built once per test binary.
var echoServerBin struct {
	once sync.Once
	path string
	err  error
}

// startEchoProcess runs cmd/echo-server with HTTP and gRPC on free loopback ports and returns
// both addresses and the process (to pause).
func startEchoProcess(t *testing.T) (httpAddr, grpcAddr string, cmd *exec.Cmd) {
	t.Helper()
	echoServerBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "benchrun-echo")
		if err != nil {
			echoServerBin.err = err
			return
		}
		echoServerBin.path = filepath.Join(dir, "echo-server")
		out, err := exec.Command("go", "build", "-o", echoServerBin.path, "github.com/benchrun/benchrun/cmd/echo-server").CombinedOutput()
		if err != nil {
			echoServerBin.err = fmt.Errorf("building cmd/echo-server: %w\n%s", err, out)
		}
	})
	if echoServerBin.err != nil {
		t.Fatal(echoServerBin.err)
	}
	httpAddr, grpcAddr = redistest.FreeAddr(t), redistest.FreeAddr(t)
	cmd = exec.Command(echoServerBin.path, "-listen", redistest.FreeAddr(t), "-http", httpAddr, "-grpc", grpcAddr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	redistest.WaitListening(t, httpAddr)
	redistest.WaitListening(t, grpcAddr)
	return httpAddr, grpcAddr, cmd
}

// summarize is the summary of one recorded open-model scenario.
func summarize(s results.Scenario) results.ScenarioSummary {
	return results.Summarize(&results.Document{Scenarios: []results.Scenario{s}}, results.DefaultOptions()).Scenarios[0]
}

// checkOpenWorkload runs base (a workload's OpenConfig without scenario and schedule) three
// times against a server that pause(from, to) can SIGSTOP: at 1000/s for 3 s the achieved
// rate is within 1 % of the target and nothing fails; with a 1 s pause mid-run the corrected
// p99 shows the stall while the service-time p99 does not; with 2 workers and the server
// stopped through the end, the calls no worker could start are counted dropped.
func checkOpenWorkload(t *testing.T, name string, base OpenConfig, pause func(from, to time.Duration) <-chan struct{}) {
	t.Run("rate", func(t *testing.T) {
		cfg := base
		cfg.Scenario, cfg.Schedule, cfg.MaxVUs = name+"_rate", constant(1000, 3*time.Second), 8
		res, s := runOpenScenario(t, cfg)
		sum := summarize(s)
		t.Logf("%s target 1000/s: CPS %.2f (ratio %.4f), corrected p50/p99 %v/%v ms, service p50/p99 %v/%v ms, errors %d %v",
			name, sum.CPS, sum.Open.AchievedRatio, sum.LatencyMs.P50, sum.LatencyMs.P99, sum.Open.ServiceTimeMs.P50,
			sum.Open.ServiceTimeMs.P99, s.Errors, s.ErrorKinds)
		if res.Calls != 3000 || res.Dropped != 0 || s.Errors != 0 {
			t.Errorf("calls %d dropped %d errors %d %v; want 3000 calls, none dropped or failed", res.Calls, res.Dropped, s.Errors, s.ErrorKinds)
		}
		if r := sum.Open.AchievedRatio; r < 0.99 || r > 1.01 || sum.Open.TargetRate != 1000 {
			t.Errorf("achieved/target = %.4f of %v/s, want within 1 %%", r, sum.Open.TargetRate)
		}
		if s.BytesSent == 0 || s.BytesReceived == 0 {
			t.Errorf("bytes sent %d received %d: not counted", s.BytesSent, s.BytesReceived)
		}
	})
	t.Run("pause", func(t *testing.T) {
		cfg := base
		cfg.Scenario, cfg.Schedule, cfg.MaxVUs = name+"_pause", constant(500, 4*time.Second), 4
		pause(1500*time.Millisecond, 2500*time.Millisecond)
		res, s := runOpenScenario(t, cfg)
		sum := summarize(s)
		t.Logf("%s 1 s SIGSTOP at 500/s: corrected p50/p99/max %v/%v/%v ms, service p50/p99/max %v/%v/%v ms, dropped %d, errors %d",
			name, sum.LatencyMs.P50, sum.LatencyMs.P99, sum.LatencyMs.Max, sum.Open.ServiceTimeMs.P50, sum.Open.ServiceTimeMs.P99,
			sum.Open.ServiceTimeMs.Max, res.Dropped, s.Errors)
		if res.Calls+res.Dropped != 2000 || res.Dropped > 5 || s.Errors != 0 {
			t.Errorf("calls %d + dropped %d, errors %d: want 2000 calls, the backlog caught up", res.Calls, res.Dropped, s.Errors)
		}
		// a quarter of the calls were due in the pause and waited up to 1 s
		if sum.LatencyMs.P99 < 700 || sum.Open.ServiceTimeMs.P99 > sum.LatencyMs.P99/5 {
			t.Errorf("corrected p99 %v ms (want >= 700), service p99 %v ms (want < a fifth of it)", sum.LatencyMs.P99, sum.Open.ServiceTimeMs.P99)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		cfg := base
		cfg.Scenario, cfg.Schedule, cfg.MaxVUs = name+"_dropped", constant(500, 2*time.Second), 2
		resumed := pause(time.Second, 3*time.Second) // stopped through the scenario's end
		res, s := runOpenScenario(t, cfg)
		<-resumed
		t.Logf("%s: dropped %d of 1000, calls %d", name, res.Dropped, res.Calls)
		if res.Calls+res.Dropped != 1000 || s.Dropped != res.Dropped || res.Dropped < 400 || res.Dropped > 550 {
			t.Errorf("calls %d + dropped %d (recorded %d); want 1000 with about 500 dropped", res.Calls, res.Dropped, s.Dropped)
		}
	})
}

// pauser returns pause(from, to) for a process: SIGSTOP at from, SIGCONT at to (from now);
// the channel is closed once the process was continued.
func pauser(p *os.Process) func(from, to time.Duration) <-chan struct{} {
	return func(from, to time.Duration) <-chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(from)
			_ = p.Signal(syscall.SIGSTOP)
			time.Sleep(to - from)
			_ = p.Signal(syscall.SIGCONT)
		}()
		return done
	}
}

func TestOpenModelHTTP(t *testing.T) {
	addr, _, cmd := startEchoProcess(t)
	checkOpenWorkload(t, "open_http", OpenConfig{Type: HTTPScenarioType, Caller: func(_ int, a string) OpenCaller {
		return &httpCaller{o: HTTPOptions{Addr: addr, Method: "POST", Path: "/x", BodySize: 100, KeepAlive: true}}
	}}, pauser(cmd.Process))
}

func TestOpenModelGRPC(t *testing.T) {
	_, addr, cmd := startEchoProcess(t)
	checkOpenWorkload(t, "open_grpc", OpenConfig{Type: GRPCScenarioType, Caller: func(_ int, a string) OpenCaller {
		return &grpcCaller{o: GRPCOptions{Addr: addr, Method: echo.GRPCEchoMethod, BodySize: 100}}
	}}, pauser(cmd.Process))
}

// ycsbWorkloadFor is a 90 % read, 10 % update YCSB workload of n records, loaded into addr.
func ycsbWorkloadFor(t *testing.T, addr string, n int64) *ycsbWorkload {
	t.Helper()
	keys, err := NewKeyChooser("zipfian", n, "ycsb:")
	if err != nil {
		t.Fatal(err)
	}
	w := &ycsbWorkload{keyPrefix: "ycsb:", keys: keys, fieldCount: 10, fieldLen: 100, read: 0.9, update: 1, rmw: 1, rng: newRand()}
	for i := range 10 {
		w.fields = append(w.fields, fmt.Sprintf("field%d", i))
	}
	w.pool = make([]byte, 4096+100)
	for i := range w.pool {
		w.pool[i] = byte(' ' + w.rng.IntN(95))
	}
	c, err := DialRedis(context.Background(), RedisOptions{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	for i := range n {
		c.WriteCommand(w.insertArgs(i)...)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for range n {
		if r, err := c.SkipReply(); err != nil || r.Err() != nil {
			t.Fatalf("loading: %v %v", err, r.Err())
		}
	}
	return w
}

func TestOpenModelYCSB(t *testing.T) {
	addr, cmd := pausedRedis(t)
	w := ycsbWorkloadFor(t, addr, 1000)
	checkOpenWorkload(t, "open_ycsb", OpenConfig{Type: "ycsb", OpsByValue: true, Caller: func(_ int, a string) OpenCaller {
		y := &ycsbCaller{w: *w, opts: RedisOptions{Addr: addr}}
		y.w.rng = newRand()
		return y
	}}, pauser(cmd.Process))
	// the operations are recorded by name, each an open-model operation of its own
	cfg := OpenConfig{Scenario: "open_ycsb_ops", Type: "ycsb", Schedule: constant(500, time.Second), MaxVUs: 4, OpsByValue: true,
		Caller: func(int, string) OpenCaller {
			y := &ycsbCaller{w: *w, opts: RedisOptions{Addr: addr}}
			y.w.rng = newRand()
			return y
		}}
	res, s := runOpenScenario(t, cfg)
	ops := map[string]int64{}
	for _, op := range s.Operations {
		ops[op.Name] = op.Calls
		if op.ServiceTime == nil {
			t.Errorf("operation %s has no service time", op.Name)
		}
	}
	if ops["read"]+ops["update"] != res.Calls || ops["read"] < ops["update"]*4 || ops["update"] == 0 {
		t.Errorf("operations %v of %d calls; want reads and updates, 9 to 1", ops, res.Calls)
	}
}
