package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonAbortedOnThreshold is the reason of a run stopped early because its live figures
// broke an abortOnFail threshold (phase Failed, what the runners stored is kept).
const ReasonAbortedOnThreshold = "AbortedOnThreshold"

// ConditionLiveMetrics is False (reason ReasonRemoteWriteFailing) when the runners' pushes to
// spec.liveMetrics' remote-write endpoint fail; absent while none failed.
const ConditionLiveMetrics = "LiveMetrics"

// ReasonRemoteWriteFailing is the reason of a False LiveMetrics condition: pushes to the
// remote-write endpoint failed (the message counts them and gives one runner's last error;
// the load and its results are not affected).
const ReasonRemoteWriteFailing = "RemoteWriteFailing"

// LiveStatus is the load's live progress, merged over the runners' progress documents.
type LiveStatus struct {
	// UpdatedAt is when the manager last merged the runners' progress.
	UpdatedAt metav1.Time `json:"updatedAt"`
	// Runners is how many runners' progress documents were merged.
	Runners int32 `json:"runners"`
	// Ignored counts progress documents refused (too large, malformed).
	// +optional
	Ignored int32 `json:"ignored,omitempty"`
	// Scenarios are the live figures per scenario that made calls.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Scenarios []LiveScenario `json:"scenarios,omitempty"`
}

// LiveScenario is one scenario's live figures.
type LiveScenario struct {
	// Name is the scenario.
	Name string `json:"name"`
	// Calls counted so far over the runners.
	Calls int64 `json:"calls"`
	// Errors counted so far.
	// +optional
	Errors int64 `json:"errors,omitempty"`
	// CPS is calls per second so far (summed over runners).
	CPS float64 `json:"cps"`
	// P99Ms is the approximate 99th percentile latency so far (ms).
	// +optional
	P99Ms float64 `json:"p99Ms,omitempty"`
}
