package controllers

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/target"
)

// annotationRun on runner pods names their BenchmarkRun (label values are too short for
// every run name).
const annotationRun = "bench.benchrun.io/run"

// componentReport marks report ConfigMaps, which outlive cleanup and generations.
const componentReport = naming.ComponentReport

// prefix starts the names of every object of a run generation, e.g. "myrun-g2".
func prefix(run *v1alpha1.BenchmarkRun, generation int64) string {
	return naming.Prefix(run.Name, generation)
}

// runLabels select the objects of a run generation.
func runLabels(run *v1alpha1.BenchmarkRun, generation int64) map[string]string {
	return naming.RunLabels(run.Name, generation)
}

// reportName is the report ConfigMap of a generation.
func reportName(run *v1alpha1.BenchmarkRun, generation int64) string {
	return prefix(run, generation) + "-report"
}

// create creates obj owned by run; an object of this run that already exists is left as it
// is (objects belong to one generation and are never changed). One left by an earlier run of
// the same name (deleted and applied again before the garbage collector took its objects) is
// never adopted: it is deleted (UID precondition) and errForeign returned, to retry.
func (r *BenchmarkRunReconciler) create(ctx context.Context, run *v1alpha1.BenchmarkRun, obj client.Object) error {
	if err := controllerutil.SetControllerReference(run, obj, r.Scheme); err != nil {
		return err
	}
	err := r.Create(ctx, obj)
	if err == nil {
		return nil
	}
	if !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	existing, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("creating %T %s: not an object", obj, obj.GetName())
	}
	if err := r.uncached().Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return fmt.Errorf("reading %T %s: %w", obj, obj.GetName(), err)
	}
	if ownedBy(existing, run) {
		return nil
	}
	return r.removeForeign(ctx, run, existing)
}

// createAll creates every object of objs (create); objects of an earlier run found under
// their names are all removed in this one pass, and errForeign returned at the end.
func (r *BenchmarkRunReconciler) createAll(ctx context.Context, run *v1alpha1.BenchmarkRun, objs []client.Object) error {
	var foreign error
	for _, obj := range objs {
		err := r.create(ctx, run, obj)
		if errors.Is(err, errForeign) {
			foreign = cmp.Or(foreign, err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return foreign
}

// errForeign marks an object found under a name of this run that belongs to an earlier run
// of the same name (or to no run): it is not read as this run's, and the step is retried
// once it is gone.
var errForeign = errors.New("object of an earlier run of the same name (waiting for it to be deleted)")

// ownedBy tells whether obj is controlled by this very run (its UID, not only its name).
func ownedBy(obj client.Object, run *v1alpha1.BenchmarkRun) bool {
	return metav1.IsControlledBy(obj, run)
}

// removeForeign deletes obj, found under a name of run but not controlled by it, when it is
// controlled by an earlier BenchmarkRun of the same name (a UID precondition: never a newer
// object of the same name), and returns errForeign. An object no run controls is left alone.
func (r *BenchmarkRunReconciler) removeForeign(ctx context.Context, run *v1alpha1.BenchmarkRun, obj client.Object) error {
	ref := metav1.GetControllerOf(obj)
	if ref != nil && ref.Kind == "BenchmarkRun" && ref.Name == run.Name && ref.UID != run.UID && obj.GetDeletionTimestamp() == nil {
		uid := obj.GetUID()
		err := r.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !kerrors.IsNotFound(err) && !kerrors.IsConflict(err) {
			return fmt.Errorf("deleting %s of an earlier run: %w", obj.GetName(), err)
		}
	}
	return fmt.Errorf("%s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), errForeign)
}

// deleteGeneration deletes the objects of one generation of a run, except the report
// ConfigMaps and, when keepResults, the runner state and result ConfigMaps (the stored
// documents). ConfigMaps are listed past the cache, metadata only: result ConfigMaps are
// not cached.
func (r *BenchmarkRunReconciler) deleteGeneration(ctx context.Context, run *v1alpha1.BenchmarkRun, generation int64, keepResults bool) (int, error) {
	deleted := 0
	sel := labels.SelectorFromSet(runLabels(run, generation))
	configMaps := &metav1.PartialObjectMetadataList{}
	configMaps.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	lists := []client.ObjectList{&batchv1.JobList{}, &appsv1.StatefulSetList{}, &appsv1.DeploymentList{},
		&corev1.ServiceList{}, configMaps, &corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}}
	if r.operatorInstalled() {
		for _, kind := range []string{"RedisList", "RedisReplicationList", "RedisSentinelList"} {
			u := &unstructured.UnstructuredList{}
			u.SetGroupVersionKind(target.OperatorGroupVersion.WithKind(kind))
			lists = append(lists, u)
		}
	}
	notReport, _ := labels.NewRequirement(naming.LabelComponent, selection.NotIn, []string{componentReport})
	for _, list := range lists {
		s, reader := sel, client.Reader(r.Client)
		if list == configMaps {
			s, reader = sel.Add(*notReport), r.uncached()
			if keepResults {
				keep, _ := labels.NewRequirement(naming.LabelComponent, selection.NotIn, []string{componentReport, "runner", runner.ComponentResult})
				s = sel.Add(*keep)
			}
		}
		if err := reader.List(ctx, list, client.InNamespace(run.Namespace), client.MatchingLabelsSelector{Selector: s}); err != nil {
			if meta.IsNoMatchError(err) || kerrors.IsNotFound(err) {
				continue
			}
			return deleted, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return deleted, err
		}
		for _, item := range items {
			obj := item.(client.Object)
			if pm, isMeta := obj.(*metav1.PartialObjectMetadata); isMeta {
				pm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			}
			if !metav1.IsControlledBy(obj, run) {
				continue
			}
			if obj.GetDeletionTimestamp() != nil {
				continue
			}
			if err := r.Delete(ctx, obj, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
				return deleted, err
			}
			deleted++
		}
	}
	return deleted, nil
}

// operatorInstalled tells whether the OT redis-operator's API is served (remembered for
// servedTTL).
func (r *BenchmarkRunReconciler) operatorInstalled() bool {
	return r.served(target.OperatorGroupVersion.WithKind("Redis"))
}

// operatorInstalledNow is operatorInstalled, asking again when the remembered answer is "not
// installed": a new generation's target must see an operator installed a moment ago. A
// discovery that failed is an error (to retry), never "not installed".
func (r *BenchmarkRunReconciler) operatorInstalledNow() (bool, error) {
	return r.servedErr(target.OperatorGroupVersion.WithKind("Redis"), true)
}
