package usage

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/redisrole"
	"github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/usage/usagetest"
)

// kubeletClient is the operator's kubelet client as in a pod: a bearer token and the CA.
func kubeletClient(t *testing.T, caPEM []byte, opts KubeletOptions) *KubeletMetrics {
	t.Helper()
	k, err := NewKubeletMetrics(usagetest.RESTConfig(caPEM), opts)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// podMetrics is a metrics.k8s.io PodMetrics item.
func podMetrics(name, role, cpu, mem string) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{
		"containers": []any{map[string]any{"name": "c", "usage": map[string]any{"cpu": cpu, "memory": mem}}},
	}}
	u.SetName(name)
	u.SetLabels(map[string]string{naming.LabelComponent: role})
	return u
}

func TestSamples(t *testing.T) {
	s := Samples{}
	s.AddPodMetrics([]unstructured.Unstructured{podMetrics("m-0", "redis-master", "500m", "100Mi"), podMetrics("r-0", "redis-replica", "1", "50Mi")})
	s.AddPodMetrics([]unstructured.Unstructured{podMetrics("m-0", "redis-master", "1500m", "300Mi"), podMetrics("r-1", "redis-replica", "3", "150Mi")})
	got := s.Summarize()
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

// TestRunners: the runners' own cgroup reports, CPU averaged over the load.
func TestRunners(t *testing.T) {
	if _, ok := Runners([]*runner.Usage{nil, {WallSeconds: 0}}); ok {
		t.Fatal("usage without reports")
	}
	u, ok := Runners([]*runner.Usage{{CPUSeconds: 12, WallSeconds: 10, MemoryPeakBytes: 100 << 20}, {CPUSeconds: 5, WallSeconds: 10, MemoryPeakBytes: 50 << 20}})
	if !ok || u.Pods != 2 || u.CPUAvgCores != 0.85 || u.CPUMaxCores != 1.2 || u.MemoryMaxBytes != 100<<20 || u.MemoryAvgBytes != 75<<20 || u.Source != SourceCgroup {
		t.Fatalf("%+v", u)
	}
}

// TestWithRunners: the runners' own reports give the runner role when no sample has it, and
// replace samples that cover fewer runner pods (TestMultiNode once saw 1 of 2 on a new node).
func TestWithRunners(t *testing.T) {
	two := []*runner.Usage{{CPUSeconds: 4, WallSeconds: 10}, {CPUSeconds: 6, WallSeconds: 10}}
	master := v1alpha1.ResourceUsage{Role: "redis-master", Pods: 1}
	if got := WithRunners([]v1alpha1.ResourceUsage{master}, two); len(got) != 2 || got[1].Role != "runner" || got[1].Pods != 2 || got[1].Source != SourceCgroup {
		t.Errorf("no runner samples: %+v", got)
	}
	one := v1alpha1.ResourceUsage{Role: "runner", Pods: 1, Source: SourceKubelet}
	if got := WithRunners([]v1alpha1.ResourceUsage{master, one}, two); len(got) != 2 || got[1].Pods != 2 || got[1].Source != SourceCgroup || got[0] != master {
		t.Errorf("1 of 2 runners sampled: %+v", got)
	}
	both := v1alpha1.ResourceUsage{Role: "runner", Pods: 2, Source: SourceKubelet}
	if got := WithRunners([]v1alpha1.ResourceUsage{both}, two); got[0] != both {
		t.Errorf("both sampled: %+v", got)
	}
	if got := WithRunners([]v1alpha1.ResourceUsage{one}, nil); got[0] != one {
		t.Errorf("no reports: %+v", got)
	}
}

// TestStoreRoundTrip: the usage ConfigMap's data gives the same Store back; unreadable data
// starts over.
func TestStoreRoundTrip(t *testing.T) {
	s := Decode(nil)
	s.Samples.AddPod("runner", "p", SourceKubelet, 1, 2)
	rate := 0.5
	s.Kubelet.Counters = map[string]*CPUReading{"p/c": {Seconds: 3, Ms: 4, Rate: &rate}}
	s.SampledAt = time.Unix(1700000000, 0)
	back := Decode(s.Encode())
	if back.Samples["runner"]["p"].N != 1 || *back.Kubelet.Counters["p/c"].Rate != 0.5 || !back.SampledAt.Equal(s.SampledAt) {
		t.Fatalf("%+v", back)
	}
	if bad := Decode(map[string]string{"samples.json": "{", "sampledAt": "x"}); bad.Samples == nil || !bad.SampledAt.IsZero() {
		t.Fatalf("%+v", bad)
	}
}

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
	key := ContainerKey{namespace: "kube-system", pod: "coredns-85bf56c4c-khg85", container: "coredns"}
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
	if err != nil || got[ContainerKey{"n", "p", "a"}].cpuMs != now.UnixMilli() {
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
		if got := Role(tc.labels); got != tc.want {
			t.Errorf("Role(%v) = %q, want %q", tc.labels, got, tc.want)
		}
	}
}

