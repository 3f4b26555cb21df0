package controllers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The chaos suite (TestChaosControlPlane) drives many runs through every phase with a real
// manager while the API server "misbehaves": a fault-injecting http.RoundTripper in the
// manager's rest.Config answers requests at random with 429, 500, 409 or a timeout (before the
// request reaches the API server, or after it was served and only the answer is lost); the
// manager is stopped and a new one started at random moments; runner pods and Jobs are deleted
// under running loads and specs are edited mid-run. Runners are simulated (chaosSim) as the
// other envtest tests do, through the ConfigMap protocol. Tunable by environment:
//
//	BENCHRUN_CHAOS_RUNS         runs (default 56, at least 50 is what the suite is for)
//	BENCHRUN_CHAOS_ACTIVE       runs in flight at once (default 14)
//	BENCHRUN_CHAOS_FAULT_RATE   share of API requests answered with a fault (default 0.06)
//	BENCHRUN_CHAOS_RESTART_MS   mean time between manager restarts (default 4000)
//	BENCHRUN_CHAOS_TIMEOUT      how long every run may take to end (default 150s)
//	BENCHRUN_CHAOS_SEED         the seed (default: the clock); printed to reproduce

// chaosEnv reads an integer or float setting of the chaos suite.
func chaosEnv[T int | float64 | uint64](name string, def T) T {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	if u, err := strconv.ParseUint(v, 10, 64); err == nil { // seeds keep every bit
		return T(u)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return def
	}
	return T(f)
}

// lockedRand is a seeded RNG shared by goroutines.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

// float is a float in [0,1).
func (l *lockedRand) float() float64 { l.mu.Lock(); defer l.mu.Unlock(); return l.r.Float64() }

// intn is an int in [0,n).
func (l *lockedRand) intn(n int) int { l.mu.Lock(); defer l.mu.Unlock(); return l.r.IntN(n) }

// chaosCounts counts what the suite did, by kind.
type chaosCounts struct {
	mu sync.Mutex
	m  map[string]int
}

// add counts one of kind.
func (c *chaosCounts) add(kind string) { c.mu.Lock(); c.m[kind]++; c.mu.Unlock() }

// get is the count of kind.
func (c *chaosCounts) get(kind string) int { c.mu.Lock(); defer c.mu.Unlock(); return c.m[kind] }

// String lists the counts, sorted by kind.
func (c *chaosCounts) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.m))
	for k := range c.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, c.m[k])
	}
	return strings.Join(parts, " ")
}

// chaosTransport answers a share of the manager's API requests with a fault. Watches pass
// (the informers' reconnects are not what is tested; their lists are).
type chaosTransport struct {
	next   http.RoundTripper
	rng    *lockedRand
	rate   float64
	faults *chaosCounts
	on     func() bool // faults only while it returns true
}

// timeoutError is a client-side timeout.
type timeoutError struct{}

// Error implements error.
func (timeoutError) Error() string { return "chaos: i/o timeout" }

// Timeout implements net.Error.
func (timeoutError) Timeout() bool { return true }

// Temporary implements net.Error.
func (timeoutError) Temporary() bool { return true }

// RoundTrip implements http.RoundTripper.
func (c *chaosTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") == "true" || !c.on() || c.rng.float() >= c.rate {
		return c.next.RoundTrip(req)
	}
	switch k := c.rng.intn(5); k {
	case 0:
		c.faults.add("429")
		return statusResponse(req, http.StatusTooManyRequests, "TooManyRequests"), nil
	case 1:
		c.faults.add("500")
		return statusResponse(req, http.StatusInternalServerError, "InternalError"), nil
	case 2:
		c.faults.add("409")
		return statusResponse(req, http.StatusConflict, "Conflict"), nil
	case 3:
		c.faults.add("timeout-before")
		return nil, timeoutError{}
	default: // served, the answer lost: a write that happened looks failed
		c.faults.add("timeout-after")
		resp, err := c.next.RoundTrip(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		return nil, timeoutError{}
	}
}

// statusResponse is an API error answer (a metav1.Status, no Retry-After: client-go does not
// retry it by itself).
func statusResponse(req *http.Request, code int, reason string) *http.Response {
	body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"chaos: %s","reason":%q,"code":%d}`,
		strings.ToLower(reason), reason, code)
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, reason), Request: req,
		Header: http.Header{"Content-Type": []string{"application/json"}}, Body: io.NopCloser(bytes.NewBufferString(body)),
		ContentLength: int64(len(body)), ProtoMajor: 1, ProtoMinor: 1}
}

// chaosManager runs the operator's manager on the faulty config and restarts it on demand.
type chaosManager struct {
	t      *testing.T
	cfg    *rest.Config
	ns     string
	cancel context.CancelFunc
	done   chan struct{}
}

// start starts a new manager (its own cache, a fresh reconciler with no memory).
func (m *chaosManager) start() {
	mgr, err := ctrl.NewManager(m.cfg, ctrl.Options{
		Scheme: scheme, Logger: zap.New(zap.WriteTo(io.Discard)),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{m.ns: {}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		m.t.Fatal(err)
	}
	r := &BenchmarkRunReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: scheme,
		Recorder: &record.FakeRecorder{}, StartDelay: 50 * time.Millisecond, PollInterval: 300 * time.Millisecond,
		History: NewHistory(prometheus.NewRegistry(), 0), MaxConcurrent: 4,
		Images: Images{Runner: "runner:t", Redis: "redis:t", Valkey: "valkey:t", HeTu: "hetu:t", Proxy: "proxy:t"}}
	if err := r.SetupWithManager(mgr); err != nil {
		m.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		_ = mgr.Start(ctx) // a killed manager's errors are the point
	}(m.done)
}

// stop stops the running manager and waits until it is gone.
func (m *chaosManager) stop() {
	if m.cancel != nil {
		m.cancel()
		<-m.done
		m.cancel = nil
	}
}

// TestChaosControlPlane: at least 50 runs end in a terminal phase within their deadlines and
// every document a simulated runner stored is in status.results or status.history, while the
// API server answers with faults, the manager is killed and restarted, runner pods and Jobs
// are deleted and specs are edited mid-run.
func TestChaosControlPlane(t *testing.T) {
	e := newEnv(t)
	seed := chaosEnv("BENCHRUN_CHAOS_SEED", uint64(time.Now().UnixNano()))
	runs := max(chaosEnv("BENCHRUN_CHAOS_RUNS", 56), 1)
	active := max(chaosEnv("BENCHRUN_CHAOS_ACTIVE", 14), 1)
	rate := chaosEnv("BENCHRUN_CHAOS_FAULT_RATE", 0.06)
	timeout := time.Duration(chaosEnv("BENCHRUN_CHAOS_TIMEOUT", 150.0) * float64(time.Second))
	t.Logf("chaos: seed %d (BENCHRUN_CHAOS_SEED=%d to reproduce the same fault plan), %d runs, %d in flight, fault rate %.2f",
		seed, seed, runs, active, rate)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chaos: FAILED with seed %d: rerun with BENCHRUN_CHAOS_SEED=%d", seed, seed)
		}
	})
	rng := &lockedRand{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	c := newChaos(t, e, rng, rate)
	started := time.Now()
	c.mgr.start()
	stopActors := c.actors()
	c.createRuns(runs, active, started.Add(timeout))
	c.waitAllFinished(started.Add(timeout))
	stopActors()
	c.on.Store(false)
	c.mgr.stop()
	c.report(time.Since(started))
}
