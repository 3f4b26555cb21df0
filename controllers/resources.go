package controllers

import (
	"context"
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/target"
)

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
}

// usageSamples are the accumulated samples by role and pod, kept in the run's usage
// ConfigMap so that an operator restart keeps them.
type usageSamples map[string]map[string]*podUsage

// wantUsage tells whether collect.resourceUsage is on (the default).
func wantUsage(run *v1alpha1.BenchmarkRun) bool {
	return run.Spec.Collect.ResourceUsage == nil || *run.Spec.Collect.ResourceUsage
}

// usageName is the usage ConfigMap of the current generation.
func usageName(run *v1alpha1.BenchmarkRun) string { return prefix(run, run.Generation) + "-usage" }

// sampleUsage takes one metrics.k8s.io sample of every pod of the run (target and runners)
// during the load. Without the metrics API it does nothing: runners report their own
// cgroup usage instead.
func (r *BenchmarkRunReconciler) sampleUsage(ctx context.Context, s *step) error {
	run := s.run
	if !wantUsage(run) {
		return nil
	}
	if _, err := r.RESTMapper().RESTMapping(podMetricsGVK.GroupKind(), podMetricsGVK.Version); err != nil {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(podMetricsGVK)
	if err := r.List(ctx, list, client.InNamespace(run.Namespace), client.MatchingLabels(runLabels(run, run.Generation))); err != nil {
		logf.FromContext(ctx).V(1).Info("metrics.k8s.io not usable", "error", err.Error())
		return nil
	}
	samples, cm, err := r.loadUsage(ctx, run)
	if err != nil {
		return err
	}
	samples.add(list.Items)
	b, _ := json.Marshal(samples)
	_, err = controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Labels = runLabels(run, run.Generation)
		cm.Labels[target.LabelComponent] = "usage"
		cm.Data = map[string]string{"samples.json": string(b)}
		return controllerutil.SetControllerReference(run, cm, r.Scheme)
	})
	return err
}

// add accumulates one sample of every pod in a PodMetrics list, by the pod's component label.
func (samples usageSamples) add(items []unstructured.Unstructured) {
	for _, item := range items {
		role := item.GetLabels()[target.LabelComponent]
		if role == "" {
			role = "target" // pods of a target deployed by another operator
		}
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
		if samples[role] == nil {
			samples[role] = map[string]*podUsage{}
		}
		p := samples[role][item.GetName()]
		if p == nil {
			p = &podUsage{}
			samples[role][item.GetName()] = p
		}
		p.N++
		p.CPUSum += cpu
		p.MemSum += float64(mem)
		p.CPUMax = max(p.CPUMax, cpu)
		p.MemMax = max(p.MemMax, mem)
	}
}

// summarize is the average and maximum per role, roles sorted.
func (samples usageSamples) summarize() []v1alpha1.ResourceUsage {
	var out []v1alpha1.ResourceUsage
	roles := make([]string, 0, len(samples))
	for role := range samples {
		roles = append(roles, role)
	}
	slices.Sort(roles)
	for _, role := range roles {
		u := v1alpha1.ResourceUsage{Role: role, Source: "metrics.k8s.io"}
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
		}
		if u.Pods > 0 {
			out = append(out, averaged(u, cpu, mem))
		}
	}
	return out
}

// loadUsage reads the usage ConfigMap (empty samples when it does not exist yet).
func (r *BenchmarkRunReconciler) loadUsage(ctx context.Context, run *v1alpha1.BenchmarkRun) (usageSamples, *corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	samples := usageSamples{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: usageName(run)}, cm)
	if kerrors.IsNotFound(err) {
		cm.Namespace, cm.Name = run.Namespace, usageName(run)
		return samples, cm, nil
	}
	if err != nil {
		return nil, nil, err
	}
	_ = json.Unmarshal([]byte(cm.Data["samples.json"]), &samples)
	return samples, cm, nil
}

// resourceUsage is status.resources: average and maximum per role from the metrics
// samples, and for runners without samples their own cgroup report.
func (r *BenchmarkRunReconciler) resourceUsage(ctx context.Context, s *step, obs *observation) []v1alpha1.ResourceUsage {
	run := s.run
	if !wantUsage(run) {
		return nil
	}
	var out []v1alpha1.ResourceUsage
	if samples, _, err := r.loadUsage(ctx, run); err == nil {
		out = samples.summarize()
	}
	if slices.ContainsFunc(out, func(u v1alpha1.ResourceUsage) bool { return u.Role == "runner" }) {
		return out
	}
	// Runners' own cgroup report: CPU averaged over the load, memory as the cgroup's peak.
	u := v1alpha1.ResourceUsage{Role: "runner", Source: "cgroup"}
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
