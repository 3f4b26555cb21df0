package controllers

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/redisrole"
)

// Reading pod usage: metrics.k8s.io when served; otherwise the kubelets' resource metrics,
// for which the kubelet's webhook authorizer asks for nodes/metrics (get), and the node
// objects give the kubelet's address and port.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get
// +kubebuilder:rbac:groups="",resources=nodes/metrics,verbs=get

// podMetricsGVK is metrics.k8s.io's PodMetricsList.
var podMetricsGVK = schema.GroupVersionKind{Group: "metrics.k8s.io", Version: "v1beta1", Kind: "PodMetricsList"}

// podUsage accumulates one pod's samples.
type podUsage struct {
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

// usageSamples are the accumulated samples by role and pod, kept in the run's usage
// ConfigMap so that an operator restart keeps them.
type usageSamples map[string]map[string]*podUsage

// Where samples come from (ResourceUsage.Source).
const (
	sourceMetricsAPI = "metrics.k8s.io"
	sourceKubelet    = "kubelet"
	sourceCgroup     = "cgroup"
)

// Keys of the usage ConfigMap.
const (
	keySamples   = "samples.json"
	keyKubelet   = "kubelet.json"
	keySampledAt = "sampledAt"
)

// usageStore is the run's usage ConfigMap: the samples, the kubelet counters the next CPU
// deltas start from, and when the last sample was taken.
type usageStore struct {
	cm        *corev1.ConfigMap
	samples   usageSamples
	kubelet   kubeletState
	sampledAt time.Time
}

// kubeletState is what the kubelet path keeps between scrapes.
type kubeletState struct {
	// Counters are the last CPU reading of each container, by "pod/container".
	Counters map[string]*cpuReading `json:"counters,omitempty"`
	// Errors are the nodes whose last scrape failed, with the error.
	Errors map[string]string `json:"errors,omitempty"`
}

// cpuReading is one container's CPU counter and the rate measured when it was read.
type cpuReading struct {
	// Seconds is container_cpu_usage_seconds_total.
	Seconds float64 `json:"s"`
	// Ms is the counter's timestamp in Unix milliseconds.
	Ms int64 `json:"ms"`
	// Start is the container's start time; a new one means a new counter.
	Start float64 `json:"start,omitempty"`
	// Rate is the CPU in cores between the previous reading and this one (nil: none yet).
	Rate *float64 `json:"rate,omitempty"`
}

// wantUsage tells whether collect.resourceUsage is on (the default).
func wantUsage(run *v1alpha1.BenchmarkRun) bool {
	return run.Spec.Collect.ResourceUsage == nil || *run.Spec.Collect.ResourceUsage
}

// usageName is the usage ConfigMap of the current generation.
func usageName(run *v1alpha1.BenchmarkRun) string { return prefix(run, run.Generation) + "-usage" }

// sampleInterval is the least time between two samples: one per poll, whatever else
// triggers reconciles (the usage ConfigMap's own update among them).
func (r *BenchmarkRunReconciler) sampleInterval() time.Duration {
	return max(r.pollInterval()-time.Second, time.Second)
}

// sampleUsage takes one sample of CPU and memory of every pod of the run (target and
// runners) during the load: from metrics.k8s.io when the cluster serves it, otherwise from
// the kubelets' /metrics/resource of the nodes the pods run on (when r.Kubelet is set).
// Without either, runners still report their own cgroup usage.
func (r *BenchmarkRunReconciler) sampleUsage(ctx context.Context, s *step) error {
	run := s.run
	if !wantUsage(run) {
		return nil
	}
	u, err := r.loadUsage(ctx, run)
	if err != nil {
		return err
	}
	if !u.sampledAt.IsZero() && s.now.Sub(u.sampledAt) < r.sampleInterval() {
		return nil
	}
	if items, ok := r.podMetrics(ctx, run); ok {
		u.samples.add(items)
	} else if r.Kubelet != nil {
		if err := r.sampleKubelet(ctx, s, u); err != nil {
			return err
		}
	} else {
		return nil
	}
	u.sampledAt = s.now.Time
	err = r.saveUsage(ctx, run, u)
	if kerrors.IsConflict(err) {
		return nil // read from a stale cache: the next poll samples again
	}
	return err
}

// podMetrics lists the PodMetrics of the run's pods; ok is false when metrics.k8s.io is
// not served or not usable.
func (r *BenchmarkRunReconciler) podMetrics(ctx context.Context, run *v1alpha1.BenchmarkRun) ([]unstructured.Unstructured, bool) {
	if _, err := r.RESTMapper().RESTMapping(podMetricsGVK.GroupKind(), podMetricsGVK.Version); err != nil {
		return nil, false
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(podMetricsGVK)
	if err := r.List(ctx, list, client.InNamespace(run.Namespace), client.MatchingLabels(runLabels(run, run.Generation))); err != nil {
		logf.FromContext(ctx).V(1).Info("metrics.k8s.io not usable", "error", err.Error())
		return nil, false
	}
	return list.Items, true
}

// usageRole is the role a pod's usage is reported under, from its labels: the Redis role
// the pod has now (benchrun's redis-role sidecar, or the redis-operator's labels) so that a
// promoted replica counts as the master, else its component (hetu, proxy, runner...).
func usageRole(labels map[string]string) string {
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

// add accumulates one sample of every pod in a PodMetrics list, by the pod's role.
func (samples usageSamples) add(items []unstructured.Unstructured) {
	for _, item := range items {
		containers, _, _ := unstructured.NestedSlice(item.Object, "containers")
		var cpu float64
		var mem int64
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
				mem += q.Value()
			}
		}
		samples.addPod(usageRole(item.GetLabels()), item.GetName(), sourceMetricsAPI, cpu, mem)
	}
}

// addPod accumulates one sample of one pod.
func (samples usageSamples) addPod(role, pod, source string, cpu float64, mem int64) {
	if samples[role] == nil {
		samples[role] = map[string]*podUsage{}
	}
	p := samples[role][pod]
	if p == nil {
		p = &podUsage{}
		samples[role][pod] = p
	}
	if source != sourceMetricsAPI {
		p.Source = source
	}
	p.N++
	p.CPUSum += cpu
	p.MemSum += float64(mem)
	p.CPUMax = max(p.CPUMax, cpu)
	p.MemMax = max(p.MemMax, mem)
}

// summarize is the average and maximum per role, roles sorted.
func (samples usageSamples) summarize() []v1alpha1.ResourceUsage {
	var out []v1alpha1.ResourceUsage
	for _, role := range slices.Sorted(maps.Keys(samples)) {
		u := v1alpha1.ResourceUsage{Role: role, Source: sourceMetricsAPI}
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

// loadUsage reads the usage ConfigMap (empty when it does not exist yet).
func (r *BenchmarkRunReconciler) loadUsage(ctx context.Context, run *v1alpha1.BenchmarkRun) (*usageStore, error) {
	u := &usageStore{cm: &corev1.ConfigMap{}, samples: usageSamples{}}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: usageName(run)}, u.cm)
	if kerrors.IsNotFound(err) {
		u.cm.Namespace, u.cm.Name = run.Namespace, usageName(run)
		return u, nil
	}
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(u.cm.Data[keySamples]), &u.samples)
	_ = json.Unmarshal([]byte(u.cm.Data[keyKubelet]), &u.kubelet)
	u.sampledAt, _ = time.Parse(time.RFC3339, u.cm.Data[keySampledAt])
	return u, nil
}

