package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/suite"
)

// BenchmarkSuiteReconciler runs a BenchmarkSuite: it creates the child BenchmarkRuns
// (controller-owned, named predictably) one after another, or all at once when parallel,
// reads each child's results when it ends, and writes the combined table, the verdict and a
// report ConfigMap. The children are ordinary runs: the BenchmarkRun controller runs them
// and their load pool's queue orders them.
type BenchmarkSuiteReconciler struct {
	// Client reads (cached) and writes.
	Client client.Client
	// APIReader reads past the cache (the report ConfigMap); nil: Client.
	APIReader client.Reader
	// Scheme sets owner references.
	Scheme *runtime.Scheme
	// Recorder emits Events.
	Recorder record.EventRecorder
	// Clock tells the time (tests inject a fake one); nil: the wall clock.
	Clock Clock
}

// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarksuites,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarksuites/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarksuites/finalizers,verbs=update
// +kubebuilder:rbac:groups=bench.benchrun.io,resources=benchmarkruns,verbs=create;get;list;watch

// SetupWithManager registers the controller: suites, and the child runs they own.
func (r *BenchmarkSuiteReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BenchmarkSuite{}).
		Owns(&v1alpha1.BenchmarkRun{}).
		Named("benchmarksuite").
		Complete(r)
}

// suiteStep is one reconcile of one suite: the status before, the status being built and the
// Events of its transitions (emitted after the patch).
type suiteStep struct {
	s      *v1alpha1.BenchmarkSuite
	before *v1alpha1.BenchmarkSuite
	now    metav1.Time
	events []event
}

// event queues an Event.
func (st *suiteStep) event(kind, reason, format string, args ...any) {
	st.events = append(st.events, event{kind: kind, reason: reason, message: fmt.Sprintf(format, args...)})
}

// condition sets a condition of the suite.
func (st *suiteStep) condition(typ string, status metav1.ConditionStatus, reason, message string) {
	apimeta.SetStatusCondition(&st.s.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: message, ObservedGeneration: st.s.Generation, LastTransitionTime: st.now})
}

// Reconcile drives one suite one step:
//  1. fetch the suite; an ended suite is done;
//  2. expand it into its children (internal/suite) and, the first time, create each as a
//     server-side dry run: a child the API server refuses fails the suite, nothing created;
//  3. observe the children (phase, reason) from the cache and the suite's own status;
//  4. create the next child (the first not created, when none is running) or, parallel, all;
//  5. when every child ended: the combined table, the verdict and the report ConfigMap;
//  6. one optimistic-lock status patch; then the Events.
func (r *BenchmarkSuiteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var s v1alpha1.BenchmarkSuite // 1
	if err := r.Client.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if s.Status.Phase == v1alpha1.SuiteSucceeded || s.Status.Phase == v1alpha1.SuiteFailed {
		return ctrl.Result{}, nil
	}
	st := &suiteStep{s: &s, before: s.DeepCopy(), now: metav1.NewTime(r.now().UTC().Truncate(time.Second))}
	children, err := suite.Expand(&s) // 2
	if err != nil {
		r.failSuite(st, v1alpha1.ReasonInvalidSpec, err.Error())
		return r.patch(ctx, st)
	}
	if s.Status.Phase == "" {
		s.Status.Phase, s.Status.ObservedGeneration = v1alpha1.SuitePending, s.Generation
		if msg := r.dryRun(ctx, &s, children); msg != "" {
			r.failSuite(st, v1alpha1.ReasonInvalidVariant, msg)
			return r.patch(ctx, st)
		}
	}
	if err := r.observe(ctx, st, children); err != nil { // 3
		return ctrl.Result{}, err
	}
	if err := r.createNext(ctx, st, children); err != nil { // 4
		return ctrl.Result{}, err
	}
	if ended(st.s.Status.Children) == len(children) { // 5
		if err := r.finish(ctx, st); err != nil {
			log.Error(err, "writing the suite's report")
			return ctrl.Result{}, err
		}
	}
	return r.patch(ctx, st) // 6
}

// now is the reconciler's current time.
func (r *BenchmarkSuiteReconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// failSuite ends the suite Failed with reason and message.
func (r *BenchmarkSuiteReconciler) failSuite(st *suiteStep, reason, message string) {
	st.s.Status.Phase = v1alpha1.SuiteFailed
	st.s.Status.ObservedGeneration = st.s.Generation
	st.s.Status.CompletionTime = &st.now
	st.condition(v1alpha1.ConditionSucceeded, metav1.ConditionFalse, reason, message)
	st.event(corev1.EventTypeWarning, reason, "%s", message)
}

// patch writes the status with an optimistic lock (a conflict requeues) and then emits the
// step's Events.
func (r *BenchmarkSuiteReconciler) patch(ctx context.Context, st *suiteStep) (ctrl.Result, error) {
	if !equality.Semantic.DeepEqual(st.before.Status, st.s.Status) {
		p := client.MergeFromWithOptions(st.before, client.MergeFromWithOptimisticLock{})
		if err := r.Client.Status().Patch(ctx, st.s, p); err != nil {
			if kerrors.IsConflict(err) {
				return requeueSoon, nil
			}
			return ctrl.Result{}, err
		}
	}
	for _, e := range st.events {
		r.Recorder.Event(st.s, e.kind, e.reason, e.message)
	}
	return ctrl.Result{}, nil
}
