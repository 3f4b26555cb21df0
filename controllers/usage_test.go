package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/usage"
	"github.com/benchrun/benchrun/internal/usage/usagetest"
)

// kubeletClient is the operator's kubelet client as in a pod: a bearer token and the CA.
func kubeletClient(t *testing.T, caPEM []byte) *usage.KubeletMetrics {
	t.Helper()
	k, err := usage.NewKubeletMetrics(usagetest.RESTConfig(caPEM), usage.KubeletOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// createNodes creates Nodes (cluster-scoped) for this test and deletes them after it.
func (e *env) createNodes(nodes ...*corev1.Node) {
	e.t.Helper()
	for _, n := range nodes {
		st := n.Status
		if err := k8sClient.Create(e.ctx, n); err != nil {
			e.t.Fatal(err)
		}
		n.Status = st
		if err := k8sClient.Status().Update(e.ctx, n); err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), n) })
	}
}

// scheduledPod simulates the scheduler and kubelet: a Running pod named name on node, from
// a pod template.
func (e *env) scheduledPod(name, node string, tmpl corev1.PodTemplateSpec, extra map[string]string) *corev1.Pod {
	e.t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{}, Annotations: tmpl.Annotations},
		Spec: *tmpl.Spec.DeepCopy()}
	for k, v := range tmpl.Labels {
		pod.Labels[k] = v
	}
	for k, v := range extra {
		pod.Labels[k] = v
	}
	pod.Spec.NodeName = node
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning}
	if err := k8sClient.Status().Update(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	return pod
}

// statefulSetPods simulates pod <sts>-i of every replica of a target StatefulSet.
func (e *env) statefulSetPods(run *v1alpha1.BenchmarkRun, suffix, node string) []*corev1.Pod {
	e.t.Helper()
	var sts appsv1.StatefulSet
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: targetName(run, suffix)}, &sts); err != nil {
		e.t.Fatal(err)
	}
	var pods []*corev1.Pod
	for i := range ptr.Deref(sts.Spec.Replicas, 1) {
		pods = append(pods, e.scheduledPod(fmt.Sprintf("%s-%d", sts.Name, i), node, sts.Spec.Template, nil))
	}
	return pods
}

// runnerPodOn simulates runner i's pod running on node.
func (e *env) runnerPodOn(run *v1alpha1.BenchmarkRun, i int, node string) *corev1.Pod {
	e.t.Helper()
	var job batchv1.Job
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: runner.JobName(prefix(run, run.Generation))}, &job); err != nil {
		e.t.Fatal(err)
	}
	return e.scheduledPod(fmt.Sprintf("%s-%d-x", job.Name, i), node, job.Spec.Template,
		map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(i)})
}

// usageStoreOf reads the run's usage ConfigMap.
func (e *env) usageStoreOf(run *v1alpha1.BenchmarkRun) *usageStore {
	e.t.Helper()
	u, err := e.r.loadUsage(e.ctx, run)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// managerReader is a client acting as a ServiceAccount bound to the generated manager
// ClusterRole (config/rbac/role.yaml), so the kubelet path's API reads run under that RBAC;
// it also checks that the role grants nodes get but not the kubelets' nodes/metrics.
func (e *env) managerReader() client.Client {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "config", "rbac", "role.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		e.t.Fatal(err)
	}
	role.ObjectMeta = metav1.ObjectMeta{Name: e.ns + "-kubelet-usage"}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "manager", Namespace: e.ns}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: e.ns}}}
	for _, obj := range []client.Object{sa, &role, binding} {
		if err := k8sClient.Create(e.ctx, obj); err != nil {
			e.t.Fatal(err)
		}
	}
	e.t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), binding)
		_ = k8sClient.Delete(context.Background(), &role)
	})
	user := fmt.Sprintf("system:serviceaccount:%s:%s", e.ns, sa.Name)
	allowed := func(attrs authorizationv1.ResourceAttributes) bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + e.ns, "system:authenticated"}, ResourceAttributes: &attrs}}
		if err := k8sClient.Create(e.ctx, sar); err != nil {
			e.t.Fatal(err)
		}
		return sar.Status.Allowed
	}
	// The manager reads the Node (the kubelet's address); what the kubelet asks the API server
	// when /metrics/resource is scraped (nodes/metrics get) is the kubelet reader's right, not
	// the manager's (TestKubeletReaderIdentity).
	waitFor(e.t, func() bool {
		return allowed(authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Name: "any-node"})
	})
	for _, denied := range []authorizationv1.ResourceAttributes{
		{Verb: "get", Resource: "nodes", Subresource: "metrics", Name: "any-node"},
		{Verb: "get", Resource: "nodes", Subresource: "proxy", Name: "any-node"},
		{Verb: "list", Resource: "nodes"},
	} {
		if allowed(denied) {
			e.t.Errorf("manager ClusterRole allows %+v", denied)
		}
	}
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + e.ns, "system:authenticated"}}
	c, err := client.New(as, client.Options{Scheme: scheme})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// TestKubeletResourceUsage: without metrics.k8s.io (envtest has none) the operator reads
