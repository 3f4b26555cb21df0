//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// backendsSuite compares four back ends on one GET scenario, as the users' own tables do: the
// builtin Redis, the same with io-threads 4, Valkey, and an external Redis (behind a Secret's
// password) at address.
func backendsSuite(name, address string) string {
	return fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkSuite
metadata:
  name: %s
spec:
  template:
    target:
      redis: {mode: single}
    load:
      workers: 1
      tasksPerWorker: 4
      duration: 5s
      scenarios:
      - {name: get, type: redis.get}
      runners: {parallelism: 1}
    cleanup: {policy: OnSuccess}
  variants:
  - {name: redis8}
  - {name: io4, redis: {config: {io-threads: "4"}}}
  - {name: valkey, redis: {engine: valkey}}
  - name: ext
    target:
      external:
        kind: redis
        addresses: [%q]
        passwordSecretRef: {name: ext-redis, key: password}
  thresholds:
  - {variant: io4, expr: "cps >= -90%%"}
  - {variant: valkey, expr: "p99 < 1000"}
`, name, address)
}

// getSuite reads a BenchmarkSuite (nil when it cannot).
func getSuite(t *testing.T, ns, name string) *v1alpha1.BenchmarkSuite {
	t.Helper()
	out, err := kubectl("", "-n", ns, "get", "benchmarksuite", name, "-o", "json")
	if err != nil {
		t.Logf("get suite: %v", err)
		return nil
	}
	var s v1alpha1.BenchmarkSuite
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("decode suite: %v", err)
	}
	return &s
}

// waitSuiteEnded polls the suite until it Succeeded or Failed (or timeout passes).
func waitSuiteEnded(t *testing.T, ns, name string, timeout time.Duration) *v1alpha1.BenchmarkSuite {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		s := getSuite(t, ns, name)
		if s != nil {
			if now := string(s.Status.Phase) + " " + s.Status.Progress; now != last {
				t.Logf("%s/%s %s", ns, name, now)
				last = now
			}
			if s.Status.Phase == v1alpha1.SuiteSucceeded || s.Status.Phase == v1alpha1.SuiteFailed {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s: not ended within %s (last %q)", ns, name, timeout, last)
		}
		time.Sleep(2 * time.Second)
	}
}

// TestSuiteBackends (issue 24): one BenchmarkSuite runs its four variants — the builtin Redis,
// io-threads 4, Valkey and an external Redis — one after another as child BenchmarkRuns on the
// real cluster; it Succeeds with one table row per variant (CPS > 0, a delta against the
// reference redis8 for the others), its children named predictably and owned by it, a
// verdict (two lenient thresholds: Passed), and its report ConfigMap holding the combined
// table and the CPS chart.
func TestSuiteBackends(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "suite")
	extRedis(t, ns)
	apply(t, ns, backendsSuite("backends", fmt.Sprintf("ext-redis.%s.svc.cluster.local:6379", ns)))
	start := time.Now()
	s := waitSuiteEnded(t, ns, "backends", 4*runTimeout)
	metric(t.Name(), "4 child runs of a 5 s scenario, one after another: %s", time.Since(start).Round(time.Second))
	if s.Status.Phase != v1alpha1.SuiteSucceeded {
		dump(t, ns)
		t.Fatalf("suite %s: %+v", s.Status.Phase, s.Status.Conditions)
	}
	variants := []string{"redis8", "io4", "valkey", "ext"}
	if len(s.Status.Children) != len(variants) {
		t.Fatalf("children: %+v", s.Status.Children)
	}
	for i, c := range s.Status.Children {
		if c.Name != "backends-"+variants[i]+"-r1" || c.Phase != v1alpha1.PhaseSucceeded {
			t.Errorf("child %d: %+v, want backends-%s-r1 Succeeded", i, c, variants[i])
		}
		run := getRun(t, ns, c.Name)
		if run == nil || len(run.OwnerReferences) != 1 || run.OwnerReferences[0].Kind != "BenchmarkSuite" {
			t.Errorf("child %s is not owned by the suite: %+v", c.Name, run)
		}
	}
	rows := map[string]v1alpha1.SuiteRow{}
	for _, r := range s.Status.Table {
		rows[r.Variant] = r
	}
	for _, v := range variants {
		r, ok := rows[v]
		if !ok || r.Scenario != "get" || r.CPS.Mean <= 0 {
			t.Errorf("table row of %s: %+v (table %+v)", v, r, s.Status.Table)
		}
		if (v == "redis8") != (r.CPSDeltaPercent == nil) {
			t.Errorf("%s: CPS delta %v, want one against the reference redis8 for every other variant", v, r.CPSDeltaPercent)
		}
	}
	if s.Status.Report == nil || s.Status.Report.ConfigMapName == "" {
		t.Fatalf("no report: %+v", s.Status.Report)
	}
	if s.Status.Verdict != v1alpha1.VerdictPassed || len(s.Status.Thresholds) != 2 {
		t.Errorf("verdict %q, thresholds %+v: want Passed on 2 (io4 within 90 %% of redis8's calls/s, valkey's p99 under 1 s)", s.Status.Verdict, s.Status.Thresholds)
	}
	svg := mustKubectl(t, "", "-n", ns, "get", "configmap", s.Status.Report.ConfigMapName, "-o", "jsonpath={.data.cps\\.svg}")
	if !strings.HasPrefix(strings.TrimSpace(svg), "<svg") || !strings.Contains(svg, "valkey") {
		t.Errorf("cps.svg: %.300s", svg)
	}
	md := mustKubectl(t, "", "-n", ns, "get", "configmap", s.Status.Report.ConfigMapName, "-o", "jsonpath={.data.report\\.md}")
	for _, v := range variants {
		if !strings.Contains(md, "| "+v+" ") {
			t.Errorf("report.md has no row of %s:\n%s", v, md)
		}
	}
	t.Logf("report.md:\n%s", md)
}
