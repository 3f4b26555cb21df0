package target

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestStreamWiring: the stream entries are tcp, http and grpc; a custom target gives each the
// port named after it, else its first port; an external stream kind fills the entry of its
// own name (and only that one), Redis and HeTu kinds none; an external endpoint's roles are
// every kind and replica.
func TestStreamWiring(t *testing.T) {
	if got := streamEntries(); !slices.Equal(got, []string{"tcp", "http", "grpc"}) {
		t.Fatalf("stream entries %v", got)
	}
	enc := func(a Addresses) string {
		b, _ := json.Marshal(a)
		return string(b)
	}
	first := []v1alpha1.Endpoint{{Role: RoleCustom, Address: "s:1"}}
	if got := enc(mustWire(wireCustom(nil, first))); got != `{"tcp":{"addrs":["s:1"]},"http":{"addrs":["s:1"]},"grpc":{"addrs":["s:1"]}}` {
		t.Errorf("custom, one port: %s", got)
	}
	named := append(first, v1alpha1.Endpoint{Role: RoleCustom + "-http", Address: "s:80"}, v1alpha1.Endpoint{Role: RoleCustom + "-grpc", Address: "s:50051"})
	if got := enc(mustWire(wireCustom(nil, named))); got != `{"tcp":{"addrs":["s:1"]},"http":{"addrs":["s:80"]},"grpc":{"addrs":["s:50051"]}}` {
		t.Errorf("custom, named ports: %s", got)
	}
	for _, k := range []v1alpha1.ExternalKind{v1alpha1.ExternalTCP, v1alpha1.ExternalHTTP, v1alpha1.ExternalGRPC} {
		spec := &v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: k, Addresses: []string{"h:1"},
			TLS: &v1alpha1.TLSSpec{Enabled: true, CASecretRef: &v1alpha1.SecretKeyRef{Name: "ca", Key: "pem"}}}}
		a, secrets := wireExternal(spec, nil)
		if got := enc(a); got != `{"`+string(k)+`":{"addrs":["h:1"],"tls":true}}` || len(secrets) != 1 || secrets[0].Name != EnvTLSCA {
			t.Errorf("external %s: %s %v", k, got, secrets)
		}
	}
	a, _ := wireExternal(&v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis, Addresses: []string{"r:6379"}}}, nil)
	if a.Redis == nil || len(a.Streams) != 0 {
		t.Errorf("external redis: %s", enc(a))
	}
	if got := externalRoles(); !slices.Equal(got, []string{"redis", "hetu", "tcp", "http", "grpc", RoleReplica}) {
		t.Errorf("external roles %v", got)
	}
}

// mustWire drops the secrets of a wiring.
func mustWire(a Addresses, _ []SecretEnv) Addresses { return a }
