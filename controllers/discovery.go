package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// servedTTL is how long an answer of served is reused: a missing API group (no metrics
// server, no redis-operator) would otherwise cost a full discovery of the API server on every
// reconcile that asks (the REST mapper retries misses), which at a thousand concurrent runs
// dominates the manager's CPU and allocations.
const servedTTL = time.Minute

// servedCache remembers which API kinds the cluster serves, for servedTTL.
type servedCache struct {
	mu      sync.Mutex
	answers map[schema.GroupVersionKind]servedAnswer
}

// servedAnswer is one remembered answer.
type servedAnswer struct {
	served bool
	at     time.Time
}

// served tells whether the API server serves kind gvk (through the REST mapper, remembered
// for servedTTL).
func (r *BenchmarkRunReconciler) served(gvk schema.GroupVersionKind) bool {
	return r.servedCached(gvk, false)
}

// servedRecheck is served, but a remembered "not served" is asked again: for decisions that
// must see an API installed a moment ago (the target of a new generation: the redis-operator
// installed just before the run, provider auto).
func (r *BenchmarkRunReconciler) servedRecheck(gvk schema.GroupVersionKind) bool {
	return r.servedCached(gvk, true)
}

// servedCached answers from the cache (a negative answer only unless recheckMissing) or asks
// the REST mapper and remembers the answer.
func (r *BenchmarkRunReconciler) servedCached(gvk schema.GroupVersionKind, recheckMissing bool) bool {
	served, _ := r.servedErr(gvk, recheckMissing)
	return served
}

// servedErr is servedCached with the discovery error: only "no such kind" is an answer (and
// remembered); a discovery that failed (throttled, timed out, a server error) is returned as
// an error and not remembered, so a transient failure never reads as "not installed".
func (r *BenchmarkRunReconciler) servedErr(gvk schema.GroupVersionKind, recheckMissing bool) (bool, error) {
	c := &r.servedKinds
	now := time.Now()
	c.mu.Lock()
	if a, ok := c.answers[gvk]; ok && now.Sub(a.at) < servedTTL && (a.served || !recheckMissing) {
		c.mu.Unlock()
		return a.served, nil
	}
	c.mu.Unlock()
	_, err := r.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && !meta.IsNoMatchError(err) {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil {
		c.answers = map[schema.GroupVersionKind]servedAnswer{}
	}
	c.answers[gvk] = servedAnswer{served: err == nil, at: now}
	return err == nil, nil
}
