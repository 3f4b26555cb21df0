package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// Clock tells the time; tests inject a fake one.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
}

// realClock is the wall clock.
type realClock struct{}

// Now implements Clock.
func (realClock) Now() time.Time { return time.Now() }

// now is the reconciler's current time.
func (r *BenchmarkRunReconciler) now() time.Time {
	if r.Clock == nil {
		return realClock{}.Now()
	}
	return r.Clock.Now()
}

// event is a Kubernetes Event emitted once the status patch that caused it succeeded.
type event struct {
	kind, reason, message string
}

// step is one reconcile of one run: the status before, the status being built, the events
// of its transitions and the time it happens at.
type step struct {
	run    *v1alpha1.BenchmarkRun
	before *v1alpha1.BenchmarkRun
	now    metav1.Time
	events []event
	wake   time.Time // when the next fault is due (faults.go); zero: none
	// final: the collect deadline has passed; errors that may heal make a runner's result
	// missing instead of being retried (collectdeadline.go).
	final bool
}

// newStep starts a reconcile step.
func (r *BenchmarkRunReconciler) newStep(run *v1alpha1.BenchmarkRun) *step {
	return &step{run: run, before: run.DeepCopy(), now: metav1.NewTime(r.now().UTC().Truncate(time.Second))}
}

// event queues an Event.
func (s *step) event(kind, reason, format string, args ...any) {
	s.events = append(s.events, event{kind: kind, reason: reason, message: fmt.Sprintf(format, args...)})
}

// setPhase moves the run to phase and records the transition as an Event.
func (s *step) setPhase(phase v1alpha1.Phase, reason, format string, args ...any) {
	if s.run.Status.Phase == phase {
		return
	}
	s.run.Status.Phase = phase
	if phase != v1alpha1.PhaseQueued {
		s.run.Status.QueuePosition = ""
	}
	kind := corev1.EventTypeNormal
	if phase == v1alpha1.PhaseFailed {
		kind = corev1.EventTypeWarning
	}
	s.event(kind, reason, format, args...)
}

// setCondition sets a condition; a changed status is recorded as an Event.
func (s *step) setCondition(typ string, status metav1.ConditionStatus, reason, message string) {
	var old *metav1.Condition
	if c := apimeta.FindStatusCondition(s.run.Status.Conditions, typ); c != nil {
		cp := *c // SetStatusCondition changes the element in place
		old = &cp
	}
	message = boundText(results.OneLine(message, 2*maxConditionMessage), maxConditionMessage) // one line: runner text may be in it
	apimeta.SetStatusCondition(&s.run.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message,
		ObservedGeneration: s.run.Generation, LastTransitionTime: s.now,
	})
	if typ == v1alpha1.ConditionSucceeded {
		return // the phase Event reports the outcome
	}
	if old == nil || old.Status != status || old.Reason != reason {
		kind := corev1.EventTypeNormal
		if status == metav1.ConditionFalse && reason != reasonWaiting {
			kind = corev1.EventTypeWarning
		}
		if status != metav1.ConditionUnknown && (status != metav1.ConditionFalse || reason != reasonWaiting) {
			s.event(kind, typ+reason, "%s", message)
		}
	}
}

// maxConditionMessage bounds condition messages (the API refuses more than 32768 characters;
// a run of many failed runners lists them all otherwise).
const maxConditionMessage = 8 << 10

// condition tells whether a condition is true.
func (s *step) condition(typ string) bool {
	return apimeta.IsStatusConditionTrue(s.run.Status.Conditions, typ)
}

// requeueSoon asks for the next step right away (a status patch also triggers one).
var requeueSoon = ctrl.Result{RequeueAfter: 50 * time.Millisecond}

// Reasons used by several phases.
const (
	// reasonWaiting marks a condition not reached yet (no Event).
	reasonWaiting = v1alpha1.ReasonWaiting
)

// patchStatus patches the status with optimistic locking (a conflict requeues: the next
// reconcile starts from the newer object) and emits the step's Events after it succeeded.
func (r *BenchmarkRunReconciler) patchStatus(ctx context.Context, s *step, res ctrl.Result) (ctrl.Result, error) {
	if trimmed := fitStatus(&s.run.Status); len(trimmed) > 0 {
		s.event(corev1.EventTypeWarning, v1alpha1.ReasonStatusTrimmed, "status over %d KiB: dropped %s", maxStatusBytes>>10, strings.Join(trimmed, "; "))
	}
	if len(s.events) == 0 && equality.Semantic.DeepEqual(s.before.Status, s.run.Status) {
		return res, nil // nothing changed: no write (a poll of a thousand waiting runs costs no API writes)
	}
	patch := client.MergeFromWithOptions(s.before, client.MergeFromWithOptimisticLock{})
	if err := r.Status().Patch(ctx, s.run, patch); err != nil {
		if kerrors.IsConflict(err) {
			logf.FromContext(ctx).V(1).Info("status conflict, requeue")
			return requeueSoon, nil
		}
		if kerrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		if permanent(err) && !finished(s.before.Status.Phase) {
			return r.statusRejected(ctx, s, err)
		}
		return ctrl.Result{}, fmt.Errorf("patching status: %w", err)
	}
	if s.run.Status.Phase != s.before.Status.Phase {
		r.History.PhaseEntered(s.run, s.now.Time)
	}
	for _, e := range s.events {
		r.Recorder.Event(s.run, e.kind, e.reason, results.OneLine(e.message, maxConditionMessage)) // runner text may be in it
	}
	return res, nil
}

// statusRejected fails the run when the API server refuses its new status permanently
// (invalid, too large, forbidden): the status as stored before this step is kept, with phase
// Failed and the reason, instead of retrying the same refused patch forever.
func (r *BenchmarkRunReconciler) statusRejected(ctx context.Context, s *step, cause error) (ctrl.Result, error) {
	msg := "the API server refused the run's status: " + boundMessage(cause.Error())
	f := &step{run: s.before.DeepCopy(), before: s.before, now: s.now}
	r.finish(f, v1alpha1.PhaseFailed, v1alpha1.ReasonStatusRejected, msg)
	patch := client.MergeFromWithOptions(s.before, client.MergeFromWithOptimisticLock{})
	if err := r.Status().Patch(ctx, f.run, patch); err != nil {
		if kerrors.IsConflict(err) {
			return requeueSoon, nil
		}
		return ctrl.Result{}, fmt.Errorf("patching status: %w (after the status was refused: %w)", err, cause)
	}
	for _, e := range f.events {
		r.Recorder.Event(f.run, e.kind, e.reason, results.OneLine(e.message, maxConditionMessage))
	}
	return requeueSoon, nil
}
