package usage

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KubeletOptions configure how the operator reaches the kubelets' resource metrics endpoint.
type KubeletOptions struct {
	// CAFile verifies the kubelets' serving certificates; empty means the cluster CA of the
	// REST config (in a pod: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt).
	CAFile string
	// InsecureSkipTLSVerify skips that verification, for kubelets with self-signed serving
	// certificates (like metrics-server's --kubelet-insecure-tls).
	InsecureSkipTLSVerify bool
	// Timeout bounds one scrape of one kubelet (default 5s).
	Timeout time.Duration
	// Tokens, when set, is the only credential sent to the kubelets (a dedicated identity's
	// short-lived tokens, ServiceAccountTokens): the REST config's credentials (the manager's
	// own token or client certificate) are then never sent to the address a Node reports.
	Tokens TokenSource
}

// TokenSource returns the bearer token of the next kubelet request.
type TokenSource interface {
	// Token is a valid bearer token.
	Token(ctx context.Context) (string, error)
}

// KubeletMetrics reads CPU and memory of pods from the kubelets' /metrics/resource, the
// endpoint metrics-server itself scrapes, for clusters without metrics.k8s.io.
type KubeletMetrics struct {
	client *http.Client
}

// NewKubeletMetrics builds the kubelet client from the manager's REST config: unless opts
// say otherwise, its TLS settings (the cluster CA verifies the kubelets' serving
// certificates) and, without opts.Tokens, its credentials (which the kubelet's webhook
// authorizes as nodes/metrics get); with opts.Tokens, only those tokens.
func NewKubeletMetrics(cfg *rest.Config, opts KubeletOptions) (*KubeletMetrics, error) {
	kc := rest.CopyConfig(cfg)
	if opts.Tokens != nil {
		kc = rest.AnonymousClientConfig(cfg) // TLS settings only: no token, no client certificate
	}
	kc.ServerName = "" // the API server's name; a kubelet is reached by its node address
	switch {
	case opts.InsecureSkipTLSVerify:
		kc.Insecure, kc.CAFile, kc.CAData = true, "", nil
	case opts.CAFile != "":
		kc.CAFile, kc.CAData = opts.CAFile, nil
	}
	rt, err := rest.TransportFor(kc)
	if err != nil {
		return nil, fmt.Errorf("kubelet client: %w", err)
	}
	if opts.Tokens != nil {
		rt = &tokenTransport{next: rt, tokens: opts.Tokens}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &KubeletMetrics{client: &http.Client{Transport: rt, Timeout: timeout}}, nil
}

// tokenTransport sends each request with the token source's bearer token.
type tokenTransport struct {
	next   http.RoundTripper
	tokens TokenSource
}

// RoundTrip implements http.RoundTripper.
func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	token, err := t.tokens.Token(req.Context())
	if err != nil {
		return nil, fmt.Errorf("kubelet reader token: %w", err)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+token)
	return t.next.RoundTrip(req)
}

// kubeletURL is the resource metrics URL of a node: its InternalIP (else ExternalIP, else
// Hostname) and the kubelet port it reports (10250 when unset).
func kubeletURL(node *corev1.Node) (string, error) {
	var addr string
	for _, typ := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeHostName} {
		for _, a := range node.Status.Addresses {
			if a.Type == typ && a.Address != "" && addr == "" {
				addr = a.Address
			}
		}
	}
	if addr == "" {
		return "", fmt.Errorf("node %s has no address", node.Name)
	}
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		port = 10250
	}
	return "https://" + net.JoinHostPort(addr, strconv.Itoa(int(port))) + "/metrics/resource", nil
}

// scrape reads one node's resource metrics.
func (k *KubeletMetrics) scrape(ctx context.Context, reader client.Reader, nodeName string) (map[ContainerKey]*ContainerSample, error) {
	var node corev1.Node
	if err := reader.Get(ctx, client.ObjectKey{Name: nodeName}, &node); err != nil {
		return nil, err
	}
	url, err := kubeletURL(&node)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	samples, err := parseResourceMetrics(io.LimitReader(resp.Body, 64<<20), time.Now())
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return samples, nil
}

// ContainerKey names one container of one pod.
type ContainerKey struct {
	namespace, pod, container string
}

// ContainerSample is one container's reading from /metrics/resource.
type ContainerSample struct {
	// cpu is container_cpu_usage_seconds_total, a counter in core-seconds.
	cpu float64
	// cpuMs is the counter's timestamp in Unix milliseconds.
	cpuMs int64
	// hasCPU tells whether the counter was present.
	hasCPU bool
	// memory is container_memory_working_set_bytes.
	memory float64
	// start is container_start_time_seconds; a new value means a restarted container.
	start float64
}

