package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// fetchResult reads and decodes runner i's stored result document of a run generation:
// from its result ConfigMap, read past the cache (result ConfigMaps are never cached, so
// result bytes are held only while one document is decoded), or, for runners of older
// versions, from the state ConfigMap itself. state is the runner's state ConfigMap as
// observed (nil when missing).
func (r *BenchmarkRunReconciler) fetchResult(ctx context.Context, run *v1alpha1.BenchmarkRun, generation int64, i int, state *corev1.ConfigMap) (*results.Document, error) {
	if state != nil {
		if _, inState := state.BinaryData[runner.KeyResult]; inState {
			return runner.DecodeResult(state)
		}
	}
	var cm corev1.ConfigMap
	name := runner.ResultName(prefix(run, generation), i)
	if err := r.uncached().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, &cm); err != nil {
		return nil, fmt.Errorf("runner %d: reading result ConfigMap %s: %w", i, name, err)
	}
	return runner.DecodeResult(&cm)
}
