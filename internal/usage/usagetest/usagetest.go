// Package usagetest is a fake kubelet for tests of resource usage sampling: it serves
// /metrics/resource over TLS (a certificate from a test CA) behind bearer-token
// authentication, in the kubelet's own text format.
package usagetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Token is the bearer token the fake kubelet accepts (RESTConfig's).
const Token = "kubelet-test-token"

// PKI is a CA and a kubelet serving certificate it signed for 127.0.0.1, like the local
// cluster's (hack/local-cluster: kubelet-serving, IP SANs, signed by the cluster CA).
type PKI struct {
	// CAPEM is the CA certificate.
	CAPEM   []byte
	serving tls.Certificate
}

// NewPKI creates a CA and a serving certificate.
func NewPKI(t testing.TB) PKI {
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
	return PKI{CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		serving: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}
}

// RESTConfig is the operator's REST config as in a pod: the bearer token and caPEM as the
// cluster CA.
func RESTConfig(caPEM []byte) *rest.Config {
	return &rest.Config{Host: "https://apiserver.invalid", BearerToken: Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM, ServerName: "kubernetes.default.svc"}}
}

// Container is one container a fake kubelet reports.
type Container struct {
	// NS, Pod and Container name it (NS: MetricsText's namespace when empty).
	NS, Pod, Container string
	// CPU is the counter now.
	CPU float64
	// Rate is in cores: the counter grows Rate × the interval per scrape.
	Rate float64
	// Mem is the working set in bytes.
	Mem float64
	// Start is the container's start time.
	Start float64
	// LagMs is how much the CPU reading's timestamp lags the scrape's.
	LagMs int64
}

// MetricsText renders container readings the way the kubelet does.
func MetricsText(ns string, cs []Container, ms int64) string {
	cs = slices.Clone(cs)
	for i := range cs {
		if cs[i].NS == "" {
			cs[i].NS = ns
		}
	}
	var b strings.Builder
	b.WriteString("# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds\n# TYPE container_cpu_usage_seconds_total counter\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "container_cpu_usage_seconds_total{container=%q,namespace=%q,pod=%q} %g %d\n", c.Container, c.NS, c.Pod, c.CPU, ms+c.LagMs)
	}
	b.WriteString("# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes\n# TYPE container_memory_working_set_bytes gauge\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "container_memory_working_set_bytes{container=%q,namespace=%q,pod=%q} %g %d\n", c.Container, c.NS, c.Pod, c.Mem, ms)
	}
	b.WriteString("# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds\n# TYPE container_start_time_seconds gauge\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "container_start_time_seconds{container=%q,namespace=%q,pod=%q} %g\n", c.Container, c.NS, c.Pod, c.Start)
	}
	b.WriteString("# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds\n# TYPE node_cpu_usage_seconds_total counter\n")
	fmt.Fprintf(&b, "node_cpu_usage_seconds_total 14989.977176777 %d\n", ms)
	b.WriteString("# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise\n# TYPE resource_scrape_error gauge\nresource_scrape_error 0\n")
	return b.String()
}

// Kubelet serves /metrics/resource over TLS for the containers it hosts; every scrape
// is 10 s after the previous one and the counters grow by their rates.
type Kubelet struct {
	srv        *httptest.Server
	ns         string
	mu         sync.Mutex
	containers []Container
	ms         int64
	requests   int
	badAuth    int
	failFirst  int
}

// NewKubelet starts a fake kubelet with pki's serving certificate, reporting pods of
// namespace ns; it stops when the test ends.
func NewKubelet(t testing.TB, pki PKI, ns string) *Kubelet {
	k := &Kubelet{ns: ns, ms: 1795313023234}
	k.srv = httptest.NewUnstartedServer(http.HandlerFunc(k.serve))
	k.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.serving}, MinVersion: tls.VersionTLS12}
	k.srv.StartTLS()
	t.Cleanup(k.srv.Close)
	return k
}

// FailFirst makes the kubelet answer the next n scrapes with 503.
func (k *Kubelet) FailFirst(n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failFirst = n
}

// serve is the kubelet's /metrics/resource behind bearer-token authentication.
func (k *Kubelet) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.requests++
	if r.Header.Get("Authorization") != "Bearer "+Token {
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
		k.containers[i].CPU += k.containers[i].Rate * 10
	}
	coredns := Container{NS: "kube-system", Pod: "coredns-85bf56c4c-khg85", Container: "coredns", CPU: 0.07, Mem: 2.9e7, Start: 1}
	_, _ = fmt.Fprint(w, MetricsText(k.ns, append(slices.Clone(k.containers), coredns), k.ms))
}

// Stats are the requests served and those without the expected bearer token.
func (k *Kubelet) Stats() (requests, badAuth int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.requests, k.badAuth
}

// Host puts containers of a pod on this kubelet: CPU rates in cores by container name.
func (k *Kubelet) Host(pod string, rates map[string]float64, memMiB float64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range slices.Sorted(maps.Keys(rates)) {
		k.containers = append(k.containers, Container{Pod: pod, Container: c, CPU: 1, Rate: rates[c], Mem: memMiB * (1 << 20), Start: 1.7e9})
	}
}

// Port is the fake kubelet's port.
func (k *Kubelet) Port() int32 { return int32(k.srv.Listener.Addr().(*net.TCPAddr).Port) }

// Node is a Node whose kubelet is at 127.0.0.1:port.
func Node(name string, port int32) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "localhost"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: port}},
	}}
}
