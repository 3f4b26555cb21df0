package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Threshold is one pass/fail criterion on a scenario's merged figures, like a k6 threshold
// but on benchrun's exact merged numbers: `<metric> <op> <value>`.
// +kubebuilder:validation:XValidation:rule="!has(self.delayAbortEval) || (has(self.abortOnFail) && self.abortOnFail)",message="spec.thresholds[].delayAbortEval delays abortOnFail, which is not set: add abortOnFail: true, or remove delayAbortEval",fieldPath=".delayAbortEval"
// +kubebuilder:validation:XValidation:rule="!has(self.expr) || !self.expr.matches('^\\\\s*errorRate\\\\s*(<|<=|>|>=)\\\\s*(([1-9][0-9]+|[2-9])(\\\\.[0-9]+)?|1\\\\.[0-9]*[1-9][0-9]*)\\\\s*$')",message="spec.thresholds[].expr: errorRate is a fraction from 0 to 1 (errors/calls), so a value above 1 (a percent?) never decides anything: for 5 % write errorRate <= 0.05",fieldPath=".expr"
// +kubebuilder:validation:XValidation:rule="!has(self.expr) || !self.expr.matches('^\\\\s*((cps|errorRate|mean|p50|p90|p99|p999|max)\\\\s*>=\\\\s*(0+(\\\\.0*)?|-(100|[1-9][0-9]{2}|[1-9][0-9]{3,})(\\\\.[0-9]+)?%)|(cps|errorRate|mean|p50|p90|p99|p999|max)\\\\s*>\\\\s*-(10[1-9]|1[1-9][0-9]|[2-9][0-9]{2}|[1-9][0-9]{3,}|100\\\\.[0-9]*[1-9][0-9]*)(\\\\.[0-9]+)?%|errorRate\\\\s*<=\\\\s*1(\\\\.0*)?)\\\\s*$')",message="spec.thresholds[].expr can never fail (every figure is at least 0, at least -100 % of the baseline's, and errorRate at most 1), so it decides nothing and an abortOnFail on it never fires: give a bound the run can break, such as p99 < 5, cps >= 10000 or errorRate <= 0.001",fieldPath=".expr"
type Threshold struct {
	// Scenario names the scenario the threshold applies to; empty applies it to every scenario.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Scenario string `json:"scenario,omitempty"`

	// Expr is `<metric> <op> <value>`: metric cps, errorRate (errors/calls, 0..1), mean, p50,
	// p90, p99, p999 or max (latencies in ms); op <, <=, > or >=; value an absolute number
	// (`p99 < 5`, `cps >= 10000`, `errorRate <= 0.001`) or a signed percentage relative to the
	// baseline's figure (`cps >= -5%`: at least 95% of the baseline's CPS; `p99 <= +10%`).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^\\\\s*[A-Za-z][A-Za-z0-9]*') || self.matches('^\\\\s*(cps|errorRate|mean|p50|p90|p99|p999|max)([^A-Za-z0-9]|$)')",message="unknown metric: use cps, errorRate, mean, p50, p90, p99, p999 or max"
	// +kubebuilder:validation:XValidation:rule="self.matches('^\\\\s*(cps|errorRate|mean|p50|p90|p99|p999|max)\\\\s*(<|<=|>|>=)\\\\s*([0-9]+(\\\\.[0-9]+)?|[+-][0-9]+(\\\\.[0-9]+)?%)\\\\s*$')",message="a threshold is '<metric> <op> <value>' with op <, <=, > or >=, such as 'p99 < 5', 'cps >= 10000', or relative to the baseline with a sign and %, such as 'cps >= -5%' or 'p99 <= +10%'"
	Expr string `json:"expr"`

	// AbortOnFail ends the run early when this threshold is already broken by the live
	// figures while the load runs (the runners' progress, approximate): the runners are
	// stopped, what they stored is collected and the run ends Failed with reason
	// AbortedOnThreshold. It is also evaluated at collection like the other thresholds.
	// +optional
	AbortOnFail bool `json:"abortOnFail,omitempty"`

	// DelayAbortEval waits this long after the load started before abortOnFail is evaluated live.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 10s or 1m"
	// +optional
	DelayAbortEval *metav1.Duration `json:"delayAbortEval,omitempty"`
}

