package controllers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"math"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/redisrole"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestParseResourceMetrics parses a real /metrics/resource of kubelet v1.34.4 (our local
// cluster): one container; node, pod-level and scrape-error lines are not containers.
func TestParseResourceMetrics(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "kubelet-metrics-resource.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	got, err := parseResourceMetrics(f, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	key := containerKey{namespace: "kube-system", pod: "coredns-85bf56c4c-khg85", container: "coredns"}
	if len(got) != 1 || got[key] == nil {
		t.Fatalf("containers %+v", got)
	}
	c := got[key]
	if !c.hasCPU || c.cpu != 0.067866477 || c.cpuMs != 1795313023234 || c.memory != 2.899968e+07 || c.start != 1.795313018256743e+09 {
		t.Fatalf("coredns %+v", *c)
	}
	// Without timestamps the scrape time stands in.
	now := time.UnixMilli(1700000000123)
	got, err = parseResourceMetrics(strings.NewReader("container_cpu_usage_seconds_total{container=\"a\",namespace=\"n\",pod=\"p\"} 2\n"), now)
	if err != nil || got[containerKey{"n", "p", "a"}].cpuMs != now.UnixMilli() {
		t.Fatalf("untimed: %+v %v", got, err)
	}
	if _, err := parseResourceMetrics(strings.NewReader("container_cpu_usage_seconds_total{ 1\n"), now); err == nil {
		t.Fatal("garbage parsed")
	}
}

// TestUsageRole: roles as users read them, following a failover and the redis-operator.
func TestUsageRole(t *testing.T) {
	c := naming.LabelComponent
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{c: "hetu"}, "hetu"},
		{map[string]string{c: "runner"}, "runner"},
		{map[string]string{c: "redis-master"}, "redis-master"},
		{map[string]string{c: "redis-replica", redisrole.Label: "master"}, "redis-master"}, // promoted by a failover
		{map[string]string{c: "redis-master", redisrole.Label: "replica"}, "redis-replica"},
		{map[string]string{c: "redis", "role": "standalone"}, "redis-master"},
		{map[string]string{c: "redis", "role": "replication", "redis-role": "master"}, "redis-master"},
		{map[string]string{c: "redis", "role": "replication", "redis-role": "slave"}, "redis-replica"},
		{map[string]string{c: "redis", "role": "sentinel"}, "sentinel"},
		{map[string]string{}, "target"},
	} {
		if got := usageRole(tc.labels); got != tc.want {
			t.Errorf("usageRole(%v) = %q, want %q", tc.labels, got, tc.want)
		}
	}
}

// metricsText renders container readings the way the kubelet does.
func metricsText(ns string, cs []fakeContainer, ms int64) string {
	cs = slices.Clone(cs)
	for i := range cs {
		if cs[i].ns == "" {
			cs[i].ns = ns
		}
	}
	var b strings.Builder
	b.WriteString("# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds\n# TYPE container_cpu_usage_seconds_total counter\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "container_cpu_usage_seconds_total{container=%q,namespace=%q,pod=%q} %g %d\n", c.container, c.ns, c.pod, c.cpu, ms+c.lagMs)
	}
	b.WriteString("# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes\n# TYPE container_memory_working_set_bytes gauge\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "container_memory_working_set_bytes{container=%q,namespace=%q,pod=%q} %g %d\n", c.container, c.ns, c.pod, c.mem, ms)
	}
	b.WriteString("# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds\n# TYPE container_start_time_seconds gauge\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "container_start_time_seconds{container=%q,namespace=%q,pod=%q} %g\n", c.container, c.ns, c.pod, c.start)
	}
	b.WriteString("# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds\n# TYPE node_cpu_usage_seconds_total counter\n")
	fmt.Fprintf(&b, "node_cpu_usage_seconds_total 14989.977176777 %d\n", ms)
	b.WriteString("# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise\n# TYPE resource_scrape_error gauge\nresource_scrape_error 0\n")
	return b.String()
}

