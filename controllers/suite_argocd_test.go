package controllers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestArgoCDSuiteHealth reads BenchmarkSuites back from the API server in each state and runs
// config/argocd/suite-health.lua on them with Argo CD's own Lua health code
// (bin/argocd-health, built by `make test`).
func TestArgoCDSuiteHealth(t *testing.T) {
	checker := os.Getenv("BENCHRUN_ARGOCD_HEALTH")
	if checker == "" {
		checker = filepath.Join("..", "bin", "argocd-health")
	}
	if _, err := os.Stat(checker); err != nil {
		t.Skipf("Argo CD health checker not built (%v): `make test` builds it", err)
	}
	e := newSuiteEnv(t)
	var cases []healthCase
	add := func(file, status, message, name string) {
		cases = append(cases, healthCase{file, status, message, e.getSuite(name)})
	}
	e.twoVariantSuite("ok", true)
	add("new.yaml", "Progressing", "Waiting for the benchrun operator to accept the suite", "ok")
	e.reconcileSuite("ok")
	add("running.yaml", "Progressing", "Running: 0/4 child runs ended", "ok")
	for _, name := range []string{"ok-redis8-r1", "ok-io4-r1", "ok-redis8-r2", "ok-io4-r2"} {
		e.endChild(name, 1000, false)
		e.reconcileSuite("ok")
	}
	add("succeeded.yaml", "Healthy", "Thresholds met; "+suiteCond(e.getSuite("ok")), "ok")
	e.twoVariantSuite("slow", true)
	for _, name := range []string{"slow-redis8-r1", "slow-io4-r1", "slow-redis8-r2", "slow-io4-r2"} {
		e.reconcileSuite("slow")
		cps := 1000.0
		if name[5:8] == "io4" {
			cps = 500
		}
		e.endChild(name, cps, false)
	}
	e.reconcileSuite("slow")
	add("failed-verdict.yaml", "Degraded", "ThresholdsNotMet: "+suiteCond(e.getSuite("slow")), "slow")
	e.twoVariantSuite("crash", true)
	for _, name := range []string{"crash-redis8-r1", "crash-io4-r1", "crash-redis8-r2", "crash-io4-r2"} {
		e.reconcileSuite("crash")
		e.endChild(name, 1000, name == "crash-io4-r1")
	}
	e.reconcileSuite("crash")
	add("failed-child.yaml", "Degraded", "ChildFailed: "+suiteCond(e.getSuite("crash")), "crash")

	dir := t.TempDir()
	kind := "BenchmarkSuite"
	if os.Getenv("BENCHRUN_SUITE_HEALTH_AS_RUN") != "" { // a checker built before suites: select the script by the run's key
		kind = "BenchmarkRun"
	}
	writeHealthCases(t, dir, kind, "", cases)
	lua, _ := filepath.Abs(filepath.Join("..", "config", "argocd", "suite-health.lua"))
	out, err := exec.Command(checker, "-lua", lua, "-tests", filepath.Join(dir, "health_test.yaml")).CombinedOutput()
	t.Logf("%s", out)
	if os.Getenv("BENCHRUN_SUITE_HEALTH_AS_RUN") == "" && strings.Contains(string(out), "script not selected for bench.benchrun.io/v1alpha1, Kind=BenchmarkSuite") {
		t.Skipf("%s predates BenchmarkSuites (hack/argocd-health registers the script for suites since this change): rebuild it with make %s", checker, checker)
	}
	if err != nil {
		t.Fatalf("Argo CD health: %v", err)
	}
}

// suiteCond is the suite's Succeeded condition message.
func suiteCond(s *v1alpha1.BenchmarkSuite) string {
	if c := apimeta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionSucceeded); c != nil {
		return c.Message
	}
	return ""
}
