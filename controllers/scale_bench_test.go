package controllers

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestScaleManyRuns is `make bench` figure (a): BENCHRUN_BENCH_RUNS (default 1,000)
// BenchmarkRuns at once, reconciled by the real manager binary (BENCHRUN_MANAGER_BIN, as
// installed: its cache options, 4 workers) against envtest's real kube-apiserver, with the
// runner pods simulated as the lifecycle tests do (each runner reaches the barrier, then
// stores a result document once released). It prints the time until every run Succeeded and
// the manager's peak RSS and heap. Skipped unless BENCHRUN_MANAGER_BIN is set.
func TestScaleManyRuns(t *testing.T) {
	bin := os.Getenv("BENCHRUN_MANAGER_BIN")
	if bin == "" {
		t.Skip("BENCHRUN_MANAGER_BIN not set (hack/bench.sh builds the manager and sets it)")
	}
	needEnvtest(t)
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("BENCHRUN_BENCH_RUNS")); err == nil && v > 0 {
		n = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "scale-"}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	mgr := startManagerBinary(t, bin)
	defer mgr.stop()
	time.Sleep(3 * time.Second) // caches synced: the idle manager is the baseline
	idle, _ := mgr.rss()

	began := time.Now()
	parallel(n, 16, func(i int) {
		if err := k8sClient.Create(ctx, scaleRun(ns.Name, i)); err != nil {
			t.Error(err)
		}
	})
	created := time.Since(began)
	done := simulateRunners(ctx, t, ns.Name, n)
	steady := time.Since(began)
	time.Sleep(3 * time.Second) // cleanup of the finished runs settles
	rss, peak := mgr.rss()
	heap := mgr.heapBytes(t)
	t.Logf("%d runs created in %s; all Succeeded after %s (%d)", n, created.Round(time.Millisecond), steady.Round(time.Millisecond), done)
	fmt.Printf("runs: %d   all Succeeded after: %.1f s   manager peak RSS: %.1f MiB (idle baseline %.1f MiB, ratio %.2f; goal <= 128 MiB)   RSS after: %.1f MiB   heap in use: %.1f MiB\n",
		n, steady.Seconds(), float64(peak)/(1<<20), float64(idle)/(1<<20), float64(peak)/float64(max(idle, 1)), float64(rss)/(1<<20), float64(heap)/(1<<20))
	if done < n {
		t.Fatalf("only %d of %d runs Succeeded", done, n)
	}
	logConfigMapBytes(ctx, t, ns.Name)
}

// logConfigMapBytes logs the ConfigMaps left per component and their total data size.
func logConfigMapBytes(ctx context.Context, t *testing.T, ns string) {
	var cms corev1.ConfigMapList
	if err := k8sClient.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	count, size := map[string]int{}, map[string]int{}
	for _, cm := range cms.Items {
		c := cm.Labels[naming.LabelComponent]
		count[c]++
		for _, v := range cm.Data {
			size[c] += len(v)
		}
		for _, v := range cm.BinaryData {
			size[c] += len(v)
		}
	}
	for c := range count {
		t.Logf("ConfigMaps %q: %d, %.1f MiB of data", c, count[c], float64(size[c])/(1<<20))
	}
}

// scaleRun is run i of the scale bench: an external Redis target (nothing to deploy; not
// exclusive, so that all runs are concurrent: the bench measures concurrent runs, not the
// queue), one runner, two scenarios.
func scaleRun(ns string, i int) *v1alpha1.BenchmarkRun {
	return &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("scale-%04d", i), Namespace: ns},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis, Addresses: []string{"redis.example:6379"},
				Exclusive: ptr.To(false)}},
			Load: v1alpha1.LoadSpec{Workers: 4, TasksPerWorker: 2, Duration: metav1.Duration{Duration: time.Minute},
				Scenarios: []v1alpha1.Scenario{{Name: "get", Type: v1alpha1.ScenarioRedisGet}, {Name: "set", Type: v1alpha1.ScenarioRedisSet}},
				Runners:   v1alpha1.RunnerSpec{Parallelism: 1}},
		}}
}