// target and runner pods' CPU and memory from the kubelets of the nodes they run on, with
// its bearer token, over verified TLS; only those nodes are scraped; the counters survive
// an operator restart; status and report show the target roles.
func TestKubeletResourceUsage(t *testing.T) {
	e := newEnv(t)
	pki := usagetest.NewPKI(t)
	targetNode, runnerNode, idleNode := usagetest.NewKubelet(t, pki, e.ns), usagetest.NewKubelet(t, pki, e.ns), usagetest.NewKubelet(t, pki, e.ns)
	runnerNode.FailFirst(1)
	nodeName := func(s string) string { return e.ns + "-" + s }
	e.createNodes(usagetest.Node(nodeName("a"), targetNode.Port()), usagetest.Node(nodeName("b"), runnerNode.Port()), usagetest.Node(nodeName("c"), idleNode.Port()))
	e.r.Kubelet = kubeletClient(t, pki.CAPEM)
	e.r.APIReader = e.managerReader()

	run := e.redisRun("kubelet", 1)
	run.Spec.Target.Redis = &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin,
		Replicas: ptr.To[int32](1), Sentinels: ptr.To[int32](3)}
	run = e.startedRun(run)
	for _, p := range e.statefulSetPods(run, "redis-master", nodeName("a")) {
		targetNode.Host(p.Name, map[string]float64{"redis": 0.40, "redis-role": 0.01}, 50)
	}
	for _, p := range e.statefulSetPods(run, "redis-replica", nodeName("a")) {
		targetNode.Host(p.Name, map[string]float64{"redis": 0.47, "redis-role": 0.01}, 60)
	}
	for _, p := range e.statefulSetPods(run, "redis-sentinel", nodeName("a")) {
		targetNode.Host(p.Name, map[string]float64{"sentinel": 0.02}, 10)
	}
	runnerNode.Host(e.runnerPodOn(run, 0, nodeName("b")).Name, map[string]float64{"k6": 1.5}, 200)

	// Reconciles closer together than a poll do not scrape again.
	for range 3 {
		e.clock.Step(5 * time.Second)
		e.reconcile(run.Name)
		e.reconcile(run.Name)
	}
	u := e.usageStoreOf(run)
	master := u.Samples["redis-master"][targetName(run, "redis-master")+"-0"]
	if master == nil || master.N != 2 || master.Source != usage.SourceKubelet {
		t.Fatalf("master samples after 3 scrapes (the first a baseline): %+v in %+v", master, u.Samples)
	}
	if len(u.Samples["sentinel"]) != 3 || u.Samples["runner"] == nil || u.Samples["runner"][runner.JobName(prefix(run, run.Generation))+"-0-x"].N != 1 {
		t.Fatalf("samples %+v (the runner's kubelet failed once)", u.Samples)
	}
	if len(u.Kubelet.Counters) != 1*2+1*2+3+1 || len(u.Kubelet.Errors) != 0 {
		t.Fatalf("kubelet state %+v", u.Kubelet)
	}
	if !e.hasEvent("KubeletMetricsFailed") {
		t.Fatalf("no KubeletMetricsFailed Event: %q", e.events)
	}
	// the newest sample of each pod, live for the run dashboard (liveusage.go)
	masterPod := targetName(run, "redis-master") + "-0"
	if got := testutil.ToFloat64(e.r.History.live.cpu.WithLabelValues(e.ns, run.Name, "redis-master", masterPod)); got < 0.409 || got > 0.411 {
		t.Errorf("live CPU of %s: %v, want 0.41", masterPod, got)
	}
	if got := testutil.ToFloat64(e.r.History.live.memory.WithLabelValues(e.ns, run.Name, "redis-master", masterPod)); got != 100<<20 {
		t.Errorf("live memory of %s: %v, want %d", masterPod, got, 100<<20)
	}

	// A restarted operator continues from the counters in the ConfigMap: its first scrape
	// is already a sample.
	kubelet, reader := e.r.Kubelet, e.r.APIReader
	e.r = e.reconciler(k8sClient)
	e.r.Kubelet, e.r.APIReader = kubelet, reader
	e.clock.Step(5 * time.Second)
	e.reconcile(run.Name)
	if got := e.usageStoreOf(run).Samples["redis-master"][targetName(run, "redis-master")+"-0"].N; got != 3 {
		t.Fatalf("master samples after a restart: %d, want 3", got)
	}

	e.finishRunner(run, 0, 100)
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	e.reconcile(run.Name) // a finished run: History.Observe
	if n := testutil.CollectAndCount(e.r.History.live.cpu); n != 0 {
		t.Errorf("%d live CPU series after the run finished, want none", n)
	}
	want := map[string]v1alpha1.ResourceUsage{
		"redis-master":  {Role: "redis-master", Pods: 1, CPUAvgCores: 0.41, CPUMaxCores: 0.41, MemoryAvgBytes: 100 << 20, MemoryMaxBytes: 100 << 20, Source: usage.SourceKubelet},
		"redis-replica": {Role: "redis-replica", Pods: 1, CPUAvgCores: 0.48, CPUMaxCores: 0.48, MemoryAvgBytes: 120 << 20, MemoryMaxBytes: 120 << 20, Source: usage.SourceKubelet},
		"sentinel":      {Role: "sentinel", Pods: 3, CPUAvgCores: 0.02, CPUMaxCores: 0.02, MemoryAvgBytes: 10 << 20, MemoryMaxBytes: 10 << 20, Source: usage.SourceKubelet},
		"runner":        {Role: "runner", Pods: 1, CPUAvgCores: 1.5, CPUMaxCores: 1.5, MemoryAvgBytes: 200 << 20, MemoryMaxBytes: 200 << 20, Source: usage.SourceKubelet},
	}
	if len(run.Status.Resources) != len(want) {
		t.Fatalf("status.resources %+v", run.Status.Resources)
	}
	for _, got := range run.Status.Resources {
		if got != want[got.Role] {
			t.Errorf("status.resources %s: %+v, want %+v", got.Role, got, want[got.Role])
		}
	}
	var report corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: run.Status.Report.ConfigMapName}, &report); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| redis-master | 1 | 0.41 | 0.41 | 100.0 | 100.0 | kubelet |", "| redis-replica | 1 | 0.48 |", "| runner | 1 | 1.50 |"} {
		if !strings.Contains(report.Data["report.md"], row) {
			t.Errorf("report.md without %q:\n%s", row, report.Data["report.md"])
		}
	}
	if requests, bad := targetNode.Stats(); bad != 0 || requests < 4 {
		t.Errorf("target node: %d scrapes, %d without the bearer token", requests, bad)
	}
	if requests, _ := idleNode.Stats(); requests != 0 {
		t.Errorf("a node without pods of the run was scraped %d times", requests)
	}
}

