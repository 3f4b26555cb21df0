package controllers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// healthCase is one entry of Argo CD's health_test.yaml: an object and its expected health.
type healthCase struct {
	file, status, message string
	obj                   any // a *v1alpha1.BenchmarkRun or *v1alpha1.BenchmarkSuite
}

// TestArgoCDHealth reads BenchmarkRuns back from the API server in every phase (Queued
// behind a pool holder too, and a failed verdict, a failed baseline, a spec change not yet
// accepted), writes them with a health_test.yaml in Argo CD's format, and runs
// config/argocd/health.lua on them with Argo CD's own Lua health code (hack/argocd-health, a separate Go module built by
// `make test` into bin/argocd-health). BENCHRUN_UPDATE_ARGOCD=1 also refreshes the committed
// examples in config/argocd/.
func TestArgoCDHealth(t *testing.T) {
	checker := os.Getenv("BENCHRUN_ARGOCD_HEALTH")
	if checker == "" {
		checker = filepath.Join("..", "bin", "argocd-health")
	}
	if _, err := os.Stat(checker); err != nil {
		t.Skipf("Argo CD health checker not built (%v): `make test` builds it, or: cd hack/argocd-health && go build -o ../../bin/argocd-health .", err)
	}
	cases := argoCDCases(t)
	dir := t.TempDir()
	writeHealthCases(t, dir, "BenchmarkRun", runHealthHeader, cases)
	lua, _ := filepath.Abs(filepath.Join("..", "config", "argocd", "health.lua"))
	out, err := exec.Command(checker, "-lua", lua, "-tests", filepath.Join(dir, "health_test.yaml")).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("Argo CD health: %v", err)
	}
	if os.Getenv("BENCHRUN_UPDATE_ARGOCD") == "1" {
		writeHealthCases(t, filepath.Join("..", "config", "argocd"), "BenchmarkRun", runHealthHeader, cases)
	}
	// The committed examples (what users and Argo CD's own test layout see) hold too.
	committed := filepath.Join("..", "config", "argocd", "health_test.yaml")
	if out, err := exec.Command(checker, "-lua", lua, "-tests", committed).CombinedOutput(); err != nil {
		t.Fatalf("Argo CD health on %s: %v\n%s", committed, err, out)
	}
}

// argoCDCases drives runs through their phases and reads each back.
func argoCDCases(t *testing.T) []healthCase {
	e := newEnv(t)
	var cases []healthCase
	add := func(file, status, message string, run *v1alpha1.BenchmarkRun) {
		cases = append(cases, healthCase{file: file, status: status, message: message, obj: e.get(run.Name)})
	}
	run := e.create(e.redisRun("progress", 1))
	add("new.yaml", "Progressing", "Waiting for the benchrun operator to accept the run", run)
	e.reconcile(run.Name)
	add("pending.yaml", "Progressing", "Pending", run)
	e.until(run.Name, v1alpha1.PhaseProvisioning)
	add("provisioning.yaml", "Progressing", "Provisioning", run)
	e.targetReady(run.Name)
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	add("starting.yaml", "Progressing", "Starting", run)
	e.readyRunners(run)
	e.until(run.Name, v1alpha1.PhaseRunning)
	e.reconcile(run.Name)
	add("running.yaml", "Progressing", "Running: 0/1 runners finished", run)
	e.finishRunner(run, 0, 100)
	e.until(run.Name, v1alpha1.PhaseCollecting)
	add("collecting.yaml", "Progressing", "Collecting", run)

	passed := e.redisRun("passed", 1)
	passed.Spec.Thresholds = []v1alpha1.Threshold{{Expr: "p99 < 100"}}
	passed = e.finishedRun(passed, 100, v1alpha1.PhaseSucceeded)
	add("succeeded.yaml", "Healthy", "Thresholds met; "+condMessage(passed), passed)

	failed := e.redisRun("failed", 1)
	failed.Spec.Thresholds = []v1alpha1.Threshold{{Scenario: "get", Expr: "cps >= 1000000"}}
	failed = e.finishedRun(failed, 100, v1alpha1.PhaseFailed)
	add("failed-verdict.yaml", "Degraded", "ThresholdsNotMet: "+condMessage(failed), failed)

	orphan := e.redisRun("orphan", 1)
	orphan.Spec.Baseline = &v1alpha1.BaselineSpec{Name: "gone"}
	e.create(orphan)
	orphan = e.until(orphan.Name, v1alpha1.PhaseFailed)
	add("failed-baseline.yaml", "Degraded", "BaselineNotFound: "+condMessage(orphan), orphan)

	holder := e.create(e.poolRun("holder", "load-a"))
	e.until(holder.Name, v1alpha1.PhaseProvisioning)
	queued := e.create(e.poolRun("waiting", "load-a"))
	queued = e.until(queued.Name, v1alpha1.PhaseQueued)
	add("queued.yaml", "Progressing", "Queued: position 1 of 1 waiting for pool load-a; run holder holds it", queued)

	passed.Spec.Load.Duration = metav1.Duration{Duration: 2 * time.Minute}
	if err := k8sClient.Update(e.ctx, passed); err != nil {
		t.Fatal(err)
	}
	add("spec-changed.yaml", "Progressing", "Waiting for generation 2 to be accepted", passed)
	return cases
}

