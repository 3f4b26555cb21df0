package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// finish ends the run: Succeeded or Failed with a reason, the Succeeded condition and the
// completion time. Cleanup and the TTL follow in afterFinish.
func (r *BenchmarkRunReconciler) finish(s *step, phase v1alpha1.Phase, reason, message string) {
	status := metav1.ConditionFalse
	if phase == v1alpha1.PhaseSucceeded {
		status = metav1.ConditionTrue
	}
	s.run.Status.CompletionTime = &s.now
	s.setCondition(v1alpha1.ConditionSucceeded, status, reason, message)
	s.setPhase(phase, reason, "%s", message)
}
