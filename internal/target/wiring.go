package target

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/flatjson"
	"github.com/benchrun/benchrun/internal/workload"
)

// This file is what the load scripts get of a target (plan.Target is Addresses): the endpoint
// roles, the addresses by protocol and the secret environment variables. Each kind's Wire
// (kinds.go) fills them from its endpoints.

// Endpoint roles the target kinds publish in status.target.endpoints.
const (
	// RoleHeTu is a HeTu server.
	RoleHeTu = "hetu"
	// RoleRedis is a single Redis (or Valkey) server.
	RoleRedis = "redis"
	// RoleMaster is the master of a Redis with replicas.
	RoleMaster = "master"
	// RoleReplica is a Redis read replica.
	RoleReplica = "replica"
	// RoleSentinel is a Redis sentinel.
	RoleSentinel = "sentinel"
	// RoleProxy is the read/write-splitting proxy in front of a Redis with replicas.
	RoleProxy = "proxy"
	// RoleCustom is the endpoint role of a custom target's first port, where the load goes;
	// its other ports are RoleCustom + "-" + the port's name.
	RoleCustom = "custom"
)

// Secret environment variables of the load scripts (values only ever from Secrets).
const (
	// EnvRedisUsername is filled from a Secret: the Redis ACL user.
	EnvRedisUsername = "BENCHRUN_REDIS_USERNAME"
	// EnvRedisPassword is filled from a Secret: the Redis password.
	EnvRedisPassword = "BENCHRUN_REDIS_PASSWORD"
	// EnvRedisTLSCA is filled from a Secret: the PEM CA bundle verifying a TLS Redis endpoint.
	EnvRedisTLSCA = "BENCHRUN_REDIS_TLS_CA"
	// EnvTLSCA is filled from a Secret: the PEM CA bundle verifying a TLS tcp or http endpoint.
	EnvTLSCA = "BENCHRUN_TLS_CA"
	// EnvHeTuAuthKey is filled from a Secret: the HeTu auth key for signed hellos.
	EnvHeTuAuthKey = "BENCHRUN_HETU_AUTHKEY"
)

// SecretEnv is an environment variable filled from a Secret key.
type SecretEnv struct {
	// Name is the environment variable.
	Name string `json:"name"`
	// Secret is the Secret key holding the value.
	Secret v1alpha1.SecretKeyRef `json:"secret"`
}

// Addresses is where the load scripts connect (BENCHRUN_TARGET, plan.Target); credentials come
// through SecretEnv. Each kind wires its own (KindInfo.Wire).
type Addresses struct {
	// Redis is the Redis endpoint for redis.* and ycsb scenarios (also HeTu's back end).
	Redis *RedisAddresses `json:"redis,omitempty"`
	// HeTu is the HeTu endpoint for hetu.* scenarios.
	HeTu *HeTuAddresses `json:"hetu,omitempty"`
	// Streams are the plain TCP (or TLS) endpoints by stream address (workload.Streams: tcp,
	// http, grpc), each a custom target's port named like it (else its first port) or an
	// external target of the kind named like it (TLS when enabled). BENCHRUN_TARGET has them
	// as entries of their own, after hetu, in the descriptors' order (MarshalJSON).
	Streams map[string]*StreamAddresses `json:"-"`
}

// fixedAddresses is Addresses without its methods: its entries of fixed names.
type fixedAddresses Addresses

// MarshalJSON writes the stream entries as entries of their own after the fixed ones, in the
// order of workload.Streams (then any other name, sorted): {"redis":…,"tcp":…,"http":…}.
func (a Addresses) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(fixedAddresses(a))
	if err != nil || len(a.Streams) == 0 {
		return b, err
	}
	names := streamEntries()
	for _, n := range slices.Sorted(maps.Keys(a.Streams)) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var entries []flatjson.Entry
	for _, n := range names {
		if s := a.Streams[n]; s != nil {
			v, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			entries = append(entries, flatjson.Entry{Name: n, Value: v})
		}
	}
	return flatjson.Append(b, entries), nil
}

// UnmarshalJSON reads what MarshalJSON writes: every entry but redis and hetu is a stream.
func (a *Addresses) UnmarshalJSON(b []byte) error {
	var fixed fixedAddresses
	if err := json.Unmarshal(b, &fixed); err != nil {
		return err
	}
	entries, err := flatjson.Extra(b, func(name string) bool { return name == "redis" || name == "hetu" })
	if err != nil {
		return err
	}
	*a = Addresses(fixed)
	a.Streams = nil
	for n, raw := range entries {
		var s *StreamAddresses
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("BENCHRUN_TARGET entry %s: %w", n, err)
		}
		if s != nil {
			if a.Streams == nil {
				a.Streams = map[string]*StreamAddresses{}
			}
			a.Streams[n] = s
		}
	}
	return nil
}

// Stream is the stream entry named name (tcp, http, grpc); nil when the target has none.
func (a Addresses) Stream(name string) *StreamAddresses { return a.Streams[name] }

// Addrs are the host:port addresses of the entry whose JSON name is address (as the load
// scripts read TARGET[address]; workload.Descriptor.Address names it); none when the target
// has no such entry. Every entry has an addrs field, so no entry is named here.
func (a Addresses) Addrs(address string) []string {
	b, err := json.Marshal(a)
	if err != nil {
		return nil
	}
	var entries map[string]struct {
		Addrs []string `json:"addrs"`
	}
	if json.Unmarshal(b, &entries) != nil {
		return nil
	}
	return entries[address].Addrs
}

