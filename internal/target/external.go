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
func (e *external) Kind() string { return "external/" + string(e.spec.Kind) }

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
		eps = append(eps, v1alpha1.Endpoint{Role: "replica", Address: a})
	}
	return eps
}