// parseResourceMetrics reads the kubelet's resource metrics (Prometheus text format) into
// one sample per container. Lines without a timestamp get now.
func parseResourceMetrics(r io.Reader, now time.Time) (map[ContainerKey]*ContainerSample, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := map[ContainerKey]*ContainerSample{}
	each := func(name string, f func(*ContainerSample, *dto.Metric)) {
		fam := families[name]
		if fam == nil {
			return
		}
		for _, m := range fam.GetMetric() {
			var key ContainerKey
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "namespace":
					key.namespace = l.GetValue()
				case "pod":
					key.pod = l.GetValue()
				case "container":
					key.container = l.GetValue()
				}
			}
			if key.pod == "" || key.container == "" {
				continue
			}
			s := out[key]
			if s == nil {
				s = &ContainerSample{}
				out[key] = s
			}
			f(s, m)
		}
	}
	each("container_cpu_usage_seconds_total", func(s *ContainerSample, m *dto.Metric) {
		s.cpu, s.cpuMs, s.hasCPU = metricValue(m), m.GetTimestampMs(), true
		if s.cpuMs == 0 {
			s.cpuMs = now.UnixMilli()
		}
	})
	each("container_memory_working_set_bytes", func(s *ContainerSample, m *dto.Metric) { s.memory = metricValue(m) })
	each("container_start_time_seconds", func(s *ContainerSample, m *dto.Metric) { s.start = metricValue(m) })
	return out, nil
}

// metricValue is the value of a counter, gauge or untyped sample.
func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}

// Scrape is one node's scrape: its containers' readings, or why it failed.
type Scrape struct {
	// Samples are the node's container readings.
	Samples map[ContainerKey]*ContainerSample
	// Err is why the node could not be read.
	Err error
}

// ScrapeNodes reads the resource metrics of nodes concurrently, by node name.
func (k *KubeletMetrics) ScrapeNodes(ctx context.Context, reader client.Reader, nodes []string) map[string]*Scrape {
	results := make(map[string]*Scrape, len(nodes))
	var wg sync.WaitGroup
	for _, node := range nodes {
		res := &Scrape{}
		results[node] = res
		wg.Go(func() { res.Samples, res.Err = k.scrape(ctx, reader, node) })
	}
	wg.Wait()
	return results
}

// AddScrapes takes one sample of the pods on each node (byNode) from that node's scrape.
// CPU is the counter's delta over its timestamps' delta since the reading kept in s (so it
// survives an operator restart); a pod counts once all its containers have a rate and at
// least one of them is new. It returns the nodes whose scrape failed that had not failed at
// the previous scrape (to report once, and again after a recovery), with their errors; their
// pods are skipped and keep their readings for when the node recovers.
func (s *Store) AddScrapes(byNode map[string][]*corev1.Pod, scrapes map[string]*Scrape) map[string]error {
	if s.Kubelet.Counters == nil {
		s.Kubelet.Counters = map[string]*CPUReading{}
	}
	failed := map[string]error{}
	seen := map[string]bool{}
	for _, node := range slices.Sorted(maps.Keys(byNode)) {
		res := scrapes[node]
		if res == nil {
			continue
		}
		if res.Err != nil {
			if _, known := s.Kubelet.Errors[node]; !known {
				failed[node] = res.Err
			}
			if s.Kubelet.Errors == nil {
				s.Kubelet.Errors = map[string]string{}
			}
			s.Kubelet.Errors[node] = res.Err.Error()
			for _, pod := range byNode[node] { // keep their readings for when the node recovers
				for key := range s.Kubelet.Counters {
					if strings.HasPrefix(key, pod.Name+"/") {
						seen[key] = true
					}
				}
			}
			continue
		}
		delete(s.Kubelet.Errors, node)
		for _, pod := range byNode[node] {
			s.addKubeletPod(pod, res.Samples, seen)
		}
	}
	for key := range s.Kubelet.Counters { // pods and containers that are gone
		if !seen[key] {
			delete(s.Kubelet.Counters, key)
		}
	}
	return failed
}

// addKubeletPod turns one pod's container readings into a sample; seen collects the
// counter keys still in use.
func (s *Store) addKubeletPod(pod *corev1.Pod, samples map[ContainerKey]*ContainerSample, seen map[string]bool) {
	var cpu, mem float64
	containers, fresh, complete := 0, false, true
	for key, c := range samples {
		if key.namespace != pod.Namespace || key.pod != pod.Name {
			continue
		}
		containers++
		mem += c.memory
		if !c.hasCPU {
			complete = false
			continue
		}
		id := pod.Name + "/" + key.container
		seen[id] = true
		prev := s.Kubelet.Counters[id]
		cur := &CPUReading{Seconds: c.cpu, Ms: c.cpuMs, Start: c.start}
		switch {
		case prev == nil || prev.Start != cur.Start || cur.Seconds < prev.Seconds:
			s.Kubelet.Counters[id] = cur // first reading of this container: the baseline
			complete = false
		case cur.Ms <= prev.Ms: // the kubelet has no newer reading yet
			if prev.Rate == nil {
				complete = false
			} else {
				cpu += *prev.Rate
			}
		default:
			rate := (cur.Seconds - prev.Seconds) / (float64(cur.Ms-prev.Ms) / 1000)
			cur.Rate = &rate
			s.Kubelet.Counters[id] = cur
			cpu += rate
			fresh = true
		}
	}
	if containers > 0 && complete && fresh {
		if m, ok := MemoryBytes(mem); ok {
			s.Samples.AddPod(Role(pod.Labels), pod.Name, SourceKubelet, cpu, m)
		}
	}
}