// simulateRunners plays every runner until all n runs Succeeded (or ctx ends): a runner
// whose state ConfigMap appears reports ready; once its barrier is released it stores a
// result document in its result ConfigMap and reports done. It returns the runs Succeeded.
func simulateRunners(ctx context.Context, t *testing.T, ns string, n int) int {
	handled := map[string]string{} // state ConfigMap → last state written
	for {
		var runs v1alpha1.BenchmarkRunList
		if err := k8sClient.List(ctx, &runs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		succeeded := 0
		byShort := map[string]*v1alpha1.BenchmarkRun{}
		for i := range runs.Items {
			r := &runs.Items[i]
			byShort[naming.ShortName(r.Name)] = r
			switch r.Status.Phase {
			case v1alpha1.PhaseSucceeded:
				succeeded++
			case v1alpha1.PhaseFailed:
				t.Fatalf("run %s failed: %+v", r.Name, r.Status.Conditions)
			}
		}
		if succeeded == n || ctx.Err() != nil {
			return succeeded
		}
		var cms corev1.ConfigMapList
		if err := k8sClient.List(ctx, &cms, client.InNamespace(ns), client.HasLabels{naming.LabelRun},
			client.MatchingLabels{naming.LabelComponent: "runner"}); err != nil {
			t.Fatal(err)
		}
		released := map[string]bool{}
		for _, cm := range cms.Items {
			if cm.Labels[naming.LabelRunnerIndex] == "" && cm.Data[runner.KeyStartAt] != "" {
				released[cm.Labels[naming.LabelRunnerSet]] = true
			}
		}
		var work []func()
		for i := range cms.Items {
			cm := &cms.Items[i]
			run := byShort[cm.Labels[naming.LabelRun]]
			if cm.Labels[naming.LabelRunnerIndex] == "" || run == nil {
				continue
			}
			switch {
			case cm.Data[runner.KeyState] == "" && handled[cm.Name] == "":
				handled[cm.Name] = runner.StateReady
				work = append(work, func() { simulateState(ctx, t, cm, nil, nil) })
			case cm.Data[runner.KeyState] == runner.StateReady && released[cm.Labels[naming.LabelRunnerSet]] && handled[cm.Name] == runner.StateReady:
				handled[cm.Name] = runner.StateDone
				work = append(work, func() {
					now := time.Now()
					gz := encodeDoc(t, runnerDoc(t, run, 0, now, 50))
					simulateState(ctx, t, cm, map[string]string{runner.KeyState: runner.StateDone, runner.KeyLoadStartedAt: now.Format(time.RFC3339Nano),
						runner.KeyResultBytes: fmt.Sprint(len(gz))}, gz)
				})
			}
		}
		parallel(len(work), 16, func(i int) { work[i]() })
		time.Sleep(500 * time.Millisecond) // each round lists every run and runner ConfigMap: not too often
	}
}

// simulateState writes a runner's result (gz, when set) into its result ConfigMap, then
// data (ready when nil) into its state ConfigMap.
func simulateState(ctx context.Context, t *testing.T, state *corev1.ConfigMap, data map[string]string, gz []byte) {
	if gz != nil {
		var res corev1.ConfigMap
		name := runner.ResultName(state.Labels[naming.LabelRunnerSet], 0)
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: state.Namespace, Name: name}, &res); err != nil {
			t.Error(err)
			return
		}
		res.BinaryData = map[string][]byte{runner.KeyResult: gz}
		if err := k8sClient.Update(ctx, &res); err != nil {
			t.Error(err)
			return
		}
	}
	if data == nil {
		data = map[string]string{runner.KeyState: runner.StateReady}
	}
	patch := client.MergeFrom(state.DeepCopy())
	cm := state.DeepCopy()
	for k, v := range data {
		cm.Data[k] = v
	}
	if err := k8sClient.Patch(ctx, cm, patch); err != nil {
		t.Error(err)
	}
}

// parallel calls f(0..n-1) on `workers` goroutines.
func parallel(n, workers int, f func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// managerProcess is the manager binary running against envtest.
type managerProcess struct {
	cmd     *exec.Cmd
	metrics string
	mu      sync.Mutex
	peak    int64
	stopped chan struct{}
}

// startManagerBinary runs bin against envtest (kubeconfig of the test's admin user) and samples
// its RSS every 100 ms.
func startManagerBinary(t *testing.T, bin string) *managerProcess {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := l.Addr().String()
	_ = l.Close()
	m := &managerProcess{metrics: metrics, stopped: make(chan struct{})}
	m.cmd = exec.Command(bin, "--metrics-bind-address="+metrics, "--health-probe-bind-address=0", "--kubelet-metrics=false", "--zap-log-level=error")
	m.cmd.Env = append(os.Environ(), "KUBECONFIG="+path)
	m.cmd.Stdout, m.cmd.Stderr = os.Stderr, os.Stderr
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			select {
			case <-m.stopped:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if rss, _ := m.rss(); rss > 0 {
				m.mu.Lock()
				m.peak = max(m.peak, rss)
				m.mu.Unlock()
			}
		}
	}()
	return m
}

// rss is the manager's resident set now and its peak (VmHWM, or the sampled peak).
func (m *managerProcess) rss() (now, peak int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			now = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return now, max(peak, m.peak)
}

// heapBytes is go_memstats_heap_inuse_bytes from the manager's metrics endpoint (0 when
// unreadable).
func (m *managerProcess) heapBytes(t *testing.T) int64 {
	resp, err := http.Get("http://" + m.metrics + "/metrics")
	if err != nil {
		t.Logf("manager metrics: %v", err)
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return int64(f)
		}
	}
	return 0
}

// stop ends the manager.
func (m *managerProcess) stop() {
	close(m.stopped)
	_ = m.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = m.cmd.Process.Kill()
	}
}
