package controllers

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// Kinds of queue keys.
const (
	keyPool   = "pool"
	keyTarget = "target"
)

// queueKey is one thing a run must hold alone: a load pool (spec.load.runners.pool) or an
// endpoint of an exclusive external target (normalEndpoint).
type queueKey struct {
	kind string // keyPool or keyTarget
	name string // the pool, or host:port
}

// String is the key as the Queued condition names it: "pool P" or "external target E".
func (k queueKey) String() string {
	if k.kind == keyPool {
		return "pool " + k.name
	}
	return "external target " + k.name
}

// long is the key in phase messages and errors: "load pool P" or "external target E".
func (k queueKey) long() string {
	if k.kind == keyPool {
		return "load pool " + k.name
	}
	return k.String()
}

// waitReason is the Queued condition's reason while a run waits for the key.
func (k queueKey) waitReason() string {
	if k.kind == keyPool {
		return v1alpha1.ReasonWaitingForPool
	}
	return v1alpha1.ReasonWaitingForTarget
}

// lockName is the key's lock ConfigMap: benchrun-pool-<pool>, or benchrun-target-<the
// first 16 hex digits of the endpoint's SHA-256> (an endpoint is no valid object name).
func (k queueKey) lockName() string {
	if k.kind == keyPool {
		return "benchrun-pool-" + k.name
	}
	sum := sha256.Sum256([]byte(k.name))
	return "benchrun-target-" + hex.EncodeToString(sum[:8])
}

// queueKeys are the run's queue keys in lock-name order: its load pool, and the distinct
// endpoints of its external target unless that sets exclusive: false.
func queueKeys(run *v1alpha1.BenchmarkRun) []queueKey {
	var keys []queueKey
	if p := run.Spec.Load.Runners.Pool; p != "" {
		keys = append(keys, queueKey{keyPool, p})
	}
	ext := run.Spec.Target.External
	if ext == nil || (ext.Exclusive != nil && !*ext.Exclusive) {
		return keys
	}
	seen := map[string]bool{}
	for _, a := range append(append([]string(nil), ext.Addresses...), ext.ReadAddresses...) {
		if e := normalEndpoint(a); !seen[e] {
			seen[e] = true
			keys = append(keys, queueKey{keyTarget, e})
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].lockName() < keys[j].lockName() })
	return keys
}

// hasKey tells whether k is one of run's queue keys.
func hasKey(run *v1alpha1.BenchmarkRun, k queueKey) bool {
	for _, o := range queueKeys(run) {
		if o == k {
			return true
		}
	}
	return false
}

// normalEndpoint is host:port as runs are compared: the host lower-cased without a final
// dot, an IP address in its canonical form (IPv6 in brackets, ::ffff:a.b.c.d as a.b.c.d),
// the port without leading zeros. Host names are not resolved.
func normalEndpoint(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return strings.ToLower(addr)
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	}
	if p, err := strconv.Atoi(port); err == nil {
		port = strconv.Itoa(p)
	}
	return net.JoinHostPort(host, port)
}

// describeKeys lists keys for messages: "load pool P and external target E1, E2".
func describeKeys(keys []queueKey) string {
	var parts, eps []string
	for _, k := range keys {
		if k.kind == keyPool {
			parts = append(parts, k.long())
		} else {
			eps = append(eps, k.name)
		}
	}
	if len(eps) > 0 {
		parts = append(parts, "external target "+strings.Join(eps, ", "))
	}
	return strings.Join(parts, " and ")
}
