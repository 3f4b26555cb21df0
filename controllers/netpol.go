package controllers

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/target"
)

// Per-run NetworkPolicies (manager flag --network-policies, chart networkPolicies.perRun):
// before a run's target is deployed, the manager creates <run>-runners and <run>-target,
// owned by the run (target.NetworkPolicies): runners reach only the run's pods, DNS, the API
// server and the remote-write endpoint; target pods accept connections only from the run's
// pods. They only protect anything on a cluster whose network plugin enforces NetworkPolicy:
// the local cluster's bridge CNI (hack/local-cluster) does not, so they are tested as objects
// on envtest (netpol_test.go).

// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=create
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list

// NetworkPolicyConfig turns per-run NetworkPolicies on (a nil config: off).
type NetworkPolicyConfig struct {
	// APIServerCIDRs are the API server's endpoint addresses; empty: read once from the
	// kubernetes Service's EndpointSlices in default (any address when that fails, logged).
	APIServerCIDRs []string
	// APIServerPorts are the kubernetes Service's port and its endpoints' (default 443, 6443).
	APIServerPorts []int32
	// DNSLabels select the cluster DNS pods (default k8s-app=kube-dns).
	DNSLabels map[string]string

	once       sync.Once
	discovered []string
	ports      []int32 // the EndpointSlices' ports
}

// networkPolicies creates run's NetworkPolicies when they are enabled (idempotent).
func (r *BenchmarkRunReconciler) networkPolicies(ctx context.Context, run *v1alpha1.BenchmarkRun, t target.Target) error {
	c := r.NetworkPolicies
	if c == nil {
		return nil
	}
	o := target.NetworkPolicyOptions{Namespace: run.Namespace, Run: naming.ShortName(run.Name), Generation: run.Generation,
		RemoteWriteURL: run.Spec.Collect.PrometheusRemoteWriteURL, APIServerCIDRs: c.apiServer(ctx, r.uncached()),
		APIServerPorts: c.apiServerPorts(), DNSLabels: c.DNSLabels}
	if o.RemoteWriteURL == "" {
		o.RemoteWriteURL = r.RemoteWriteURL
	}
	if len(o.DNSLabels) == 0 {
		o.DNSLabels = map[string]string{"k8s-app": "kube-dns"}
	}
	for _, ep := range t.Endpoints() {
		o.Endpoints = append(o.Endpoints, ep.Address)
	}
	for _, np := range target.NetworkPolicies(o) {
		if err := r.create(ctx, run, np); err != nil {
			return fmt.Errorf("network policy: %w", err)
		}
	}
	return nil
}

// apiServer is the API server's addresses: the configured CIDRs, else those of the
// kubernetes Service's EndpointSlices (read once); none when they cannot be read.
func (c *NetworkPolicyConfig) apiServer(ctx context.Context, rd client.Reader) []string {
	if len(c.APIServerCIDRs) > 0 {
		return c.APIServerCIDRs
	}
	c.once.Do(func() {
		var list discoveryv1.EndpointSliceList
		err := rd.List(ctx, &list, client.InNamespace("default"), client.MatchingLabels{discoveryv1.LabelServiceName: "kubernetes"})
		if err == nil {
			c.discovered, c.ports = sliceCIDRs(list.Items)
		}
		if len(c.discovered) == 0 {
			logf.FromContext(ctx).Info("network policies: the API server's addresses are unknown (set --network-policy-apiserver-cidrs): runners may reach its ports on any address",
				"error", fmt.Sprint(err))
		}
	})
	return c.discovered
}

// apiServerPorts are the configured ports (default 443 and 6443) plus the EndpointSlices'.
func (c *NetworkPolicyConfig) apiServerPorts() []int32 {
	ports := c.APIServerPorts
	if len(ports) == 0 {
		ports = []int32{443, 6443}
	}
	ports = append(slices.Clone(ports), c.ports...)
	slices.Sort(ports)
	return slices.Compact(ports)
}

// sliceCIDRs are the endpoint addresses of slices as /32 or /128 CIDRs and their ports, sorted.
func sliceCIDRs(items []discoveryv1.EndpointSlice) ([]string, []int32) {
	var cidrs []string
	var ports []int32
	for _, s := range items {
		for _, p := range s.Ports {
			if p.Port != nil {
				ports = append(ports, *p.Port)
			}
		}
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				if ip := net.ParseIP(a); ip != nil {
					bits := "/32"
					if ip.To4() == nil {
						bits = "/128"
					}
					cidrs = append(cidrs, ip.String()+bits)
				}
			}
		}
	}
	slices.Sort(cidrs)
	return slices.Compact(cidrs), ports
}