// TestKubeletPodSample: CPU is the counter's delta over its timestamps' delta; the first
// reading, a restart and a container without any rate yet give no sample; a container
// without a newer reading counts with its last rate.
func TestKubeletPodSample(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m-0", Namespace: "n",
		Labels: map[string]string{naming.LabelComponent: "redis-replica", redisrole.Label: "master"}}}
	u := &Store{Samples: Samples{}, Kubelet: KubeletState{Counters: map[string]*CPUReading{}}}
	scrape := func(text string) {
		t.Helper()
		samples, err := parseResourceMetrics(strings.NewReader(text), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		u.addKubeletPod(pod, samples, map[string]bool{})
	}
	n := func() int {
		if p := u.Samples["redis-master"]["m-0"]; p != nil {
			return p.N
		}
		return 0
	}
	cs := []usagetest.Container{{Pod: "m-0", Container: "redis", CPU: 100, Mem: 100 << 20, Start: 1}, {Pod: "m-0", Container: "redis-role", CPU: 1, Mem: 10 << 20, Start: 1}}
	other := usagetest.Container{Pod: "m-1", Container: "redis", CPU: 5, Mem: 1 << 30, Start: 1}
	scrape(usagetest.MetricsText("n", append(cs, other), 1_000_000))
	if n() != 0 {
		t.Fatal("sample from the first reading")
	}
	cs[0].CPU, cs[1].CPU = 104, 1.1 // 10 s later: 0.4 + 0.01 cores
	scrape(usagetest.MetricsText("n", cs, 1_010_000))
	p := u.Samples["redis-master"]["m-0"]
	if n() != 1 || math.Abs(p.CPUSum-0.41) > 1e-9 || p.MemMax != 110<<20 || p.Source != SourceKubelet {
		t.Fatalf("after two readings %+v", p)
	}
	// The sidecar's reading is not newer: its last rate counts.
	cs[0].CPU = 110
	cs[1].LagMs = -10_000
	scrape(usagetest.MetricsText("n", cs, 1_020_000))
	if n() != 2 || math.Abs(p.CPUMax-0.61) > 1e-9 {
		t.Fatalf("with a stale container %+v", p)
	}
	// Nothing newer at all: no sample.
	scrape(usagetest.MetricsText("n", cs, 1_020_000))
	if n() != 2 {
		t.Fatalf("sample without a new reading %+v", p)
	}
	// Redis restarted: its counter starts over, the next sample waits for a second reading.
	cs[0].CPU, cs[0].Start, cs[1].LagMs, cs[1].CPU = 0.5, 2, 0, 1.3
	scrape(usagetest.MetricsText("n", cs, 1_030_000))
	if n() != 2 {
		t.Fatalf("sample across a restart %+v", p)
	}
	cs[0].CPU, cs[1].CPU = 1.5, 1.4
	scrape(usagetest.MetricsText("n", cs, 1_040_000))
	if n() != 3 || math.Abs(p.CPUSum-(0.41+0.61+0.11)) > 1e-9 {
		t.Fatalf("after the restart %+v", p)
	}
	// The durable readings are JSON (the usage ConfigMap) and give the same rates back.
	b, _ := json.Marshal(u.Kubelet)
	var back KubeletState
	if err := json.Unmarshal(b, &back); err != nil || back.Counters["m-0/redis"].Ms != 1_040_000 || *back.Counters["m-0/redis"].Rate != 0.1 {
		t.Fatalf("kubelet state %s: %v", b, err)
	}
}

// TestKubeletTLS: the kubelet's serving certificate is verified against the cluster CA
// (the REST config's), or a configured CA file, or not at all when told so.
func TestKubeletTLS(t *testing.T) {
	pki, otherCA := usagetest.NewPKI(t), usagetest.NewPKI(t)
	k := usagetest.NewKubelet(t, pki, "n")
	k.Host("p", map[string]float64{"c": 1}, 1)
	reader := fake.NewClientBuilder().WithObjects(usagetest.Node("n1", k.Port())).Build()
	ctx := context.Background()
	if got, err := kubeletClient(t, pki.CAPEM, KubeletOptions{}).scrape(ctx, reader, "n1"); err != nil || len(got) != 2 {
		t.Fatalf("cluster CA: %v %v", got, err)
	}
	if _, err := kubeletClient(t, otherCA.CAPEM, KubeletOptions{}).scrape(ctx, reader, "n1"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("wrong CA accepted: %v", err)
	}
	caFile := filepath.Join(t.TempDir(), "kubelet-ca.crt")
	if err := os.WriteFile(caFile, pki.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := kubeletClient(t, otherCA.CAPEM, KubeletOptions{CAFile: caFile}).scrape(ctx, reader, "n1"); err != nil {
		t.Fatalf("--kubelet-certificate-authority: %v", err)
	}
	if _, err := kubeletClient(t, otherCA.CAPEM, KubeletOptions{InsecureSkipTLSVerify: true}).scrape(ctx, reader, "n1"); err != nil {
		t.Fatalf("--kubelet-insecure-tls: %v", err)
	}
	if requests, bad := k.Stats(); bad != 0 || requests != 3 {
		t.Fatalf("%d requests, %d without the bearer token", requests, bad)
	}
	if _, err := kubeletClient(t, pki.CAPEM, KubeletOptions{}).scrape(ctx, reader, "missing"); err == nil {
		t.Fatal("scraped a node that does not exist")
	}
	if u, err := kubeletURL(&corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-1"}}}}); err != nil || u != "https://node-1:10250/metrics/resource" {
		t.Fatalf("kubeletURL %q %v", u, err)
	}
}
