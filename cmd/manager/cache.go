package main

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/runner"
)

// cacheOptions restricts the manager's cache: to benchrun's own runner pods, ConfigMaps
// (except runner result ConfigMaps and reports: result bytes are read uncached, one runner at a
// time, and reports, up to ~900 KiB each and kept after cleanup, would grow the cache with
// every finished run), Jobs, Deployments and StatefulSets (labelled with their run: a
// cluster's other workloads never enter the cache; the redis-operator's StatefulSets, made
// without our labels, are read past the cache when a target's readiness is checked), and,
// when watch (comma-separated namespaces, --watch-namespaces) is set, to those
// namespaces, so a namespaced install (Roles only) never lists anything cluster-wide.
// Cached objects drop their managedFields (never read; a large share of every object).
func cacheOptions(watch string) (cache.Options, error) {
	own, err := labels.Parse(naming.LabelRun)
	if err != nil {
		return cache.Options{}, err
	}
	ownNoResults, err := labels.Parse(naming.LabelRun + "," + naming.LabelComponent + " notin (" + runner.ComponentResult + "," + naming.ComponentReport + ")")
	if err != nil {
		return cache.Options{}, err
	}
	o := cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:         {Label: labels.SelectorFromSet(labels.Set{naming.LabelComponent: "runner"})},
		&corev1.ConfigMap{}:   {Label: ownNoResults},
		&batchv1.Job{}:        {Label: own},
		&appsv1.Deployment{}:  {Label: own},
		&appsv1.StatefulSet{}: {Label: own},
	}}
	for _, ns := range strings.Split(watch, ",") {
		if ns = strings.TrimSpace(ns); ns == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return cache.Options{}, fmt.Errorf("--watch-namespaces: %q is not a namespace name: %s", ns, strings.Join(errs, "; "))
		}
		if o.DefaultNamespaces == nil {
			o.DefaultNamespaces = map[string]cache.Config{}
		}
		o.DefaultNamespaces[ns] = cache.Config{}
	}
	return o, nil
}