// condMessage is the Succeeded condition's message.
func condMessage(run *v1alpha1.BenchmarkRun) string {
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded); c != nil {
		return c.Message
	}
	return ""
}

// runHealthHeader heads config/argocd/health_test.yaml.
const runHealthHeader = "# Argo CD health tests (resource_customizations format) for health.lua, generated from\n# BenchmarkRuns read back from a real kube-apiserver by controllers/argocd_health_test.go\n# (BENCHRUN_UPDATE_ARGOCD=1). Run: cd hack/argocd-health && go run . -lua ../../config/argocd/health.lua -tests ../../config/argocd/health_test.yaml\n"

// writeHealthCases writes each object (as kubectl shows it, without server bookkeeping, as the
// given kind) into dir/testdata and dir/health_test.yaml (after header) in Argo CD's format.
func writeHealthCases(t *testing.T, dir, kind, header string, cases []healthCase) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		HealthStatus map[string]string `json:"healthStatus"`
		InputPath    string            `json:"inputPath"`
	}
	var tests []entry
	for _, c := range cases {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c.obj)
		if err != nil {
			t.Fatal(err)
		}
		u["apiVersion"], u["kind"] = v1alpha1.GroupVersion.String(), kind
		md := u["metadata"].(map[string]any)
		for _, k := range []string{"managedFields", "uid", "resourceVersion", "creationTimestamp"} {
			delete(md, k)
		}
		md["namespace"] = "bench"
		b, err := yaml.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "testdata", c.file), b, 0o644); err != nil {
			t.Fatal(err)
		}
		tests = append(tests, entry{HealthStatus: map[string]string{"status": c.status, "message": c.message}, InputPath: "testdata/" + c.file})
	}
	b, err := yaml.Marshal(map[string]any{"tests": tests})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "health_test.yaml"), append([]byte(header), b...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestArgoCDSnippetIsTheLua: the argocd-cm patch users apply and the snippets shown in the
// docs' GitOps page and the chart README hold exactly config/argocd/health.lua.
func TestArgoCDSnippetIsTheLua(t *testing.T) {
	lua, err := os.ReadFile(filepath.Join("..", "config", "argocd", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "config", "argocd", "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if got := cm.Data["resource.customizations.health.bench.benchrun.io_BenchmarkRun"]; got != string(lua) {
		t.Errorf("config/argocd/argocd-cm.yaml differs from health.lua:\n%s", got)
	}
	for _, doc := range []string{"docs/getting-started/gitops.md", "charts/benchrun/README.md"} {
		readme, err := os.ReadFile(filepath.Join("..", doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), string(raw)) {
			t.Errorf("%s does not show config/argocd/argocd-cm.yaml verbatim", doc)
		}
	}
}
