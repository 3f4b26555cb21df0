package controllers

import (
	"context"
	"errors"
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
			return decoded(runner.DecodeResult(state))
		}
	}
	var cm corev1.ConfigMap
	name := runner.ResultName(prefix(run, generation), i)
	if err := r.uncached().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, &cm); err != nil {
		return nil, fmt.Errorf("runner %d: reading result ConfigMap %s: %w", i, name, err)
	}
	if !ownedBy(&cm, run) {
		return nil, fmt.Errorf("runner %d: result ConfigMap %s: %w", i, name, errForeign)
	}
	return decoded(runner.DecodeResult(&cm))
}

// errInvalidDocument marks a stored result document that cannot be decoded: retrying cannot
// heal it, the runner's result is missing.
var errInvalidDocument = errors.New("invalid result document")

// decoded marks a decoding error as errInvalidDocument.
func decoded(doc *results.Document, err error) (*results.Document, error) {
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidDocument, err)
	}
	return doc, nil
}
