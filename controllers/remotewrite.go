package controllers

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/progress"
)

// Remote-write failures (spec.liveMetrics). A runner's live-metrics pusher never blocks the
// load and only logs its first failure, and runner logs go with cleanup; its counts travel in
// the progress document each runner publishes in its state ConfigMap (progress.RemoteWrite:
// failed pushes and the last error, one line of at most 256 bytes without credentials). While
// the run loads, the manager sums them over the runners: once any push failed, condition
// LiveMetrics is False with reason RemoteWriteFailing (its first transition emits a Warning
// Event LiveMetricsRemoteWriteFailing, status.go), its message refreshed with status.live
// (at most every liveStatusInterval). The load and its results are not affected.

// followRemoteWrite sets the LiveMetrics condition from the runners' progress documents.
func followRemoteWrite(s *step, obs *observation) {
	var f progress.RemoteWriteFailures
	for _, cm := range obs.configs {
		if cm == nil {
			continue
		}
		raw, ok := cm.Data[progress.Key]
		if !ok {
			continue
		}
		if d, err := progress.Decode(raw); err == nil { // a refused document is counted by mergeProgress
			f.AddRemoteWrite(d)
		}
	}
	if f.Failed == 0 {
		return
	}
	c := apimeta.FindStatusCondition(s.run.Status.Conditions, v1alpha1.ConditionLiveMetrics)
	fresh := s.run.Status.Live != nil && s.run.Status.Live.UpdatedAt.Equal(&s.now)
	if c != nil && c.Reason == v1alpha1.ReasonRemoteWriteFailing && !fresh {
		return // refreshed with status.live, not on every step
	}
	s.setCondition(v1alpha1.ConditionLiveMetrics, metav1.ConditionFalse, v1alpha1.ReasonRemoteWriteFailing, remoteWriteMessage(f))
}

// remoteWriteMessage is the LiveMetrics condition's message.
func remoteWriteMessage(f progress.RemoteWriteFailures) string {
	msg := fmt.Sprintf("%d pushes to the remote-write endpoint failed on %d runner(s) (live metrics are incomplete; the load and its results are not affected)", f.Failed, f.Runners)
	if f.LastError != "" {
		msg += "; last error: " + f.LastError
	}
	return msg
}
