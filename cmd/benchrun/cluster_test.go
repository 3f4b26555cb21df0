package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// startCluster starts a real kube-apiserver (envtest) with the CRD and returns a client and a
// kubeconfig file whose current context's namespace is ns.
func startCluster(t *testing.T, ns string) (client.Client, string) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS not set (make envtest-assets): the plugin verbs need a real kube-apiserver")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(repoRoot, "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	kc.Contexts[kc.CurrentContext].Namespace = ns
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return c, path
}

// finishedRun creates a run with a status and a report ConfigMap as the operator writes them.
func finishedRun(t *testing.T, c client.Client, ns, name string, cps, p99 float64) {
	t.Helper()
	ctx := context.Background()
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.BenchmarkRunSpec{
		Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}},
		Load:   testLoad()}}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	sum := results.Summary{Scenarios: []results.ScenarioSummary{{Name: "get", Type: "redis.get", Calls: 1000, CPS: cps,
		LatencyMs: results.Latency{Mean: p99 / 3, P50: p99 / 4, P90: p99 / 2, P99: p99, Max: p99 * 3}}}}
	js, _ := json.Marshal(sum)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-g1-report"},
		Data: map[string]string{"report.md": "# report of " + name + "\n", "results.json": string(js)}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	run.Status = v1alpha1.BenchmarkRunStatus{Phase: v1alpha1.PhaseSucceeded, ObservedGeneration: 1, Verdict: v1alpha1.VerdictPassed,
		Target: &v1alpha1.TargetStatus{Kind: "redis/single"}, BestCPS: results.FormatThousands(max(cps, 0), 0) + " get", CompletionTime: &now,
		Report: &v1alpha1.ReportRef{ConfigMapName: cm.Name}}
	if err := c.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
}

// testLoad is a valid load spec (the API server applies the other defaults).
func testLoad() v1alpha1.LoadSpec {
	return v1alpha1.LoadSpec{Workers: 1, TasksPerWorker: 1, Duration: metav1.Duration{Duration: time.Minute},
		Runners: v1alpha1.RunnerSpec{Parallelism: 1}, Scenarios: []v1alpha1.Scenario{{Name: "get", Type: v1alpha1.ScenarioRedisGet}}}
}

// TestPluginOnCluster: get, report, compare and watch read BenchmarkRuns from a real
// kube-apiserver through the current kubeconfig context and its namespace.
func TestPluginOnCluster(t *testing.T) {
	c, kubeconfig := startCluster(t, "bench")
	env := []string{"KUBECONFIG=" + kubeconfig}
	finishedRun(t, c, "bench", "redis8", 1000, 2)
	finishedRun(t, c, "bench", "valkey", 1100, 1.8)

	queued := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "waiting"}, Spec: v1alpha1.BenchmarkRunSpec{
		Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}}, Load: testLoad()}}
	if err := c.Create(context.Background(), queued); err != nil {
		t.Fatal(err)
	}
	queued.Status = v1alpha1.BenchmarkRunStatus{Phase: v1alpha1.PhaseQueued, QueuePosition: "2/3"}
	if err := c.Status().Update(context.Background(), queued); err != nil {
		t.Fatal(err)
	}

	g := newCLI(t, env, "get")
	if code := g.run(t); code != exitOK || !strings.Contains(g.stdout.String(), "VERDICT") ||
		!strings.Contains(g.stdout.String(), "valkey") || !strings.Contains(g.stdout.String(), "Passed") || !strings.Contains(g.stdout.String(), "1,100 get") ||
		!regexp.MustCompile(`(?m)^waiting +Queued 2/3 +- `).MatchString(g.stdout.String()) {
		t.Errorf("get: exit %d\n%s", code, g.stdout.String())
	}
	r := newCLI(t, env, "report", "redis8")
	if code := r.run(t); code != exitOK || r.stdout.String() != "# report of redis8\n" {
		t.Errorf("report: exit %d\n%s", code, r.stdout.String())
	}
	r = newCLI(t, env, "report", "valkey", "--output", "csv")
	if code := r.run(t); code != exitOK || !strings.Contains(r.stdout.String(), "get,redis.get,") {
		t.Errorf("report csv: exit %d\n%s", code, r.stdout.String())
	}
	r = newCLI(t, env, "report", "valkey", "--format", "ya")
	if code := r.run(t); code != exitOK || !strings.Contains(r.stdout.String(), "## valkey") || !strings.Contains(r.stdout.String(), "| get ") {
		t.Errorf("report --format ya: exit %d\n%s%s", code, r.stdout.String(), r.stderr.String())
	}
	r = newCLI(t, env, "report", "valkey", "--format", "ycsb")
	if code := r.run(t); code != exitFailed || !strings.Contains(r.stderr.String(), "ya") {
		t.Errorf("report --format ycsb of a redis.get run: exit %d, want a refusal naming the shapes it has\n%s", code, r.stderr.String())
	}
	r = newCLI(t, env, "report", "valkey", "--format", "ya", "--output", "json")
	if code := r.run(t); code != exitUsage {
		t.Errorf("report --format ya --output json: exit %d, want usage", code)
	}
	// --html: one page from the report ConfigMap; its charts drawn from results.json when the
	// ConfigMap has none. -o names a file that exists already: still a cluster run's report.
	page := writeFile(t, "report.html", "old")
	r = newCLI(t, env, "report", "--html", "-o", page, "valkey")
	if code := r.run(t); code != exitOK {
		t.Errorf("report --html: exit %d\n%s", code, r.stderr.String())
	}
	if html := mustRead(t, page); !strings.Contains(html, `<h1>valkey (generation 1)</h1>`) || !strings.Contains(html, `id="benchrun-data"`) ||
		!strings.Contains(html, `data-chart="chart-percentiles.svg"`) || !strings.Contains(html, `data-field="cps" data-value="1100">1,100.00<`) {
		t.Errorf("report --html:\n%.3000s", html)
	}
	cmp := newCLI(t, env, "compare", "valkey", "redis8", "--baseline", "redis8")
	out := cmp.stdout.String
	if code := cmp.run(t); code != exitOK || !strings.Contains(out(), "| redis8 ") || !strings.Contains(out(), "valkey against baseline redis8:") ||
		!strings.Contains(out(), "| get | 1100.00 | 1000.00 | +10.00% | 1.8 | 2 | -10.00% |") {
		t.Errorf("compare: exit %d\n%s", code, out())
	}
	missing := newCLI(t, env, "report", "nope")
	if code := missing.run(t); code != exitFailed || !strings.Contains(missing.stderr.String(), "BenchmarkRun bench/nope") {
		t.Errorf("report nope: exit %d", code)
	}
	other := newCLI(t, env, "get", "-n", "default")
	if code := other.run(t); code != exitOK || strings.Contains(other.stdout.String(), "valkey") {
		t.Errorf("get -n default: exit %d\n%s", code, other.stdout.String())
	}
	testWatch(t, c, env)
}

