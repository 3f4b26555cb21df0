package local

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// externalTarget is an endpoint that already exists: nothing is started; Start checks that
// every address accepts TCP connections.
type externalTarget struct {
	spec *v1alpha1.ExternalTarget
}

func newExternal(spec *v1alpha1.ExternalTarget) *externalTarget { return &externalTarget{spec: spec} }

// Start implements Target: it waits until every address accepts TCP connections.
func (t *externalTarget) Start(ctx context.Context) error {
	addrs := append(append([]string{}, t.spec.Addresses...), t.spec.ReadAddresses...)
	for _, a := range addrs {
		err := waitFor(ctx, "external "+string(t.spec.Kind)+" endpoint "+a, nil, func(ctx context.Context) error {
			d := net.Dialer{Timeout: 2 * time.Second}
			c, err := d.DialContext(ctx, "tcp", a)
			if err != nil {
				return err
			}
			return c.Close()
		})
		if err != nil {
			return fmt.Errorf("%w", err)
		}
	}
	return nil
}

// Endpoints is empty: the plan takes external addresses from the spec itself.
func (t *externalTarget) Endpoints() []v1alpha1.Endpoint { return nil }

// Stop implements Target (nothing to stop).
func (t *externalTarget) Stop() error { return nil }
