package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ArrivalSpec makes a scenario an open model: calls are due at an arrival rate whatever the
// target answers (as k6's constant- and ramping-arrival-rate), sent by up to maxVUs
// connections per runner, and each call's latency is measured from when it was due
// (coordinated-omission corrected) as well as from when it was sent (service time). Calls that
// no connection could start in time are counted as dropped. Exactly one of rate, stages or
// search. workers × tasksPerWorker do not apply to such a scenario (maxVUs does).
// +kubebuilder:validation:XValidation:rule="(has(self.rate) ? 1 : 0) + (has(self.stages) ? 1 : 0) + (has(self.search) ? 1 : 0) == 1",message="arrival needs exactly one of rate (a constant rate), stages (linear ramps) or search (a saturation search)"
type ArrivalSpec struct {
	// Rate is the constant number of calls per timeUnit, split exactly over the runners.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000000
	// +optional
	Rate *int64 `json:"rate,omitempty"`

	// TimeUnit is the period rates are given per (default 1s).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 1s or 1m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1ms') && duration(self) <= duration('1h'))",message="arrival.timeUnit must be between 1ms and 1h"
	// +optional
	TimeUnit *metav1.Duration `json:"timeUnit,omitempty"`

	// Stages ramp the rate linearly, as k6's ramping-arrival-rate: from 0 (then from the
	// previous stage's target) to each stage's target over its duration. The scenario lasts
	// their total duration.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Stages []ArrivalStage `json:"stages,omitempty"`

	// Search runs a saturation search: constant-rate steps of growing rate, one after another;
	// the report names the highest rate that met the stop rule.
	// +optional
	Search *SearchSpec `json:"search,omitempty"`

	// MaxVUs is the number of connections (workers) of each runner (default 100): calls due
	// while all of them are busy wait, and are dropped when none could start them in time.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	MaxVUs *int32 `json:"maxVUs,omitempty"`
}

// ArrivalStage is one linear ramp of the rate.
type ArrivalStage struct {
	// Target is the rate (calls per timeUnit) reached at the stage's end.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000000
	Target int64 `json:"target"`
	// Duration is how long the ramp lasts.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('168h'))",message="arrival.stages[].duration must be between 1s and 168h"
	Duration metav1.Duration `json:"duration"`
}

// SearchSpec is a saturation search: step i (0-based) runs at startRate × factor^i (or
// startRate + i × step) calls per timeUnit for stepDuration; a step meets the stop rule when
// its corrected p99 is at most maxP99 and its failed plus dropped calls are at most
// maxErrorPercent of its calls. All maxSteps steps run; the report gives every step and the
// highest rate that met the rule.
// +kubebuilder:validation:XValidation:rule="has(self.factor) != has(self.step)",message="arrival.search needs exactly one of factor (multiply the rate each step) or step (add to it)"
// +kubebuilder:validation:XValidation:rule="has(self.maxP99) || has(self.maxErrorPercent)",message="arrival.search needs a stop rule: maxP99 and/or maxErrorPercent"
type SearchSpec struct {
	// StartRate is the first step's rate (calls per timeUnit).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000000
	StartRate int64 `json:"startRate"`
	// Factor multiplies the rate from one step to the next (more than 1, e.g. 1.5).
	// +kubebuilder:validation:XValidation:rule="self > 1.0 && self <= 100.0",message="arrival.search.factor must be more than 1 and at most 100"
	// +optional
	Factor *float64 `json:"factor,omitempty"`
	// Step is added to the rate from one step to the next (calls per timeUnit).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000000
	// +optional
	Step *int64 `json:"step,omitempty"`
	// StepDuration is how long each step runs.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('24h'))",message="arrival.search.stepDuration must be between 1s and 24h"
	StepDuration metav1.Duration `json:"stepDuration"`
	// MaxSteps is the number of steps (default 8).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=15
	// +optional
	MaxSteps *int32 `json:"maxSteps,omitempty"`
	// MaxP99 is the stop rule's highest corrected p99 latency, e.g. 10ms.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 10ms"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || duration(self) > duration('0s')",message="arrival.search.maxP99 must be positive"
	// +optional
	MaxP99 *metav1.Duration `json:"maxP99,omitempty"`
	// MaxErrorPercent is the stop rule's highest share of failed and dropped calls, in percent
	// (e.g. 0.1).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxErrorPercent *float64 `json:"maxErrorPercent,omitempty"`
}
