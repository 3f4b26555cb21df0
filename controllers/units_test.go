package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// podMetrics is a metrics.k8s.io PodMetrics item.
func podMetrics(name, role, cpu, mem string) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{
		"containers": []any{map[string]any{"name": "c", "usage": map[string]any{"cpu": cpu, "memory": mem}}},
	}}
	u.SetName(name)
	u.SetLabels(map[string]string{"bench.benchrun.io/component": role})
	return u
}

func TestUsageSamples(t *testing.T) {
	s := usageSamples{}
	s.add([]unstructured.Unstructured{podMetrics("m-0", "redis-master", "500m", "100Mi"), podMetrics("r-0", "redis-replica", "1", "50Mi")})
	s.add([]unstructured.Unstructured{podMetrics("m-0", "redis-master", "1500m", "300Mi"), podMetrics("r-1", "redis-replica", "3", "150Mi")})
	got := s.summarize()
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	m, r := got[0], got[1]
	if m.Role != "redis-master" || m.Pods != 1 || m.CPUAvgCores != 1 || m.CPUMaxCores != 1.5 || m.MemoryAvgBytes != 200<<20 || m.MemoryMaxBytes != 300<<20 || m.Source != "metrics.k8s.io" {
		t.Errorf("master %+v", m)
	}
	if r.Role != "redis-replica" || r.Pods != 2 || r.CPUAvgCores != 2 || r.CPUMaxCores != 3 {
		t.Errorf("replica %+v", r)
	}
}

func TestHelpers(t *testing.T) {
	if got := parseIndexes("1,3-5, 9"); len(got) != 5 || got[1] != 3 || got[4] != 9 {
		t.Errorf("parseIndexes %v", got)
	}
	if got := thousands(1234567.891); got != "1,234,567.89" {
		t.Errorf("thousands %q", got)
	}
	if got := thousands(999.5); got != "999.50" {
		t.Errorf("thousands %q", got)
	}
	evicted := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "low memory"}}
	if got := podFailure(evicted); !strings.Contains(got, "evicted: low memory") {
		t.Errorf("podFailure %q", got)
	}
	if got := podFailure(&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}); got != "" {
		t.Errorf("running pod failed: %q", got)
	}
	run := &v1alpha1.BenchmarkRun{}
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "a"}, {Name: "b"}}
	run.Spec.Load.Duration.Duration = 60e9
	if got := runTimeout(run).String(); got != "22m0s" {
		t.Errorf("runTimeout %s", got)
	}
}
