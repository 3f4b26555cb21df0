// Package usage measures the CPU and memory of a run's pods: samples from metrics.k8s.io or
// the kubelets' /metrics/resource, accumulated per role and pod in a Store (kept in the run's
// usage ConfigMap so an operator restart keeps them), and summarised into status.resources,
// with the runners' own cgroup reports when no sample covers them.
package usage

import (
	"maps"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/redisrole"
	"github.com/benchrun/benchrun/internal/runner"
)

// Where samples come from (ResourceUsage.Source).
const (
	// SourceMetricsAPI is metrics.k8s.io.
	SourceMetricsAPI = "metrics.k8s.io"
	// SourceKubelet is the kubelets' /metrics/resource.
	SourceKubelet = "kubelet"
	// SourceCgroup is the runners' own cgroup report.
	SourceCgroup = "cgroup"
)

// PodUsage accumulates one pod's samples.
type PodUsage struct {
	// N is the number of samples.
	N int `json:"n"`
	// CPUSum is the sum of the CPU samples in cores.
	CPUSum float64 `json:"cpuSum"`
	// CPUMax is the largest CPU sample in cores.
	CPUMax float64 `json:"cpuMax"`
	// MemSum is the sum of the memory samples in bytes.
	MemSum float64 `json:"memSum"`
	// MemMax is the largest memory sample in bytes.
	MemMax int64 `json:"memMax"`
	// Source is where the samples came from; empty means metrics.k8s.io.
	Source string `json:"source,omitempty"`
}

// Samples are the accumulated samples by role and pod.
type Samples map[string]map[string]*PodUsage

// Role is the role a pod's usage is reported under, from its labels: the Redis role
// the pod has now (benchrun's redis-role sidecar, or the redis-operator's labels) so that a
// promoted replica counts as the master, else its component (hetu, proxy, runner...).
func Role(labels map[string]string) string {
	switch labels[redisrole.Label] {
	case "master":
		return "redis-master"
	case "replica":
		return "redis-replica"
	}
	component := labels[naming.LabelComponent]
	if component == "redis" { // redis-operator pods carry the custom resource's labels
		switch {
		case labels["redis-role"] == "master", labels["role"] == "standalone":
			return "redis-master"
		case labels["redis-role"] == "slave", labels["redis-role"] == "replica":
			return "redis-replica"
		case labels["role"] == "sentinel":
			return "sentinel"
		}
	}
	if component == "" {
		return "target" // pods of a target deployed by another operator
	}
	return component
}

// AddPodMetrics accumulates one sample of every pod in a metrics.k8s.io PodMetrics list,
// by the pod's role.
func (samples Samples) AddPodMetrics(items []unstructured.Unstructured) {
	for _, item := range items {
		containers, _, _ := unstructured.NestedSlice(item.Object, "containers")
		var cpu, mem float64
		for _, c := range containers {
			cm, ok := c.(map[string]any)
			if !ok {
				continue
			}
			usage, _, _ := unstructured.NestedStringMap(cm, "usage")
			if q, err := resource.ParseQuantity(usage["cpu"]); err == nil {
				cpu += q.AsApproximateFloat64()
			}
			if q, err := resource.ParseQuantity(usage["memory"]); err == nil {
				mem += q.AsApproximateFloat64()
			}
		}
		if m, ok := MemoryBytes(mem); ok {
			samples.AddPod(Role(item.GetLabels()), item.GetName(), SourceMetricsAPI, cpu, m)
		}
	}
}

// Bounds of a usage figure: a runner reports its own, and a kubelet's text may say anything
// (1e308, NaN, +Inf). Beyond them a figure is clamped; NaN or negative, it is dropped.
const (
	// MaxCores bounds a CPU figure (cores).
	MaxCores = 1 << 16
	// MaxMemoryBytes bounds a memory figure (1 PiB).
	MaxMemoryBytes = 1 << 50
)

// Cores is v cores clamped to [0, MaxCores]; ok is false for NaN or a negative figure.
func Cores(v float64) (cores float64, ok bool) {
	if math.IsNaN(v) || v < 0 {
		return 0, false
	}
	return min(v, MaxCores), true
}

// MemoryBytes is v bytes clamped to [0, MaxMemoryBytes] as an integer; ok is false for NaN
// or a negative figure.
func MemoryBytes(v float64) (bytes int64, ok bool) {
	if math.IsNaN(v) || v < 0 {
		return 0, false
	}
	return int64(min(v, MaxMemoryBytes)), true
}

