//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// helmRun runs bin/helm with the test's KUBECONFIG.
func helmRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := sh(repoRoot, filepath.Join(repoRoot, "bin", "helm"), args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// previousChart packages the chart as it was before its current version: the parent of the
// newest commit that set charts/benchrun/Chart.yaml's current version (E2E_PREVIOUS_CHART_REF
// overrides the commit). It returns the package and the chart directory (for its CRDs).
func previousChart(t *testing.T) (pkg, dir string) {
	t.Helper()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repoRoot}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	version := func(ref string) string {
		for _, l := range strings.Split(git("show", ref+":charts/benchrun/Chart.yaml"), "\n") {
			if v, ok := strings.CutPrefix(l, "version:"); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	ref := os.Getenv("E2E_PREVIOUS_CHART_REF")
	if ref == "" {
		current := version("HEAD")
		for _, c := range strings.Fields(git("log", "--format=%H", "--", "charts/benchrun/Chart.yaml")) {
			if version(c) == current {
				ref = c + "^"
			} else {
				break
			}
		}
	}
	if ref == "" {
		t.Skip("no earlier chart version in this clone's history (set E2E_PREVIOUS_CHART_REF)")
	}
	tmp := t.TempDir()
	archive := exec.Command("sh", "-c", fmt.Sprintf("git -C %q archive %q charts/benchrun | tar -x -C %q", repoRoot, ref, tmp))
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", ref, err, out)
	}
	dir = filepath.Join(tmp, "charts", "benchrun")
	out := helmRun(t, "package", dir, "-d", tmp)
	t.Logf("previous chart (%s, version %s): %s", ref, version(ref), strings.TrimSpace(out))
	pkgs, _ := filepath.Glob(filepath.Join(tmp, "benchrun-*.tgz"))
	if len(pkgs) != 1 {
		t.Fatalf("packaged %v", pkgs)
	}
	return pkgs[0], dir
}

// quickRun is a one-scenario Redis run of the given duration.
func quickRun(name string, d time.Duration) string {
	return fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %s
spec:
  target:
    redis: {mode: single}
  load:
    workers: 1
    tasksPerWorker: 2
    duration: %s
    scenarios:
    - {name: ping, type: redis.ping}
    runners: {parallelism: 1}
`, name, d)
}

// checkResults fails unless the run succeeded with complete results.
func checkResults(t *testing.T, ns, name string) {
	t.Helper()
	run := getRun(t, ns, name)
	if run == nil || run.Status.Phase != v1alpha1.PhaseSucceeded || run.Status.Partial || len(run.Status.Results) != 1 || run.Status.Results[0].Calls == 0 {
		t.Errorf("%s/%s after the upgrade: %+v", ns, name, run)
	}
}

// TestChartLifecycle is what a user's cluster goes through: install the previous chart
// version, run benchmarks, `helm upgrade` to this chart (the pre-upgrade hook upgrades the
// CRD) while a run is running, `helm test`, then the namespaced install mode runs a benchmark
// in its watched namespace and ignores others. The release is left as TestMain installed it.
// The manager image is this tree's in both versions: this tests the chart, not old managers.
func TestChartLifecycle(t *testing.T) {
	if os.Getenv("E2E_SKIP_INSTALL") == "1" {
		t.Skip("E2E_SKIP_INSTALL=1: the release is managed outside the test")
	}
	prevPkg, prevDir := previousChart(t)
	local := filepath.Join(repoRoot, "hack", "local-cluster", "values-local.yaml")
	t.Cleanup(func() {
		if out, err := sh(repoRoot, "make", "helm-install"); err != nil {
			t.Errorf("restoring the release: %v\n%s", err, out)
		}
	})

	// N-1: the previous chart with its CRD (helm install skips crds/ when the CRD exists)
	helmRun(t, "uninstall", "benchrun", "-n", managerNamespace, "--wait", "--timeout", "3m")
	mustKubectl(t, "", "apply", "--server-side", "--force-conflicts", "--field-manager=benchrun-chart", "-f", filepath.Join(prevDir, "crds"))
	helmRun(t, "install", "benchrun", prevPkg, "-n", managerNamespace, "--wait", "--timeout", "5m")
	crd := func() string {
		return mustKubectl(t, "", "get", "crd", "benchmarkruns.bench.benchrun.io", "-o", "json")
	}
	const newField = "Version is a shorthand for the image"
	if strings.Contains(crd(), newField) {
		t.Logf("the previous chart's CRD already has %q: the hook's upgrade is not observable", newField)
	}

	ns := newNamespace(t, "upgrade")
	apply(t, ns, quickRun("before", 5*time.Second))
	waitPhase(t, ns, "before", runTimeout, v1alpha1.PhaseSucceeded)
	apply(t, ns, quickRun("during", 40*time.Second))
	waitPhase(t, ns, "during", runTimeout, v1alpha1.PhaseRunning)

	// N: helm upgrade alone (no kubectl apply of the CRDs first): the hook must do it
	start := time.Now()
	helmRun(t, "upgrade", "benchrun", filepath.Join(repoRoot, "charts", "benchrun"), "-n", managerNamespace, "-f", local, "--wait", "--timeout", "5m")
	metric("helm-upgrade", "%.1fs", time.Since(start).Seconds())
	if !strings.Contains(crd(), newField) {
		t.Errorf("after helm upgrade the CRD lacks %q: the pre-upgrade hook did not apply the chart's CRDs", newField)
	}
	checkResults(t, ns, "before")
	waitPhase(t, ns, "during", runTimeout, v1alpha1.PhaseSucceeded)
	checkResults(t, ns, "during")

	if out := helmRun(t, "test", "benchrun", "-n", managerNamespace, "--timeout", "3m"); !strings.Contains(out, "Succeeded") {
		t.Errorf("helm test: %s", out)
	}

	// namespaced install: Roles in the watched namespace only
	helmRun(t, "upgrade", "benchrun", filepath.Join(repoRoot, "charts", "benchrun"), "-n", managerNamespace, "-f", local,
		"--set", "rbac.namespaced=true", "--set", "watchNamespaces={"+ns+"}", "--wait", "--timeout", "5m")
	if _, err := kubectl("", "get", "clusterrolebinding", "benchrun-manager"); err == nil {
		t.Error("namespaced install kept the manager's ClusterRoleBinding")
	}
	mustKubectl(t, "", "-n", ns, "get", "role", "benchrun-manager")
	mustKubectl(t, "", "-n", managerNamespace, "rollout", "status", "deploy/benchrun-manager", "--timeout=3m")
	apply(t, ns, quickRun("namespaced", 5*time.Second))
	waitPhase(t, ns, "namespaced", runTimeout, v1alpha1.PhaseSucceeded)
	checkResults(t, ns, "namespaced")
	other := newNamespace(t, "unwatched")
	apply(t, other, quickRun("ignored", 5*time.Second))
	time.Sleep(15 * time.Second)
	if run := getRun(t, other, "ignored"); run == nil || run.Status.Phase != "" {
		t.Errorf("a namespaced manager reconciled a run outside its namespaces: %+v", run)
	}
}