// BaselineSpec names the earlier run this run is compared with: by name, or the newest
// Succeeded run matching a label selector (in the run's namespace, never the run itself).
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.selector)",message="set exactly one of spec.baseline.name or spec.baseline.selector"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || !has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="spec.baseline.selector.matchExpressions[].operator must be In, NotIn, Exists or DoesNotExist, such as {key: suite, operator: In, values: [nightly]}",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || (has(self.selector.matchLabels) && size(self.selector.matchLabels) > 0) || (has(self.selector.matchExpressions) && size(self.selector.matchExpressions) > 0)",message="spec.baseline.selector is empty and would match every run: give matchLabels or matchExpressions, such as selector: {matchLabels: {suite: nightly}}",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || !has(self.selector.matchExpressions) || size(self.selector.matchExpressions) == 0 || (has(self.selector.matchLabels) && size(self.selector.matchLabels) > 0) || self.selector.matchExpressions.exists(e, e.operator in ['In', 'Exists'])",message="spec.baseline.selector has only NotIn/DoesNotExist terms, which also match every run without those labels (nearly every run): add matchLabels or an In/Exists term, such as matchExpressions: [{key: version, operator: Exists}, {key: version, operator: NotIn, values: [v2]}]",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || !has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, !(e.operator in ['In', 'NotIn']) || (has(e.values) && size(e.values) > 0))",message="spec.baseline.selector.matchExpressions[].values must not be empty with operator In or NotIn, such as {key: suite, operator: In, values: [nightly]}",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || !has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, !(e.operator in ['Exists', 'DoesNotExist']) || !has(e.values) || size(e.values) == 0)",message="spec.baseline.selector.matchExpressions[].values must be empty with operator Exists or DoesNotExist (they test the key only), such as {key: suite, operator: Exists}",fieldPath=".selector"
type BaselineSpec struct {
	// Name is a BenchmarkRun in the same namespace.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`

	// Selector picks the newest Succeeded BenchmarkRun (by completion time) whose labels match.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// Verdict is the outcome of the thresholds.
// +kubebuilder:validation:Enum=Passed;Failed
type Verdict string

const (
	// VerdictPassed means every threshold held.
	VerdictPassed Verdict = "Passed"
	// VerdictFailed means at least one threshold was broken or could not be evaluated.
	VerdictFailed Verdict = "Failed"
)

// ThresholdResult is one threshold evaluated on one scenario.
type ThresholdResult struct {
	// Scenario is the scenario evaluated.
	Scenario string `json:"scenario"`
	// Expr is the threshold as written.
	Expr string `json:"expr"`
	// Observed is the run's figure (ms for latencies, calls/s for cps, a fraction for errorRate).
	Observed float64 `json:"observed"`
	// Limit is the absolute limit compared with (a relative threshold's limit is computed from the baseline).
	// +optional
	Limit float64 `json:"limit"`
	// Passed tells whether the threshold held.
	Passed bool `json:"passed"`
	// Message explains a threshold that could not be evaluated (no baseline figure, no such scenario result).
	// +optional
	Message string `json:"message,omitempty"`
}

// BaselineStatus is the baseline's figures, copied when the run starts so that the
// comparison survives the baseline's deletion, and the deltas once the run has results.
type BaselineStatus struct {
	// Name is the baseline BenchmarkRun.
	Name string `json:"name"`
	// UID is its UID when copied.
	// +optional
	UID string `json:"uid,omitempty"`
	// Generation is its generation that produced the figures.
	// +optional
	Generation int64 `json:"generation,omitempty"`
	// CompletionTime is when the baseline finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Results are the baseline's per-scenario figures (without per-minute counts and return values).
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Results []ScenarioResult `json:"results,omitempty"`
	// Deltas compare this run with the baseline per scenario.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Deltas []ScenarioDelta `json:"deltas,omitempty"`
}

// ScenarioDelta is the relative change of one scenario against the baseline.
type ScenarioDelta struct {
	// Name is the scenario.
	Name string `json:"name"`
	// CPSPercent is (cps − baseline cps) / baseline cps × 100, 2 decimals.
	CPSPercent float64 `json:"cpsPercent"`
	// P99Percent is (p99 − baseline p99) / baseline p99 × 100, 2 decimals.
	P99Percent float64 `json:"p99Percent"`
}
