package target

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// egressTo: an IP exactly, a Service name its namespace's pods, another host name its port
// only; never an empty rule (it would allow everything).
func TestEgressTo(t *testing.T) {
	ns := func(r networkingv1.NetworkPolicyEgressRule) string {
		if len(r.To) != 1 || r.To[0].NamespaceSelector == nil {
			return ""
		}
		return r.To[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]
	}
	if r, ok := egressTo("10.1.2.3:9090", "ns"); !ok || r.To[0].IPBlock.CIDR != "10.1.2.3/32" || r.Ports[0].Port.IntVal != 9090 {
		t.Errorf("IP: %+v", r)
	}
	if r, ok := egressTo("[fd00::1]:80", "ns"); !ok || r.To[0].IPBlock.CIDR != "fd00::1/128" {
		t.Errorf("IPv6: %+v", r)
	}
	if r, ok := egressTo("prom.monitoring.svc:9090", "ns"); !ok || ns(r) != "monitoring" {
		t.Errorf("Service: %+v", r)
	}
	if r, ok := egressTo("prom.monitoring.svc.cluster.local:9090", "ns"); !ok || ns(r) != "monitoring" {
		t.Errorf("Service FQDN: %+v", r)
	}
	if r, ok := egressTo("prom:9090", "ns"); !ok || ns(r) != "ns" {
		t.Errorf("Service of the namespace: %+v", r)
	}
	if r, ok := egressTo("redis.example.com:6380", "ns"); !ok || len(r.To) != 0 || len(r.Ports) != 1 || r.Ports[0].Port.IntVal != 6380 {
		t.Errorf("host name: %+v", r)
	}
	for _, bad := range []string{"", "host", "host:0", "host:x", ":80"} {
		if r, ok := egressTo(bad, "ns"); ok {
			t.Errorf("%q: rule %+v", bad, r)
		}
	}
	// an external target's address gets its rule; the run's own Services do not need one
	nps := NetworkPolicies(NetworkPolicyOptions{Namespace: "ns", Run: "r", DNSLabels: map[string]string{"k8s-app": "kube-dns"},
		Endpoints: []string{"r-g1-redis-master.ns.svc:6379", "redis.example.com:6380"}})
	if eg := nps[0].Spec.Egress; len(eg) != 4 || eg[3].Ports[0].Port.IntVal != 6380 || len(eg[2].Ports) != 2 || len(eg[2].To) != 0 {
		t.Errorf("runner egress %+v", eg)
	}
}