// fakeContainer is one container a fake kubelet reports.
type fakeContainer struct {
	ns, pod, container string  // ns: metricsText's namespace when empty
	cpu                float64 // counter now
	rate               float64 // cores: the counter grows rate × the interval per scrape
	mem                float64
	start              float64
	lagMs              int64 // the CPU reading's timestamp lags the scrape's by this much
}

// TestKubeletPodSample: CPU is the counter's delta over its timestamps' delta; the first
// reading, a restart and a container without any rate yet give no sample; a container
// without a newer reading counts with its last rate.
func TestKubeletPodSample(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m-0", Namespace: "n",
		Labels: map[string]string{naming.LabelComponent: "redis-replica", redisrole.Label: "master"}}}
	u := &usageStore{samples: usageSamples{}, kubelet: kubeletState{Counters: map[string]*cpuReading{}}}
	scrape := func(text string) {
		t.Helper()
		samples, err := parseResourceMetrics(strings.NewReader(text), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		u.addKubeletPod(pod, samples, map[string]bool{})
	}
	n := func() int {
		if p := u.samples["redis-master"]["m-0"]; p != nil {
			return p.N
		}
		return 0
	}
	cs := []fakeContainer{{pod: "m-0", container: "redis", cpu: 100, mem: 100 << 20, start: 1}, {pod: "m-0", container: "redis-role", cpu: 1, mem: 10 << 20, start: 1}}
	other := fakeContainer{pod: "m-1", container: "redis", cpu: 5, mem: 1 << 30, start: 1}
	scrape(metricsText("n", append(cs, other), 1_000_000))
	if n() != 0 {
		t.Fatal("sample from the first reading")
	}
	cs[0].cpu, cs[1].cpu = 104, 1.1 // 10 s later: 0.4 + 0.01 cores
	scrape(metricsText("n", cs, 1_010_000))
	p := u.samples["redis-master"]["m-0"]
	if n() != 1 || math.Abs(p.CPUSum-0.41) > 1e-9 || p.MemMax != 110<<20 || p.Source != sourceKubelet {
		t.Fatalf("after two readings %+v", p)
	}
	// The sidecar's reading is not newer: its last rate counts.
	cs[0].cpu = 110
	cs[1].lagMs = -10_000
	scrape(metricsText("n", cs, 1_020_000))
	if n() != 2 || math.Abs(p.CPUMax-0.61) > 1e-9 {
		t.Fatalf("with a stale container %+v", p)
	}
	// Nothing newer at all: no sample.
	scrape(metricsText("n", cs, 1_020_000))
	if n() != 2 {
		t.Fatalf("sample without a new reading %+v", p)
	}
	// Redis restarted: its counter starts over, the next sample waits for a second reading.
	cs[0].cpu, cs[0].start, cs[1].lagMs, cs[1].cpu = 0.5, 2, 0, 1.3
	scrape(metricsText("n", cs, 1_030_000))
	if n() != 2 {
		t.Fatalf("sample across a restart %+v", p)
	}
	cs[0].cpu, cs[1].cpu = 1.5, 1.4
	scrape(metricsText("n", cs, 1_040_000))
	if n() != 3 || math.Abs(p.CPUSum-(0.41+0.61+0.11)) > 1e-9 {
		t.Fatalf("after the restart %+v", p)
	}
	// The durable readings are JSON (the usage ConfigMap) and give the same rates back.
	b, _ := json.Marshal(u.kubelet)
	var back kubeletState
	if err := json.Unmarshal(b, &back); err != nil || back.Counters["m-0/redis"].Ms != 1_040_000 || *back.Counters["m-0/redis"].Rate != 0.1 {
		t.Fatalf("kubelet state %s: %v", b, err)
	}
}

// kubeletPKI is a CA and a kubelet serving certificate it signed for 127.0.0.1, like the
// local cluster's (hack/local-cluster: kubelet-serving, IP SANs, signed by the cluster CA).
type kubeletPKI struct {
	caPEM   []byte
	serving tls.Certificate
}

