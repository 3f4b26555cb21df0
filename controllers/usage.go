package controllers

import (
	"context"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/usage"
)

// Reading pod usage: metrics.k8s.io when served; otherwise the kubelets' resource metrics,
// for which the kubelet's webhook authorizer asks for nodes/metrics (get): not the manager's
// right but the kubelet reader's, whose short-lived tokens the kubelets get
// (config/rbac/kubelet_reader.yaml). The node objects give the kubelet's address and port.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get

// podMetricsGVK is metrics.k8s.io's PodMetricsList.
var podMetricsGVK = schema.GroupVersionKind{Group: "metrics.k8s.io", Version: "v1beta1", Kind: "PodMetricsList"}

// usageStore is the run's usage ConfigMap and the samples it holds.
type usageStore struct {
	*usage.Store
	cm *corev1.ConfigMap
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
	if !u.SampledAt.IsZero() && s.now.Sub(u.SampledAt) < r.sampleInterval() {
		return nil
	}
	before := copySamples(u.Samples)
	if items, ok := r.podMetrics(ctx, run); ok {
		u.Samples.AddPodMetrics(items)
	} else if r.Kubelet != nil {
		if err := r.sampleKubelet(ctx, s, u); err != nil {
			return err
		}
	} else {
		return nil
	}
	u.SampledAt = s.now.Time
	r.History.LiveUsage(run, latestSamples(before, u.Samples), s.now.Time)
	err = r.saveUsage(ctx, run, u)
	if kerrors.IsConflict(err) {
		return nil // read from a stale cache: the next poll samples again
	}
	return err
}

// podMetrics lists the PodMetrics of the run's pods; ok is false when metrics.k8s.io is
// not served or not usable.
func (r *BenchmarkRunReconciler) podMetrics(ctx context.Context, run *v1alpha1.BenchmarkRun) ([]unstructured.Unstructured, bool) {
	if !r.served(podMetricsGVK) {
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

// sampleKubelet takes one sample of the run's running pods from the kubelets of the nodes
// they run on (usage.Store.AddScrapes). A node that cannot be read is reported once as an
// Event (and again after it recovered and failed anew); its pods are skipped.
func (r *BenchmarkRunReconciler) sampleKubelet(ctx context.Context, s *step, u *usageStore) error {
	run := s.run
	reader := r.uncached()
	var pods corev1.PodList
	if err := reader.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(runLabels(run, run.Generation))); err != nil {
		return err
	}
	byNode := map[string][]*corev1.Pod{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName != "" && pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil {
			byNode[pod.Spec.NodeName] = append(byNode[pod.Spec.NodeName], pod)
		}
	}
	failed := u.AddScrapes(byNode, r.Kubelet.ScrapeNodes(ctx, reader, slices.Collect(maps.Keys(byNode))))
	for _, node := range slices.Sorted(maps.Keys(failed)) {
		s.event(corev1.EventTypeWarning, v1alpha1.ReasonKubeletMetricsFailed, "CPU/memory of pods on node %s: %v", node, failed[node])
		logf.FromContext(ctx).Info("reading the kubelet's resource metrics failed", "node", node, "error", failed[node].Error())
	}
	return nil
}

// loadUsage reads the usage ConfigMap (empty when it does not exist yet).
func (r *BenchmarkRunReconciler) loadUsage(ctx context.Context, run *v1alpha1.BenchmarkRun) (*usageStore, error) {
	u := &usageStore{cm: &corev1.ConfigMap{}}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: usageName(run)}, u.cm)
	if kerrors.IsNotFound(err) {
		u.cm.Namespace, u.cm.Name = run.Namespace, usageName(run)
		u.Store = usage.Decode(nil)
		return u, nil
	}
	if err != nil {
		return nil, err
	}
	if !ownedBy(u.cm, run) { // an earlier run's samples: never this run's figures
		return nil, r.removeForeign(ctx, run, u.cm)
	}
	u.Store = usage.Decode(u.cm.Data)
	return u, nil
}

// saveUsage writes the usage ConfigMap (owned by the run, so it goes with it).
func (r *BenchmarkRunReconciler) saveUsage(ctx context.Context, run *v1alpha1.BenchmarkRun, u *usageStore) error {
	data := u.Encode()
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
// (metrics.k8s.io or kubelet), completed by the runners' own cgroup reports (usage.WithRunners).
func (r *BenchmarkRunReconciler) resourceUsage(ctx context.Context, s *step, obs *observation) []v1alpha1.ResourceUsage {
	run := s.run
	if !wantUsage(run) {
		return nil
	}
	var out []v1alpha1.ResourceUsage
	if u, err := r.loadUsage(ctx, run); err == nil {
		out = u.Samples.Summarize()
	}
	reports := make([]*runner.Usage, 0, len(obs.states))
	for _, st := range obs.states {
		reports = append(reports, st.Usage)
	}
	return usage.WithRunners(out, reports)
}
