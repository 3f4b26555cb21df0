package target

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/benchrun/benchrun/internal/naming"
)

// NetworkPolicyOptions describe a run for its NetworkPolicies (NetworkPolicies).
type NetworkPolicyOptions struct {
	// Namespace is the run's namespace.
	Namespace string
	// Run is the run's name as its objects' bench.benchrun.io/run label holds it
	// (naming.ShortName); the policies select every generation's pods by it.
	Run string
	// Generation is the run generation that creates the policies: their names and labels are
	// that generation's (naming.Prefix, naming.RunLabels), so they go with its other objects.
	Generation int64
	// Endpoints are the target's addresses (Target.Endpoints): the run's own Services are
	// covered by the rule to the run's pods; any other address (an external target) gets an
	// egress rule of its own.
	Endpoints []string
	// RemoteWriteURL is the Prometheus remote-write URL the runners push to ("" for none).
	RemoteWriteURL string
	// APIServerCIDRs are the API server's endpoint addresses (what kube-proxy translates the
	// kubernetes Service to); empty: the API server ports to any address.
	APIServerCIDRs []string
	// APIServerPorts are the API server's ports: the kubernetes Service's and its endpoints'.
	APIServerPorts []int32
	// DNSLabels select the cluster DNS pods (in any namespace).
	DNSLabels map[string]string
}

// NetworkPolicy names: <run>-g<generation>-runners and -target (a pair per run generation;
// each selects the pods of every generation of its run).
const (
	RunnersPolicySuffix = "runners"
	TargetPolicySuffix  = "target"
)

// NetworkPolicies are a run's two NetworkPolicies:
//   - runners (component runner): no ingress; egress only to the run's pods (its target, any
//     port), the cluster DNS (port 53), the API server (their ConfigMaps), the remote-write
//     endpoint and the target's addresses outside the run (an external target);
//   - target (every other pod of the run): ingress only from the run's pods (runners, and the
//     target's own pods: replication, sentinels, proxy, HeTu to its Redis). Their egress is
//     not restricted (the redis-role sidecar talks to the API server).
//
// The kubelet's probes and kubectl exec/port-forward come from the node, which NetworkPolicy
// always allows.
func NetworkPolicies(o NetworkPolicyOptions) []*networkingv1.NetworkPolicy {
	runPods := metav1.LabelSelector{MatchLabels: map[string]string{naming.LabelRun: o.Run}}
	meta := func(suffix, component string) metav1.ObjectMeta {
		labels := naming.RunLabels(o.Run, o.Generation)
		labels[naming.LabelComponent] = component
		return metav1.ObjectMeta{Name: naming.Name(naming.Prefix(o.Run, o.Generation), suffix), Namespace: o.Namespace, Labels: labels}
	}
	egress := []networkingv1.NetworkPolicyEgressRule{
		{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &runPods}}},
		{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}, PodSelector: &metav1.LabelSelector{MatchLabels: o.DNSLabels}}},
			Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolUDP, 53), port(corev1.ProtocolTCP, 53)}},
		apiServerRule(o),
	}
	if o.RemoteWriteURL != "" {
		if u, err := url.Parse(o.RemoteWriteURL); err == nil && u.Host != "" {
			p := u.Port()
			if p == "" {
				p = map[string]string{"https": "443"}[u.Scheme]
				if p == "" {
					p = "80"
				}
			}
			if r, ok := egressTo(net.JoinHostPort(u.Hostname(), p), o.Namespace); ok {
				egress = append(egress, r)
			}
		}
	}
	for _, addr := range o.Endpoints {
		host, _, err := net.SplitHostPort(addr)
		if err == nil && strings.HasPrefix(host, o.Run+"-g") && strings.HasSuffix(host, "."+o.Namespace+".svc") {
			continue // a Service of the run: its pods are allowed
		}
		if r, ok := egressTo(addr, o.Namespace); ok {
			egress = append(egress, r)
		}
	}
	runners := &networkingv1.NetworkPolicy{ObjectMeta: meta(RunnersPolicySuffix, "runner-policy"), Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{naming.LabelRun: o.Run, naming.LabelComponent: "runner"}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		Egress:      egress,
	}}
	targets := &networkingv1.NetworkPolicy{ObjectMeta: meta(TargetPolicySuffix, "target-policy"), Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{naming.LabelRun: o.Run},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: naming.LabelComponent, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"runner"}}}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &runPods}}}},
	}}
	return []*networkingv1.NetworkPolicy{runners, targets}
}

// apiServerRule allows the API server's ports to its addresses (any address without them).
func apiServerRule(o NetworkPolicyOptions) networkingv1.NetworkPolicyEgressRule {
	var r networkingv1.NetworkPolicyEgressRule
	ports := o.APIServerPorts
	if len(ports) == 0 {
		ports = []int32{443, 6443} // never an empty rule: it would allow everything
	}
	for _, p := range ports {
		r.Ports = append(r.Ports, port(corev1.ProtocolTCP, p))
	}
	for _, cidr := range o.APIServerCIDRs {
		r.To = append(r.To, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr}})
	}
	return r
}

// egressTo is the egress rule for host:port outside the run: an IP address exactly (that
// port); a Service name (name, name.namespace.svc[.cluster.local]) every pod of its
// namespace (any port: the Service's target port is not known here); any other host name
// the port to any address (a NetworkPolicy cannot name a DNS name). Not ok: addr is not
// host:port (no rule: an empty rule would allow everything).
func egressTo(addr, ns string) (networkingv1.NetworkPolicyEgressRule, bool) {
	host, p, err := net.SplitHostPort(addr)
	n, perr := strconv.ParseUint(p, 10, 16)
	if err != nil || perr != nil || host == "" || n == 0 {
		return networkingv1.NetworkPolicyEgressRule{}, false
	}
	if ip := net.ParseIP(host); ip != nil {
		bits := 32
		if ip.To4() == nil {
			bits = 128
		}
		return networkingv1.NetworkPolicyEgressRule{
			To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: host + "/" + strconv.Itoa(bits)}}},
			Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, int32(n))}}, true
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	switch {
	case len(labels) == 1:
	case len(labels) >= 3 && labels[2] == "svc":
		ns = labels[1]
	default:
		return networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, int32(n))}}, true
	}
	return networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
		PodSelector:       &metav1.LabelSelector{}}}}, true
}

// port is a NetworkPolicyPort.
func port(proto corev1.Protocol, n int32) networkingv1.NetworkPolicyPort {
	p := intstr.FromInt32(n)
	return networkingv1.NetworkPolicyPort{Protocol: &proto, Port: &p}
}
