package v1alpha1

import (
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ArrivalSpec makes a scenario an open model: calls are due at an arrival rate whatever the
// target answers (as k6's constant- and ramping-arrival-rate), sent by up to maxVUs
// connections per runner, and each call's latency is measured from when it was due
// (coordinated-omission corrected) as well as from when it was sent (service time). Calls that
// no connection could start in time are counted as dropped. Exactly one of rate, stages or
// search. workers × tasksPerWorker do not apply to such a scenario (maxVUs does). For
// redis.get, redis.set, redis.ping, redis.command and tcp.echo (one message in flight per
// connection: no pipeline).
// +kubebuilder:validation:XValidation:rule="(has(self.rate) ? 1 : 0) + (has(self.stages) ? 1 : 0) + (has(self.search) ? 1 : 0) == 1",message="arrival needs exactly one of rate (a constant rate), stages (linear ramps) or search (a saturation search)"
// +kubebuilder:validation:XValidation:rule="!has(self.stages) || self.stages.exists(st, st.target > 0)",message="arrival.stages: every stage's target is 0, so no call would ever be due: ramp to a rate, such as stages: [{target: 1000, duration: 30s}, {target: 0, duration: 10s}]",fieldPath=".stages"
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
// maxErrorPercent of its calls. The search stops at the first step that breaks the rule
// (stopAfter: after that many in a row; 0 runs all maxSteps steps); the report gives every
// step that ran, why the search stopped and the highest rate that met the rule.
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
	// StopAfter ends the search once this many steps in a row broke the stop rule (default 1:
	// at the first such step; 0 runs every step). Each runner judges its own calls right
	// after each step; the steps not run are not in the report, which says why it stopped.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=15
	// +optional
	StopAfter *int32 `json:"stopAfter,omitempty"`
}

// Defaults of ArrivalSpec and SearchSpec fields left unset.
const (
	// DefaultArrivalMaxVUs is arrival.maxVUs when unset.
	DefaultArrivalMaxVUs = 100
	// DefaultSearchStopAfter is arrival.search.stopAfter when unset.
	DefaultSearchStopAfter = 1
	// DefaultSearchMaxSteps is arrival.search.maxSteps when unset.
	DefaultSearchMaxSteps = 8
)

// Length is how long an arrival scenario lasts when its arrival says so (stages: their total;
// search: maxSteps × stepDuration); ok is false for a constant rate (the scenario's duration
// applies) or without arrival.
func (a *ArrivalSpec) Length() (d time.Duration, ok bool) {
	switch {
	case a == nil:
		return 0, false
	case a.Search != nil:
		return time.Duration(len(a.Search.Rates())) * a.Search.StepDuration.Duration, true
	case len(a.Stages) > 0:
		for _, st := range a.Stages {
			d += st.Duration.Duration
		}
		return d, true
	}
	return 0, false
}

// Unit is the period rates are given per (timeUnit, default 1s).
func (a *ArrivalSpec) Unit() time.Duration {
	if a.TimeUnit != nil && a.TimeUnit.Duration > 0 {
		return a.TimeUnit.Duration
	}
	return time.Second
}

// Rates are the search's step rates in calls per timeUnit: startRate × factor^i rounded, or
// startRate + i × step, for maxSteps steps.
func (s *SearchSpec) Rates() []int64 {
	n := DefaultSearchMaxSteps
	if s.MaxSteps != nil {
		n = int(*s.MaxSteps)
	}
	out := make([]int64, 0, n)
	for i := range n {
		switch {
		case s.Factor != nil:
			out = append(out, int64(math.Round(float64(s.StartRate)*math.Pow(*s.Factor, float64(i)))))
		case s.Step != nil:
			out = append(out, s.StartRate+int64(i)**s.Step)
		default:
			out = append(out, s.StartRate)
		}
	}
	return out
}

// OpenModelResult is the open-model part of a scenario's result.
type OpenModelResult struct {
	// TargetRate is the intended rate in calls per second (a ramp's mean).
	TargetRate float64 `json:"targetRate"`
	// AchievedRatio is CPS / targetRate for a constant rate (arrival.rate): the calls started
	// per second of the measured (trimmed) window over the rate asked for. 0 for a ramp
	// (arrival.stages: the mean rate is not what was asked for in the trimmed window) and a
	// search (each step is a constant rate: search.steps[].achievedRatio has its ratio).
	AchievedRatio float64 `json:"achievedRatio"`
	// Dropped counts the calls due that no connection could start in time.
	// +optional
	Dropped int64 `json:"dropped,omitempty"`
	// ServiceP50Ms is the service time's median (actual send → reply), not corrected for
	// coordinated omission.
	ServiceP50Ms float64 `json:"serviceP50Ms"`
	// ServiceP99Ms is the service time's 99th percentile.
	ServiceP99Ms float64 `json:"serviceP99Ms"`
	// Search is the saturation search's outcome.
	// +optional
	Search *SearchResult `json:"search,omitempty"`
}

// SearchResult is a saturation search's outcome.
type SearchResult struct {
	// Rule is the stop rule as text.
	// +optional
	Rule string `json:"rule,omitempty"`
	// BestRate is the highest step rate (calls/s) that met the rule; 0 when none did.
	BestRate float64 `json:"bestRate"`
	// Steps are the steps that ran, in order.
	// +kubebuilder:validation:MaxItems=15
	Steps []SearchStepResult `json:"steps"`
	// StoppedAfter is the step (1-based) after which the search stopped early because the
	// rule was broken (arrival.search.stopAfter); absent when every step ran.
	// +optional
	StoppedAfter int32 `json:"stoppedAfter,omitempty"`
	// StopReason says why it stopped, e.g. "step-04: p99 945.41 ms > 100ms".
	// +optional
	StopReason string `json:"stopReason,omitempty"`
}

// SearchStepResult is one step of a saturation search.
type SearchStepResult struct {
	// TargetRate is the step's intended rate in calls per second.
	TargetRate float64 `json:"targetRate"`
	// CPS is the achieved calls per second.
	CPS float64 `json:"cps"`
	// AchievedRatio is CPS / targetRate: each step is a constant rate (0 without a target rate).
	// +optional
	AchievedRatio float64 `json:"achievedRatio,omitempty"`
	// P50Ms is the corrected latency's median.
	P50Ms float64 `json:"p50Ms"`
	// P99Ms is the corrected latency's 99th percentile.
	P99Ms float64 `json:"p99Ms"`
	// Errors counts the step's failed calls.
	// +optional
	Errors int64 `json:"errors,omitempty"`
	// Dropped counts the step's dropped calls.
	// +optional
	Dropped int64 `json:"dropped,omitempty"`
	// Passed tells whether the step met the rule.
	Passed bool `json:"passed"`
	// Cut marks a step begun before the search stopped: it ran only until the stop (or on
	// some runners only) and never counts as meeting the rule.
	// +optional
	Cut bool `json:"cut,omitempty"`
}