// AddPod accumulates one sample of one pod; a sample of NaN or negative figures is dropped
// and larger ones are clamped (Cores, MemoryBytes).
func (samples Samples) AddPod(role, pod, source string, cpu float64, mem int64) {
	cpu, okCPU := Cores(cpu)
	if !okCPU || mem < 0 {
		return
	}
	mem = min(mem, MaxMemoryBytes)
	if samples[role] == nil {
		samples[role] = map[string]*PodUsage{}
	}
	p := samples[role][pod]
	if p == nil {
		p = &PodUsage{}
		samples[role][pod] = p
	}
	if source != SourceMetricsAPI {
		p.Source = source
	}
	p.N++
	p.CPUSum += cpu
	p.MemSum += float64(mem)
	p.CPUMax = max(p.CPUMax, cpu)
	p.MemMax = max(p.MemMax, mem)
}

// Summarize is the average and maximum per role, roles sorted.
func (samples Samples) Summarize() []v1alpha1.ResourceUsage {
	var out []v1alpha1.ResourceUsage
	for _, role := range slices.Sorted(maps.Keys(samples)) {
		u := v1alpha1.ResourceUsage{Role: role, Source: SourceMetricsAPI}
		var cpu, mem float64
		for _, p := range samples[role] {
			if p.N == 0 {
				continue
			}
			u.Pods++
			cpu += p.CPUSum / float64(p.N)
			mem += p.MemSum / float64(p.N)
			u.CPUMaxCores = max(u.CPUMaxCores, p.CPUMax)
			u.MemoryMaxBytes = max(u.MemoryMaxBytes, p.MemMax)
			if p.Source != "" {
				u.Source = p.Source
			}
		}
		if u.Pods > 0 {
			out = append(out, averaged(u, cpu, mem))
		}
	}
	return out
}

// Runners is the "runner" role from the runners' own cgroup reports: CPU averaged over the
// load, memory as the cgroup's peak; ok is false when no runner reported.
func Runners(reports []*runner.Usage) (u v1alpha1.ResourceUsage, ok bool) {
	u = v1alpha1.ResourceUsage{Role: "runner", Source: SourceCgroup}
	var cpu, mem float64
	for _, r := range reports {
		if r == nil || !(r.WallSeconds > 0) || math.IsInf(r.WallSeconds, 0) {
			continue
		}
		cores, okCPU := Cores(r.CPUSeconds / r.WallSeconds)
		peak, okMem := MemoryBytes(float64(r.MemoryPeakBytes))
		if !okCPU || !okMem {
			continue
		}
		u.Pods++
		cpu += cores
		mem += float64(peak)
		u.CPUMaxCores = max(u.CPUMaxCores, cores)
		u.MemoryMaxBytes = max(u.MemoryMaxBytes, peak)
	}
	if u.Pods == 0 {
		return u, false
	}
	return averaged(u, cpu, mem), true
}

// WithRunners completes a run's usage with the runners' own cgroup reports: they give the
// "runner" role when no sample covers a runner, and replace the samples when they cover more
// runner pods (a short run on a node whose kubelet had no sample of its runner yet would
// otherwise report fewer runners than ran).
func WithRunners(sampled []v1alpha1.ResourceUsage, reports []*runner.Usage) []v1alpha1.ResourceUsage {
	own, ok := Runners(reports)
	if !ok {
		return sampled
	}
	i := slices.IndexFunc(sampled, func(u v1alpha1.ResourceUsage) bool { return u.Role == own.Role })
	switch {
	case i < 0:
		return append(sampled, own)
	case own.Pods > sampled[i].Pods:
		sampled[i] = own
	}
	return sampled
}

// averaged finishes a role's usage from per-pod sums: averages over u.Pods, CPU rounded.
func averaged(u v1alpha1.ResourceUsage, cpuSum, memSum float64) v1alpha1.ResourceUsage {
	u.CPUAvgCores = round2(cpuSum / float64(u.Pods))
	u.CPUMaxCores = round2(u.CPUMaxCores)
	u.MemoryAvgBytes = int64(memSum / float64(u.Pods))
	return u
}

// round2 rounds to 2 decimals.
func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