// testWatch follows a running run until it fails its thresholds: exit 3, progress lines, report.
func testWatch(t *testing.T, c client.Client, env []string) {
	ctx := context.Background()
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "live"}, Spec: v1alpha1.BenchmarkRunSpec{
		Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}},
		Load:   testLoad()}}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := metav1.Now()
	run.Status = v1alpha1.BenchmarkRunStatus{Phase: v1alpha1.PhaseRunning, ObservedGeneration: 1, LoadStartTime: &start,
		Runners: &v1alpha1.RunnersStatus{Desired: 2, Ready: 2}}
	if err := c.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	w := newCLI(t, env, "watch", "live", "--interval", "100ms", "--timeout", "30s")
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	run.Status.Phase = v1alpha1.PhaseFailed
	run.Status.Runners.Succeeded = 2
	run.Status.Verdict = v1alpha1.VerdictFailed
	now := metav1.Now()
	run.Status.CompletionTime = &now
	run.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonThresholdsNotMet,
		Message: "1 of 1 thresholds not met: get: p99 < 1 (observed 2, limit 1)", LastTransitionTime: now}}
	if err := c.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	code := 0
	if err := w.cmd.Wait(); err != nil {
		code = w.cmd.ProcessState.ExitCode()
	}
	s := w.stdout.String()
	if code != exitThresholds || !strings.Contains(s, "live  phase Running  runners 2/2 ready, 0 finished, 0 failed  load running") ||
		!strings.Contains(s, "phase Failed  runners 2/2 ready, 2 finished, 0 failed  1 of 1 thresholds not met") {
		t.Errorf("watch: exit %d\n%s\n%s", code, s, w.stderr.String())
	}
}

// TestKrewManifest: plugins/benchrun.yaml is a krew Plugin installing this binary as kubectl-benchrun.
func TestKrewManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "plugins", "benchrun.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Version          string `json:"version"`
			Homepage         string `json:"homepage"`
			ShortDescription string `json:"shortDescription"`
			Description      string `json:"description"`
			Platforms        []struct {
				Selector metav1.LabelSelector `json:"selector"`
				URI      string               `json:"uri"`
				Sha256   string               `json:"sha256"`
				Bin      string               `json:"bin"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "benchrun" ||
		len(m.Spec.Platforms) == 0 || !strings.HasPrefix(m.Spec.Version, "v") {
		t.Fatalf("manifest %+v", m)
	}
	for _, p := range m.Spec.Platforms {
		if p.Bin != "kubectl-benchrun" || len(p.Sha256) != 64 || !strings.HasSuffix(p.URI, ".tar.gz") || p.Selector.MatchLabels["os"] == "" {
			t.Errorf("platform %+v", p)
		}
	}
	for _, verb := range []string{"get", "report RUN", "compare RUN RUN", "watch RUN"} {
		if !strings.Contains(m.Spec.Description, verb) {
			t.Errorf("description does not mention %q", verb)
		}
	}
}
