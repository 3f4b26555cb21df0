package controllers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// collectTimeout bounds the Collecting phase: a run that cannot collect (merge, write its
// report and status) within it fails with the last error, keeping what it collected.
var collectTimeout = 10 * time.Minute

// errPermanent marks an error that retrying cannot heal (a report that cannot fit).
var errPermanent = errors.New("permanent")

// permanent tells whether err will not heal by retrying: the API server refused the object
// itself (invalid, too large, forbidden, bad request) or errPermanent.
func permanent(err error) bool {
	return errors.Is(err, errPermanent) || kerrors.IsInvalid(err) || kerrors.IsRequestEntityTooLargeError(err) ||
		kerrors.IsForbidden(err) || kerrors.IsBadRequest(err) || kerrors.IsMethodNotSupported(err) ||
		kerrors.IsUnsupportedMediaType(err) || kerrors.IsNotAcceptable(err)
}

// transient tells whether err may heal by retrying: throttling (429), server errors (5xx),
// timeouts, conflicts, and connections refused, reset or cut.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if kerrors.IsTooManyRequests(err) || kerrors.IsInternalError(err) || kerrors.IsServerTimeout(err) || kerrors.IsTimeout(err) ||
		kerrors.IsServiceUnavailable(err) || kerrors.IsUnexpectedServerError(err) || kerrors.IsConflict(err) {
		return true
	}
	if code := kerrors.ReasonForError(err); code == metav1.StatusReasonUnknown {
		var status kerrors.APIStatus
		if errors.As(err, &status) && status.Status().Code >= 500 {
			return true
		}
	}
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) || utilnet.IsConnectionRefused(err) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || errors.Is(err, io.ErrUnexpectedEOF)
}

// enterCollecting moves the run to Collecting and starts the collect deadline (the
// ResultsCollected condition turns Unknown at that instant).
func (s *step) enterCollecting(reason, format string, args ...any) {
	s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionUnknown, v1alpha1.ReasonCollecting, "merging the runners' results")
	s.setPhase(v1alpha1.PhaseCollecting, reason, format, args...)
}

// collectSince is when the collection of the step's generation began: the transition of its
// ResultsCollected condition (kept in the status, so a restarted manager counts from the same
// instant), or now when there is none.
func collectSince(s *step) time.Time {
	if c := apimeta.FindStatusCondition(s.run.Status.Conditions, v1alpha1.ConditionResultsCollected); c != nil {
		return c.LastTransitionTime.Time
	}
	return s.now.Time
}

// collectWithDeadline is one collection attempt of the step's generation, the deadline checked
// first: once collectTimeout has passed since the collection began, the attempt is the last
// one (s.final: a result still unreadable is missing, with the reason) and any error of its own
// fails the run keeping what it collected (collectFailed). Before the deadline an error that
// may heal is returned to be retried with backoff.
func (r *BenchmarkRunReconciler) collectWithDeadline(ctx context.Context, s *step) error {
	late := s.now.Sub(collectSince(s))
	if late >= collectTimeout+collectLastTry {
		// Every last attempt ended without a step (the manager crashed or was killed reading a
		// document, e.g. out of memory): end without reading anything again.
		msg := fmt.Sprintf("could not collect within %s: no attempt completed in the %s after the deadline "+
			"(the manager stopped during each); the runners' documents were not merged", collectTimeout, collectLastTry)
		s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, v1alpha1.ReasonCollectTimeout, msg)
		r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonCollectTimeout, msg)
		return nil
	}
	s.final = s.final || late >= collectTimeout
	return r.collectFailed(s, r.collect(ctx, s))
}

// collectLastTry is how long after the collect deadline the last attempts are made; past it a
// run still Collecting ends without reading any document again.
var collectLastTry = 2 * time.Minute

// collectFailed decides what a collect error means: a permanent one, or any error once
// collectTimeout has passed since the run entered Collecting, fails the run with the reason
// (whatever status.results this step computed is kept); other errors are retried.
func (r *BenchmarkRunReconciler) collectFailed(s *step, err error) error {
	if err == nil {
		return nil
	}
	msg := boundMessage(err.Error())
	if permanent(err) {
		s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, v1alpha1.ReasonCollectRejected, msg)
		r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonCollectRejected, "the results could not be stored: "+msg)
		return nil
	}
	if !s.final && s.now.Sub(collectSince(s)) < collectTimeout {
		return err
	}
	msg = fmt.Sprintf("could not collect within %s: %s", collectTimeout, msg)
	s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, v1alpha1.ReasonCollectTimeout, msg)
	r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonCollectTimeout, msg)
	return nil
}

// boundMessage cuts an error text for a condition message (at most 1 KiB).
func boundMessage(s string) string { return boundText(s, 1024) }

// boundText cuts s to at most limit bytes (plus a cut mark) on a UTF-8 boundary.
func boundText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + " …(cut)"
}