// streamEntries are the names of the stream entries (workload.Streams: tcp, http, grpc, the
// protocols spoken over a plain TCP or TLS connection), in the descriptors' order.
func streamEntries() []string {
	var out []string
	for _, a := range workload.Streams() {
		out = append(out, string(a))
	}
	return out
}

// setStream sets the stream entry name to s; false when name is no stream address
// (workload.Streams: a Redis or HeTu kind, an unknown name).
func (a *Addresses) setStream(name string, s *StreamAddresses) bool {
	if !slices.Contains(streamEntries(), name) {
		return false
	}
	if a.Streams == nil {
		a.Streams = map[string]*StreamAddresses{}
	}
	a.Streams[name] = s
	return true
}

// externalRoles are the endpoint roles of an external target: its kind (any of them) and
// replica (read addresses).
func externalRoles() []string {
	var out []string
	for _, k := range v1alpha1.ExternalKinds() {
		out = append(out, string(k))
	}
	return append(out, RoleReplica)
}

// StreamAddresses is a plain TCP (or TLS) endpoint: the scenarios of a stream address (tcp,
// http, grpc; workload.Streams).
type StreamAddresses struct {
	// Addrs are host:port addresses; VUs spread over them.
	Addrs []string `json:"addrs"`
	// TLS enables TLS.
	TLS bool `json:"tls,omitempty"`
	// TLSServerName overrides the verified server name.
	TLSServerName string `json:"tlsServerName,omitempty"`
	// TLSInsecure skips certificate verification.
	TLSInsecure bool `json:"tlsInsecure,omitempty"`
}

// RedisAddresses is a Redis endpoint.
type RedisAddresses struct {
	// Addrs are write (and default read) host:port addresses; VUs spread over them.
	Addrs []string `json:"addrs"`
	// ReadAddrs are read-replica addresses for read scenarios, when set.
	ReadAddrs []string `json:"readAddrs,omitempty"`
	// TLS enables TLS.
	TLS bool `json:"tls,omitempty"`
	// TLSServerName overrides the verified server name.
	TLSServerName string `json:"tlsServerName,omitempty"`
	// TLSInsecure skips certificate verification.
	TLSInsecure bool `json:"tlsInsecure,omitempty"`
}

// HeTuAddresses is a HeTu endpoint.
type HeTuAddresses struct {
	// Addrs are host:port addresses of HeTu servers; VUs spread over them.
	Addrs []string `json:"addrs"`
	// Instance is the HeTu instance name (path /hetu/<instance>).
	Instance string `json:"instance"`
	// Layers is the packet layer stack (msgpack, msgpack+zlib, msgpack+zlib+crypto).
	Layers string `json:"layers"`
}

// wiring collects one kind's Addresses and secret env vars from its endpoints.
type wiring struct {
	out     Addresses
	secrets []SecretEnv
	byRole  map[string][]string
}

// newWiring indexes endpoints by role.
func newWiring(endpoints []v1alpha1.Endpoint) *wiring {
	w := &wiring{byRole: map[string][]string{}}
	for _, ep := range endpoints {
		w.byRole[ep.Role] = append(w.byRole[ep.Role], ep.Address)
	}
	return w
}

// done returns what was wired.
func (w *wiring) done() (Addresses, []SecretEnv) { return w.out, w.secrets }

// secret adds a secret env var when ref is set.
func (w *wiring) secret(name string, ref *v1alpha1.SecretKeyRef) {
	if ref != nil {
		w.secrets = append(w.secrets, SecretEnv{Name: name, Secret: *ref})
	}
}

// redis is the Redis endpoint among the endpoints: the proxy (which splits reads and writes
// itself), else the master or single server with the replicas for reads.
func (w *wiring) redis() *RedisAddresses {
	if p := w.byRole[RoleProxy]; len(p) > 0 {
		return &RedisAddresses{Addrs: p}
	}
	for _, role := range []string{RoleMaster, RoleRedis} {
		if a := w.byRole[role]; len(a) > 0 {
			return &RedisAddresses{Addrs: a[:1], ReadAddrs: w.byRole[RoleReplica]}
		}
	}
	return nil
}

// externalRedis wires an external Redis endpoint and its credentials.
func (w *wiring) externalRedis(e *v1alpha1.ExternalTarget) {
	r := &RedisAddresses{Addrs: e.Addresses[:1], ReadAddrs: e.ReadAddresses}
	if e.TLS != nil && e.TLS.Enabled {
		r.TLS, r.TLSServerName, r.TLSInsecure = true, e.TLS.ServerName, e.TLS.InsecureSkipVerify
	}
	w.out.Redis = r
	w.secret(EnvRedisUsername, e.UsernameSecretRef)
	w.secret(EnvRedisPassword, e.PasswordSecretRef)
	if e.TLS != nil && e.TLS.Enabled {
		w.secret(EnvRedisTLSCA, e.TLS.CASecretRef)
	}
}

// externalStream is the endpoint of an external target of a stream kind (tcp, http, grpc).
func externalStream(e *v1alpha1.ExternalTarget) *StreamAddresses {
	r := &StreamAddresses{Addrs: e.Addresses}
	if e.TLS != nil && e.TLS.Enabled {
		r.TLS, r.TLSServerName, r.TLSInsecure = true, e.TLS.ServerName, e.TLS.InsecureSkipVerify
	}
	return r
}