// newKubeletPKI creates a CA and a serving certificate.
func newKubeletPKI(t *testing.T) kubeletPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kubelet"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return kubeletPKI{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		serving: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}
}

// fakeKubelet serves /metrics/resource over TLS for the containers it hosts; every scrape
// is 10 s after the previous one and the counters grow by their rates.
type fakeKubelet struct {
	srv        *httptest.Server
	ns         string
	mu         sync.Mutex
	containers []fakeContainer
	ms         int64
	requests   int
	badAuth    int
	failFirst  int // answer this many scrapes with 503
}

// newFakeKubelet starts a fake kubelet with pki's serving certificate.
func newFakeKubelet(t *testing.T, pki kubeletPKI, ns string) *fakeKubelet {
	k := &fakeKubelet{ns: ns, ms: 1795313023234}
	k.srv = httptest.NewUnstartedServer(http.HandlerFunc(k.serve))
	k.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.serving}, MinVersion: tls.VersionTLS12}
	k.srv.StartTLS()
	t.Cleanup(k.srv.Close)
	return k
}

// serve is the kubelet's /metrics/resource behind bearer-token authentication.
func (k *fakeKubelet) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.requests++
	if r.Header.Get("Authorization") != "Bearer kubelet-test-token" {
		k.badAuth++
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if r.URL.Path != "/metrics/resource" {
		http.NotFound(w, r)
		return
	}
	if k.failFirst > 0 {
		k.failFirst--
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	k.ms += 10_000
	for i := range k.containers {
		k.containers[i].cpu += k.containers[i].rate * 10
	}
	coredns := fakeContainer{ns: "kube-system", pod: "coredns-85bf56c4c-khg85", container: "coredns", cpu: 0.07, mem: 2.9e7, start: 1}
	_, _ = fmt.Fprint(w, metricsText(k.ns, append(slices.Clone(k.containers), coredns), k.ms))
}

// stats are the requests served and those without the expected bearer token.
func (k *fakeKubelet) stats() (requests, badAuth int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.requests, k.badAuth
}

// host puts containers of a pod on this kubelet.
func (k *fakeKubelet) host(pod string, rates map[string]float64, memMiB float64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range slices.Sorted(maps.Keys(rates)) {
		k.containers = append(k.containers, fakeContainer{pod: pod, container: c, cpu: 1, rate: rates[c], mem: memMiB * (1 << 20), start: 1.7e9})
	}
}

// port is the fake kubelet's port.
func (k *fakeKubelet) port() int32 { return int32(k.srv.Listener.Addr().(*net.TCPAddr).Port) }

// kubeletClient is the operator's kubelet client as in a pod: a bearer token and the CA.
func kubeletClient(t *testing.T, caPEM []byte, opts KubeletOptions) *KubeletMetrics {
	t.Helper()
	k, err := NewKubeletMetrics(&rest.Config{Host: "https://apiserver.invalid", BearerToken: "kubelet-test-token",
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM, ServerName: "kubernetes.default.svc"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testNode is a Node whose kubelet is at 127.0.0.1:port.
func testNode(name string, port int32) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "localhost"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: port}},
	}}
}

