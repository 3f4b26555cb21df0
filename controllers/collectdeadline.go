package controllers

import (
	"errors"
	"fmt"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// enterCollecting moves the run to Collecting and starts the collect deadline (the
// ResultsCollected condition turns Unknown at that instant).
func (s *step) enterCollecting(reason, format string, args ...any) {
	s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionUnknown, v1alpha1.ReasonCollecting, "merging the runners' results")
	s.setPhase(v1alpha1.PhaseCollecting, reason, format, args...)
}

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
	since := s.now.Time
	if c := apimeta.FindStatusCondition(s.run.Status.Conditions, v1alpha1.ConditionResultsCollected); c != nil {
		since = c.LastTransitionTime.Time
	}
	if s.now.Sub(since) < collectTimeout {
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
