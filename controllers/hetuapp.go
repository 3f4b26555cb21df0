package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// checkHeTuApp checks that the ConfigMap key of a HeTu target's own app (spec.target.hetu.app)
// exists before the target is deployed: otherwise its pods would wait for the volume until
// the target-ready timeout. It returns the user's error as a message ("" when fine).
func (r *BenchmarkRunReconciler) checkHeTuApp(ctx context.Context, run *v1alpha1.BenchmarkRun) (string, error) {
	h := run.Spec.Target.HeTu
	if h == nil || h.App == nil {
		return "", nil
	}
	key := h.App.Key
	if key == "" {
		key = "app.py"
	}
	var cm corev1.ConfigMap
	err := r.uncached().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: h.App.ConfigMapName}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("spec.target.hetu.app: ConfigMap %s not found in namespace %s", h.App.ConfigMapName, run.Namespace), nil
	case err != nil:
		return "", err
	}
	if _, ok := cm.Data[key]; !ok {
		return fmt.Sprintf("spec.target.hetu.app: ConfigMap %s has no key %s", h.App.ConfigMapName, key), nil
	}
	return "", nil
}