// saveUsage writes the usage ConfigMap (owned by the run, so it goes with it).
func (r *BenchmarkRunReconciler) saveUsage(ctx context.Context, run *v1alpha1.BenchmarkRun, u *usageStore) error {
	samples, _ := json.Marshal(u.samples)
	data := map[string]string{keySamples: string(samples), keySampledAt: u.sampledAt.UTC().Format(time.RFC3339)}
	if len(u.kubelet.Counters) > 0 || len(u.kubelet.Errors) > 0 {
		kubelet, _ := json.Marshal(u.kubelet)
		data[keyKubelet] = string(kubelet)
	}
	cm := u.cm
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Labels = runLabels(run, run.Generation)
		cm.Labels[naming.LabelComponent] = "usage"
		cm.Data = data
		return controllerutil.SetControllerReference(run, cm, r.Scheme)
	})
	return err
}

// resourceUsage is status.resources: average and maximum per role from the samples
// (metrics.k8s.io or kubelet), and for runners without samples their own cgroup report.
func (r *BenchmarkRunReconciler) resourceUsage(ctx context.Context, s *step, obs *observation) []v1alpha1.ResourceUsage {
	run := s.run
	if !wantUsage(run) {
		return nil
	}
	var out []v1alpha1.ResourceUsage
	if u, err := r.loadUsage(ctx, run); err == nil {
		out = u.samples.summarize()
	}
	if slices.ContainsFunc(out, func(u v1alpha1.ResourceUsage) bool { return u.Role == "runner" }) {
		return out
	}
	// Runners' own cgroup report: CPU averaged over the load, memory as the cgroup's peak.
	u := v1alpha1.ResourceUsage{Role: "runner", Source: sourceCgroup}
	var cpu, mem float64
	for _, st := range obs.states {
		if st.Usage == nil || st.Usage.WallSeconds <= 0 {
			continue
		}
		cores := st.Usage.CPUSeconds / st.Usage.WallSeconds
		u.Pods++
		cpu += cores
		mem += float64(st.Usage.MemoryPeakBytes)
		u.CPUMaxCores = max(u.CPUMaxCores, cores)
		u.MemoryMaxBytes = max(u.MemoryMaxBytes, st.Usage.MemoryPeakBytes)
	}
	if u.Pods > 0 {
		out = append(out, averaged(u, cpu, mem))
	}
	return out
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
