package controllers

import (
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
)

// permanentGrace is how long a runner may wait for a reason that does not heal by itself
// before the run fails: long enough for a Secret created in the same sync as the run.
const permanentGrace = time.Minute

// permanentWaits are the container waiting reasons that do not heal by themselves: a
// missing Secret or key (CreateContainerConfigError), an image reference that cannot work.
// ErrImagePull and ImagePullBackOff may be a registry hiccup: they wait for runnersReady.
var permanentWaits = []string{"CreateContainerConfigError", "InvalidImageName", "ErrImageNeverPull"}

// runnersStuck tells whether the runners of a Starting run will not all become ready: one
// waits for a permanent reason for longer than permanentGrace, or timeouts.runnersReady has
// passed since the runners were created (the RunnersReady condition turned False).
func (r *BenchmarkRunReconciler) runnersStuck(s *step, obs *observation) (reason string, stuck bool) {
	c := apimeta.FindStatusCondition(s.run.Status.Conditions, v1alpha1.ConditionRunnersReady)
	if c == nil {
		return "", false
	}
	waited := s.now.Sub(c.LastTransitionTime.Time)
	if waited >= permanentGrace {
		for _, why := range obs.waiting {
			for _, p := range permanentWaits {
				if strings.HasPrefix(why, p+":") {
					return v1alpha1.ReasonRunnersCannotStart, true
				}
			}
		}
	}
	if waited >= lifecycle.RunnersReadyTimeout(s.run) {
		return v1alpha1.ReasonRunnersNotReady, true
	}
	return "", false
}
