package controllers

import (
	"context"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cacheThenAPI reads from the cache and, for an object the cache does not hold, from the API
// server: the manager caches only StatefulSets and Deployments labelled with their run
// (cmd/manager/cache.go), and the redis-operator's StatefulSets carry no run label. Used
// for a target's readiness checks only.
type cacheThenAPI struct {
	cached, api client.Reader
}

// Get reads obj from the cache, or past it when the cache has no such object.
func (c cacheThenAPI) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.cached.Get(ctx, key, obj, opts...)
	if kerrors.IsNotFound(err) && c.api != c.cached {
		return c.api.Get(ctx, key, obj, opts...)
	}
	return err
}

// List lists from the cache.
func (c cacheThenAPI) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.cached.List(ctx, list, opts...)
}

// readyReader is the reader of a target's readiness checks.
func (r *BenchmarkRunReconciler) readyReader() client.Reader {
	return cacheThenAPI{cached: r.Client, api: r.uncached()}
}