// TestMetricsAPIWinsOverKubelet: where metrics.k8s.io is served (a stand-in CRD here), its
// PodMetrics are used and no kubelet is scraped.
func TestMetricsAPIWinsOverKubelet(t *testing.T) {
	needEnvtest(t)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "pods.metrics.k8s.io", Annotations: map[string]string{"api-approved.kubernetes.io": "unapproved, test stand-in for metrics-server"}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "metrics.k8s.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "pods", Singular: "podmetrics", Kind: "PodMetrics", ListKind: "PodMetricsList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = envtest.UninstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}})
	})
	// A client of its own: the suite's shared one keeps not knowing metrics.k8s.io.
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(podMetricsGVK)
		return c.List(context.Background(), list) == nil
	})

	e := newEnv(t)
	pki := usagetest.NewPKI(t)
	k := usagetest.NewKubelet(t, pki, e.ns)
	e.createNodes(usagetest.Node(e.ns+"-a", k.Port()))
	e.r = e.reconciler(c)
	e.r.Kubelet = kubeletClient(t, pki.CAPEM)
	run := e.startedRun(e.redisRun("metrics", 1))
	for _, p := range append(e.statefulSetPods(run, "redis-master", e.ns+"-a"), e.runnerPodOn(run, 0, e.ns+"-a")) {
		k.Host(p.Name, map[string]float64{"c": 3}, 1)
		cpu := map[string]string{"redis-master": "700m", "runner": "2"}[p.Labels[naming.LabelComponent]]
		pm := &unstructured.Unstructured{Object: map[string]any{
			"timestamp": "2026-11-21T12:00:00Z", "window": "15s",
			"containers": []any{map[string]any{"name": "c", "usage": map[string]any{"cpu": cpu, "memory": "64Mi"}}},
		}}
		pm.SetGroupVersionKind(podMetricsGVK.GroupVersion().WithKind("PodMetrics"))
		pm.SetName(p.Name)
		pm.SetNamespace(e.ns)
		pm.SetLabels(p.Labels)
		if err := c.Create(e.ctx, pm); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		e.clock.Step(5 * time.Second)
		e.reconcile(run.Name)
	}
	e.finishRunner(run, 0, 100)
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	got := map[string]v1alpha1.ResourceUsage{}
	for _, u := range run.Status.Resources {
		got[u.Role] = u
	}
	if m := got["redis-master"]; m.Source != usage.SourceMetricsAPI || m.CPUAvgCores != 0.7 || m.MemoryMaxBytes != 64<<20 {
		t.Errorf("redis-master %+v", m)
	}
	if r := got["runner"]; r.Source != usage.SourceMetricsAPI || r.CPUAvgCores != 2 {
		t.Errorf("runner %+v", r)
	}
	if requests, _ := k.Stats(); requests != 0 {
		t.Errorf("kubelet scraped %d times although metrics.k8s.io is served", requests)
	}
}
