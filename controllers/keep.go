package controllers

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// finalizerResults holds a run that is being deleted until what its runners stored has been
// merged into a report that outlives it. Only unfinished runs carry it (a finished run's
// results are in its status and report already), so deleting a finished run, or a namespace
// of finished runs, never waits for the manager.
const finalizerResults = "bench.benchrun.io/keep-results"

// annotationKeptFrom on a report ConfigMap kept after its run was deleted names the run.
const annotationKeptFrom = "bench.benchrun.io/kept-from-deleted-run"

// deletingGrace bounds how long a deleted run waits for its results to be kept: after it the
// finalizer goes whatever happened (a deletion is never blocked for good).
const deletingGrace = 30 * time.Second

// errDeletingGaveUp: no attempt to keep a deleted run's results completed within deletingGrace
// and collectLastTry after it (the manager stopped during each): the finalizer goes.
var errDeletingGaveUp = errors.New("no attempt to keep the results completed")

// deletingLastTry: in the last seconds of deletingGrace, a deleted run's collection is the last
// one (results still unreadable are missing, what was read is kept).
const deletingLastTry = 10 * time.Second

// collectStopped merges what the runners of the run's observed generation had stored when
// it was stopped unfinished (a spec change or a deletion): the merge, status results and
// report of a normal collection, on a copy of the run for that generation. It returns the
// copy's status (results, partial reasons, report) or nil when the load never started.
//
// It has the deadline and error handling of a normal collection (collectWithDeadline): an error
// that may heal is returned to be retried until the deadline, and final makes this attempt the
// last one (a deleted run whose grace is nearly over).
func (r *BenchmarkRunReconciler) collectStopped(ctx context.Context, run *v1alpha1.BenchmarkRun, now metav1.Time, final bool) (*v1alpha1.BenchmarkRunStatus, error) {
	st := run.Status
	if finished(st.Phase) || st.LoadStartTime == nil || st.Runners == nil || st.ObservedGeneration == 0 {
		return nil, nil
	}
	old := run.DeepCopy()
	old.Generation = st.ObservedGeneration
	s := r.newStep(old)
	s.now, s.final = now, final
	if err := r.collectWithDeadline(ctx, s); err != nil {
		return nil, err
	}
	return &old.Status, nil
}

// syncFinalizer adds finalizerResults to an unfinished run and removes it from a finished
// one (a separate metadata patch after the step's status patch; a conflict waits for the
// next reconcile).
func (r *BenchmarkRunReconciler) syncFinalizer(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	want := !finished(run.Status.Phase) && run.DeletionTimestamp == nil
	if controllerutil.ContainsFinalizer(run, finalizerResults) == want {
		return nil
	}
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if want {
		controllerutil.AddFinalizer(run, finalizerResults)
	} else {
		controllerutil.RemoveFinalizer(run, finalizerResults)
	}
	if err := r.Patch(ctx, run, patch); err != nil && !kerrors.IsConflict(err) {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// deleting handles a deleted run that still carries finalizerResults: when it was deleted
// during the load, its runners are stopped and waited for (stopRunners, at most stopWait),
// what they stored is merged into a report ConfigMap that is not owned by the run and so
// outlives it; then the finalizer goes.
func (r *BenchmarkRunReconciler) deleting(ctx context.Context, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(run, finalizerResults) {
		return ctrl.Result{}, nil
	}
	s := r.newStep(run)
	if wait, err := r.stopRunners(ctx, s, "the run was deleted"); err == nil && wait {
		return r.patchStatus(ctx, s, ctrl.Result{RequeueAfter: stopPoll})
	} else if err != nil && s.now.Sub(run.DeletionTimestamp.Time) < deletingGrace {
		return ctrl.Result{}, err
	}
	now := s.now
	kept, err := "", errDeletingGaveUp
	if now.Sub(run.DeletionTimestamp.Time) < deletingGrace+collectLastTry { // past it, attempts kept crashing: read nothing
		kept, err = r.keepDeletedResults(ctx, run, now)
	}
	terminating := kerrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) // nothing can be created there any more
	if err != nil && !terminating && now.Sub(run.DeletionTimestamp.Time) < deletingGrace {
		return ctrl.Result{}, err
	}
	if err != nil {
		logf.FromContext(ctx).Error(err, "results of the deleted run not kept; deleting it anyway", "grace", deletingGrace)
		r.Recorder.Eventf(run, corev1.EventTypeWarning, v1alpha1.ReasonResultsLost, "deleted during the load; its results could not be kept: %v", err)
	} else if kept != "" {
		r.Recorder.Eventf(run, corev1.EventTypeNormal, v1alpha1.ReasonResultsKept, "deleted during the load; what its runners stored is kept in ConfigMap %s", kept)
	}
	r.History.Drop(run.Namespace, run.Name)
	return ctrl.Result{}, r.syncFinalizer(ctx, run)
}

// keepDeletedResults collects a run deleted mid-load and copies its report into a ConfigMap
// without owner (named after the run's UID, so a new run of the same name never overwrites
// it). It returns that ConfigMap's name, "" when there was nothing to keep.
func (r *BenchmarkRunReconciler) keepDeletedResults(ctx context.Context, run *v1alpha1.BenchmarkRun, now metav1.Time) (string, error) {
	final := now.Sub(run.DeletionTimestamp.Time) >= deletingGrace-deletingLastTry
	st, err := r.collectStopped(ctx, run, now, final)
	if err != nil || st == nil || st.Report == nil {
		return "", err
	}
	var report corev1.ConfigMap
	if err := r.uncached().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: st.Report.ConfigMapName}, &report); err != nil {
		return "", err
	}
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace:   run.Namespace,
		Name:        naming.Name(prefix(run, run.Status.ObservedGeneration), "report-"+string(run.UID)[:8]),
		Labels:      report.Labels,
		Annotations: map[string]string{annotationKeptFrom: run.Name},
	}, Data: report.Data}
	if err := r.Create(ctx, kept); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", err
	}
	return kept.Name, nil
}
