// Package controllers reconciles BenchmarkRuns: one file per phase or concern.
package controllers

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	benchv1alpha1 "github.com/benchrun/benchrun/api/v1alpha1"
)

// Images are the default images the operator deploys when a BenchmarkRun does not name one.
type Images struct {
	// Runner is the k6 runner image (benchrun's k6 build).
	Runner string
	// Redis is the Redis server image.
	Redis string
	// Valkey is the Valkey server image.
	Valkey string
	// HeTu is the HeTu bench app image.
	HeTu string
	// Proxy is the read/write-splitting proxy image.
	Proxy string
}

// Clock tells the time; tests inject a fake one.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// BenchmarkRunReconciler drives a BenchmarkRun through its phases.
type BenchmarkRunReconciler struct {
	client.Client
	// Scheme maps Go types to API kinds.
	Scheme *runtime.Scheme
	// Recorder emits Kubernetes Events at each transition.
	Recorder record.EventRecorder
	// Images are the default images.
	Images Images
	// Clock is the time source (real time when nil).
	Clock Clock
}

// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarkruns,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarkruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarkruns/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile moves one BenchmarkRun forward. The lifecycle phases (provision target, start
// runners, watch, collect, finish, clean up) live in their own files.
func (r *BenchmarkRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var run benchv1alpha1.BenchmarkRun
	if err := r.Get(ctx, req.NamespacedName, &run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if run.Status.ObservedGeneration == run.Generation && run.Status.Phase != "" {
		return ctrl.Result{}, nil
	}
	// 1. Accept the generation: Pending, with what the printer columns show.
	before := run.DeepCopy()
	run.Status.Phase = benchv1alpha1.PhasePending
	run.Status.ObservedGeneration = run.Generation
	run.Status.Scenarios = int32(len(run.Spec.Load.Scenarios))
	run.Status.Target = &benchv1alpha1.TargetStatus{Kind: TargetKind(&run.Spec.Target)}
	now := metaNow(r.now())
	run.Status.StartTime = &now
	if err := r.Status().Patch(ctx, &run, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, fmt.Errorf("patching status: %w", err)
	}
	r.Recorder.Event(&run, "Normal", "Accepted", fmt.Sprintf("generation %d accepted: %s target, %d scenarios", run.Generation, run.Status.Target.Kind, run.Status.Scenarios))
	log.V(1).Info("accepted", "generation", run.Generation)
	return ctrl.Result{}, nil
}

func (r *BenchmarkRunReconciler) now() time.Time {
	if r.Clock == nil {
		return realClock{}.Now()
	}
	return r.Clock.Now()
}

// SetupWithManager registers the reconciler with the manager.
func (r *BenchmarkRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&benchv1alpha1.BenchmarkRun{}).
		Named("benchmarkrun").
		Complete(r)
}
