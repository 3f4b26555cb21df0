package controllers

import (
	"context"
	"fmt"

	"github.com/benchrun/benchrun/internal/target"
)

// targetFailure asks a target that can tell (target.Failer) whether it will never become
// ready, e.g. a proxy that refused the password. Pods are read uncached: the manager caches
// runner pods only.
func (r *BenchmarkRunReconciler) targetFailure(ctx context.Context, t target.Target) (string, error) {
	f, ok := t.(target.Failer)
	if !ok {
		return "", nil
	}
	msg, err := f.Failure(ctx, r.uncached())
	if err != nil {
		return "", fmt.Errorf("target failure: %w", err)
	}
	return msg, nil
}
