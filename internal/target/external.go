package target

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// external is an endpoint that already exists: nothing is deployed, credentials come from
// Secrets that runner pods read through secretKeyRef environment variables.
type external struct {
	spec *v1alpha1.ExternalTarget
}

// Kind implements Target.
func (e *external) Kind() string { return externalLabel(e.spec) }

// Provider implements Target.
func (e *external) Provider() string { return "external" }

// Objects implements Target: none.
func (e *external) Objects() ([]client.Object, error) { return nil, nil }

// Ready implements Target: an external endpoint is taken as ready; connection errors show
// up as failed calls in the results.
func (e *external) Ready(context.Context, client.Reader) (bool, string, error) { return true, "", nil }

// Workloads implements Target: none.
func (e *external) Workloads() []Workload { return nil }

// Endpoints implements Target: addresses as given (role redis or hetu), read addresses as replicas.
func (e *external) Endpoints() []v1alpha1.Endpoint {
	var eps []v1alpha1.Endpoint
	for _, a := range e.spec.Addresses {
		eps = append(eps, v1alpha1.Endpoint{Role: string(e.spec.Kind), Address: a})
	}
	for _, a := range e.spec.ReadAddresses {
		eps = append(eps, v1alpha1.Endpoint{Role: RoleReplica, Address: a})
	}
	return eps
}

// externalLabel is the kind label of an external target: external/<kind>.
func externalLabel(spec *v1alpha1.ExternalTarget) string { return "external/" + string(spec.Kind) }

// wireExternal gives the scripts the external addresses by the endpoint's kind, with its
// credentials and CA: a kind spoken over a plain TCP (or TLS) connection fills the
// BENCHRUN_TARGET entry of its own name (Addresses.setStream).
func wireExternal(spec *v1alpha1.TargetSpec, endpoints []v1alpha1.Endpoint) (Addresses, []SecretEnv) {
	w, e := newWiring(endpoints), spec.External
	switch {
	case e.Kind == v1alpha1.ExternalHeTu:
		w.out.HeTu = &HeTuAddresses{Addrs: e.Addresses, Instance: orDefault(e.Instance, "bench"),
			Layers: orDefault(string(e.PacketLayers), string(v1alpha1.LayersMsgpackZlibCrypto))}
		w.secret(EnvHeTuAuthKey, e.AuthKeySecretRef)
	case w.out.setStream(string(e.Kind), externalStream(e)): // tcp, http, grpc: the entry of its name
		if tls := e.TLS; tls != nil && tls.Enabled {
			w.secret(EnvTLSCA, tls.CASecretRef)
		}
	default:
		w.externalRedis(e)
	}
	return w.done()
}