// TestKubeletTLS: the kubelet's serving certificate is verified against the cluster CA
// (the REST config's), or a configured CA file, or not at all when told so.
func TestKubeletTLS(t *testing.T) {
	pki, otherCA := newKubeletPKI(t), newKubeletPKI(t)
	k := newFakeKubelet(t, pki, "n")
	k.host("p", map[string]float64{"c": 1}, 1)
	reader := fake.NewClientBuilder().WithObjects(testNode("n1", k.port())).Build()
	ctx := context.Background()
	if got, err := kubeletClient(t, pki.caPEM, KubeletOptions{}).scrape(ctx, reader, "n1"); err != nil || len(got) != 2 {
		t.Fatalf("cluster CA: %v %v", got, err)
	}
	if _, err := kubeletClient(t, otherCA.caPEM, KubeletOptions{}).scrape(ctx, reader, "n1"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("wrong CA accepted: %v", err)
	}
	caFile := filepath.Join(t.TempDir(), "kubelet-ca.crt")
	if err := os.WriteFile(caFile, pki.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := kubeletClient(t, otherCA.caPEM, KubeletOptions{CAFile: caFile}).scrape(ctx, reader, "n1"); err != nil {
		t.Fatalf("--kubelet-certificate-authority: %v", err)
	}
	if _, err := kubeletClient(t, otherCA.caPEM, KubeletOptions{InsecureSkipTLSVerify: true}).scrape(ctx, reader, "n1"); err != nil {
		t.Fatalf("--kubelet-insecure-tls: %v", err)
	}
	if requests, bad := k.stats(); bad != 0 || requests != 3 {
		t.Fatalf("%d requests, %d without the bearer token", requests, bad)
	}
	if _, err := kubeletClient(t, pki.caPEM, KubeletOptions{}).scrape(ctx, reader, "missing"); err == nil {
		t.Fatal("scraped a node that does not exist")
	}
	if u, err := kubeletURL(&corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-1"}}}}); err != nil || u != "https://node-1:10250/metrics/resource" {
		t.Fatalf("kubeletURL %q %v", u, err)
	}
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
// it also checks that the role grants what the kubelet's webhook authorizer asks for.
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
	// What the kubelet asks the API server when the manager scrapes /metrics/resource.
	nodeMetrics := authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "metrics", Name: "any-node"}
	waitFor(e.t, func() bool { return allowed(nodeMetrics) })
	for _, denied := range []authorizationv1.ResourceAttributes{
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
	pki := newKubeletPKI(t)
	targetNode, runnerNode, idleNode := newFakeKubelet(t, pki, e.ns), newFakeKubelet(t, pki, e.ns), newFakeKubelet(t, pki, e.ns)
	runnerNode.failFirst = 1
	nodeName := func(s string) string { return e.ns + "-" + s }
	e.createNodes(testNode(nodeName("a"), targetNode.port()), testNode(nodeName("b"), runnerNode.port()), testNode(nodeName("c"), idleNode.port()))
	e.r.Kubelet = kubeletClient(t, pki.caPEM, KubeletOptions{})
	e.r.APIReader = e.managerReader()

	run := e.redisRun("kubelet", 1)
	run.Spec.Target.Redis = &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin,
		Replicas: ptr.To[int32](1), Sentinels: ptr.To[int32](3)}
	run = e.startedRun(run)
	for _, p := range e.statefulSetPods(run, "redis-master", nodeName("a")) {
		targetNode.host(p.Name, map[string]float64{"redis": 0.40, "redis-role": 0.01}, 50)
	}
	for _, p := range e.statefulSetPods(run, "redis-replica", nodeName("a")) {
		targetNode.host(p.Name, map[string]float64{"redis": 0.47, "redis-role": 0.01}, 60)
	}
	for _, p := range e.statefulSetPods(run, "redis-sentinel", nodeName("a")) {
		targetNode.host(p.Name, map[string]float64{"sentinel": 0.02}, 10)
	}
	runnerNode.host(e.runnerPodOn(run, 0, nodeName("b")).Name, map[string]float64{"k6": 1.5}, 200)

	// Reconciles closer together than a poll do not scrape again.
	for range 3 {
		e.clock.Step(5 * time.Second)
		e.reconcile(run.Name)
		e.reconcile(run.Name)
	}
	u := e.usageStoreOf(run)
	master := u.samples["redis-master"][targetName(run, "redis-master")+"-0"]
	if master == nil || master.N != 2 || master.Source != sourceKubelet {
		t.Fatalf("master samples after 3 scrapes (the first a baseline): %+v in %+v", master, u.samples)
	}
	if len(u.samples["sentinel"]) != 3 || u.samples["runner"] == nil || u.samples["runner"][runner.JobName(prefix(run, run.Generation))+"-0-x"].N != 1 {
		t.Fatalf("samples %+v (the runner's kubelet failed once)", u.samples)
	}
	if len(u.kubelet.Counters) != 1*2+1*2+3+1 || len(u.kubelet.Errors) != 0 {
		t.Fatalf("kubelet state %+v", u.kubelet)
	}
	if !e.hasEvent("KubeletMetricsFailed") {
		t.Fatalf("no KubeletMetricsFailed Event: %q", e.events)
	}

	// A restarted operator continues from the counters in the ConfigMap: its first scrape
	// is already a sample.
	kubelet, reader := e.r.Kubelet, e.r.APIReader
	e.r = e.reconciler(k8sClient)
	e.r.Kubelet, e.r.APIReader = kubelet, reader
	e.clock.Step(5 * time.Second)
	e.reconcile(run.Name)
	if got := e.usageStoreOf(run).samples["redis-master"][targetName(run, "redis-master")+"-0"].N; got != 3 {
		t.Fatalf("master samples after a restart: %d, want 3", got)
	}

	e.finishRunner(run, 0, 100)
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	want := map[string]v1alpha1.ResourceUsage{
		"redis-master":  {Role: "redis-master", Pods: 1, CPUAvgCores: 0.41, CPUMaxCores: 0.41, MemoryAvgBytes: 100 << 20, MemoryMaxBytes: 100 << 20, Source: sourceKubelet},
		"redis-replica": {Role: "redis-replica", Pods: 1, CPUAvgCores: 0.48, CPUMaxCores: 0.48, MemoryAvgBytes: 120 << 20, MemoryMaxBytes: 120 << 20, Source: sourceKubelet},
		"sentinel":      {Role: "sentinel", Pods: 3, CPUAvgCores: 0.02, CPUMaxCores: 0.02, MemoryAvgBytes: 10 << 20, MemoryMaxBytes: 10 << 20, Source: sourceKubelet},
		"runner":        {Role: "runner", Pods: 1, CPUAvgCores: 1.5, CPUMaxCores: 1.5, MemoryAvgBytes: 200 << 20, MemoryMaxBytes: 200 << 20, Source: sourceKubelet},
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
	if requests, bad := targetNode.stats(); bad != 0 || requests < 4 {
		t.Errorf("target node: %d scrapes, %d without the bearer token", requests, bad)
	}
	if requests, _ := idleNode.stats(); requests != 0 {
		t.Errorf("a node without pods of the run was scraped %d times", requests)
	}
}

// TestMetricsAPIWinsOverKubelet: where metrics.k8s.io is served (a stand-in CRD here), its
// PodMetrics are used and no kubelet is scraped.
func TestMetricsAPIWinsOverKubelet(t *testing.T) {
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
	pki := newKubeletPKI(t)
	k := newFakeKubelet(t, pki, e.ns)
	e.createNodes(testNode(e.ns+"-a", k.port()))
	e.r = e.reconciler(c)
	e.r.Kubelet = kubeletClient(t, pki.caPEM, KubeletOptions{})
	run := e.startedRun(e.redisRun("metrics", 1))
	for _, p := range append(e.statefulSetPods(run, "redis-master", e.ns+"-a"), e.runnerPodOn(run, 0, e.ns+"-a")) {
		k.host(p.Name, map[string]float64{"c": 3}, 1)
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
	if m := got["redis-master"]; m.Source != sourceMetricsAPI || m.CPUAvgCores != 0.7 || m.MemoryMaxBytes != 64<<20 {
		t.Errorf("redis-master %+v", m)
	}
	if r := got["runner"]; r.Source != sourceMetricsAPI || r.CPUAvgCores != 2 {
		t.Errorf("runner %+v", r)
	}
	if requests, _ := k.stats(); requests != 0 {
		t.Errorf("kubelet scraped %d times although metrics.k8s.io is served", requests)
	}
}
