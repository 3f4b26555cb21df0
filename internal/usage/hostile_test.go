package usage

import (
	"encoding/json"
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/benchrun/benchrun/internal/runner"
)

// TestRunnersHostileFigures: a runner reporting 1e308 CPU seconds, NaN, ±Inf or negative
// figures in its own state ConfigMap neither overflows into negative cores nor poisons the
// other runners' sums: absurd figures are clamped to MaxCores/MaxMemoryBytes, NaN and
// negative ones dropped. Before the clamp 1e308 came out as -92233720368547760 cores.
func TestRunnersHostileFigures(t *testing.T) {
	honest := &runner.Usage{CPUSeconds: 10, WallSeconds: 10, MemoryPeakBytes: 100 << 20}
	// The figure as a runner writes it, parsed by the manager's own code.
	cm := &corev1.ConfigMap{Data: map[string]string{runner.KeyUsage: `{"cpuSeconds":1e308,"wallSeconds":1,"memoryPeakBytes":9223372036854775807}`}}
	huge := runner.ParseState(cm, 1).Usage
	if huge == nil {
		t.Fatal("the 1e308 report was not parsed")
	}
	cases := map[string][]*runner.Usage{
		"1e308":        {honest, huge},
		"NaN":          {honest, {CPUSeconds: math.NaN(), WallSeconds: 10}},
		"NaN wall":     {honest, {CPUSeconds: 1, WallSeconds: math.NaN()}},
		"+Inf":         {honest, {CPUSeconds: math.Inf(1), WallSeconds: 10}},
		"Inf wall":     {honest, {CPUSeconds: 1, WallSeconds: math.Inf(1)}},
		"negative":     {honest, {CPUSeconds: -1e308, WallSeconds: 10, MemoryPeakBytes: -1}},
		"negative mem": {honest, {CPUSeconds: 1, WallSeconds: 10, MemoryPeakBytes: math.MinInt64}},
	}
	for name, reports := range cases {
		u, ok := Runners(reports)
		if !ok {
			t.Fatalf("%s: the honest runner's report was lost", name)
		}
		for _, v := range []float64{u.CPUAvgCores, u.CPUMaxCores} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxCores {
				t.Errorf("%s: cores %v outside [0, %d]: %+v", name, v, MaxCores, u)
			}
		}
		if u.MemoryAvgBytes < 0 || u.MemoryMaxBytes < 0 || u.MemoryMaxBytes > MaxMemoryBytes {
			t.Errorf("%s: memory outside [0, 1 PiB]: %+v", name, u)
		}
		if u.MemoryMaxBytes < 100<<20 {
			t.Errorf("%s: the honest runner's memory is gone: %+v", name, u)
		}
	}
	if u, _ := Runners(cases["1e308"]); u.Pods != 2 || u.CPUMaxCores != MaxCores {
		t.Errorf("1e308 cores: want clamped to %d, got %+v", MaxCores, u)
	}
	if u, _ := Runners(cases["NaN"]); u.Pods != 1 || u.CPUAvgCores != 1 {
		t.Errorf("NaN: want the report dropped, got %+v", u)
	}
}

// TestSamplesHostileFigures: metrics.k8s.io or kubelet figures of 1e308 or NaN are clamped
// or dropped, never negative.
func TestSamplesHostileFigures(t *testing.T) {
	s := Samples{}
	s.AddPodMetrics([]unstructured.Unstructured{podMetrics("a", "redis-master", "1", "100Mi")})
	s.AddPodMetrics([]unstructured.Unstructured{podMetrics("a", "redis-master", "1e300", "1e300")})
	s.AddPod("redis-master", "a", SourceKubelet, math.NaN(), 1)
	s.AddPod("redis-master", "a", SourceKubelet, math.Inf(1), math.MaxInt64)
	s.AddPod("redis-master", "a", SourceKubelet, -5, -5)
	got := s.Summarize()
	if len(got) != 1 {
		t.Fatalf("%+v", got)
	}
	u := got[0]
	b, _ := json.Marshal(u)
	if u.CPUAvgCores < 0 || u.CPUMaxCores != MaxCores || u.MemoryAvgBytes < 0 || u.MemoryMaxBytes != MaxMemoryBytes {
		t.Errorf("want clamped figures, got %s", b)
	}
}
