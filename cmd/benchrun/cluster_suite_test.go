package main

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// ioSuite is a BenchmarkSuite in namespace bench of two variants: redis8 (the template) and
// io8 (io-threads 8).
func ioSuite(name string) *v1alpha1.BenchmarkSuite {
	return &v1alpha1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name}, Spec: v1alpha1.BenchmarkSuiteSpec{
		Template: v1alpha1.BenchmarkRunSpec{Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}}, Load: testLoad()},
		Variants: []v1alpha1.SuiteVariant{{Name: "redis8"}, {Name: "io8", Redis: &v1alpha1.VariantRedis{Config: map[string]v1alpha1.RedisConfigValue{"io-threads": "8"}}}},
	}}
}

// TestPluginSuites: `benchrun get` lists BenchmarkSuites after the runs and `benchrun report
// SUITE` prints its report.md (or table.json with --output json, or its HTML page with --html)
// from a real kube-apiserver.
func TestPluginSuites(t *testing.T) {
	c, kubeconfig := startCluster(t, "bench")
	env := []string{"KUBECONFIG=" + kubeconfig}
	ctx := context.Background()
	s := ioSuite("cmp")
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	r := newCLI(t, env, "report", "cmp")
	if code := r.run(t); code != exitFailed || !strings.Contains(r.stderr.String(), "BenchmarkSuite cmp has no report yet") {
		t.Errorf("report before the end: exit %d\n%s", code, r.stderr.String())
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "cmp-report"},
		Data: map[string]string{"report.md": "# BenchmarkSuite cmp\n", "table.json": "[]"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	s.Status = v1alpha1.BenchmarkSuiteStatus{Phase: v1alpha1.SuiteSucceeded, Progress: "2/2", Verdict: v1alpha1.VerdictPassed,
		Report: &v1alpha1.ReportRef{ConfigMapName: cm.Name}}
	if err := c.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	g := newCLI(t, env, "get")
	if code := g.run(t); code != exitOK || !strings.Contains(g.stdout.String(), "SUITE") || !strings.Contains(g.stdout.String(), "cmp ") ||
		!strings.Contains(g.stdout.String(), "2/2") || !strings.Contains(g.stdout.String(), "redis8") {
		t.Errorf("get: exit %d\n%s", code, g.stdout.String())
	}
	g = newCLI(t, env, "get", "cmp")
	if code := g.run(t); code != exitOK {
		t.Errorf("get cmp: exit %d\n%s", code, g.stderr.String())
	}
	r = newCLI(t, env, "report", "cmp")
	if code := r.run(t); code != exitOK || r.stdout.String() != "# BenchmarkSuite cmp\n" {
		t.Errorf("report: exit %d\n%s", code, r.stdout.String())
	}
	r = newCLI(t, env, "report", "cmp", "--output", "json")
	if code := r.run(t); code != exitOK || r.stdout.String() != "[]" {
		t.Errorf("report json: exit %d\n%s", code, r.stdout.String())
	}
	r = newCLI(t, env, "report", "cmp", "--format", "ya")
	if code := r.run(t); code != exitFailed || !strings.Contains(r.stderr.String(), "report a child run") {
		t.Errorf("report --format ya: exit %d\n%s", code, r.stderr.String())
	}
	r = newCLI(t, env, "report", "cmp", "--html")
	if code := r.run(t); code != exitOK || !strings.Contains(r.stdout.String(), "<h1>BenchmarkSuite cmp (generation ") ||
		!strings.Contains(r.stdout.String(), `"table":[]`) {
		t.Errorf("report --html: exit %d\n%s", code, r.stdout.String())
	}
}
