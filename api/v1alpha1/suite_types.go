package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxSuiteRuns bounds a suite's expansion: variants × the sweeps' product × repeat.
const MaxSuiteRuns = 64

// BenchmarkSuiteSpec is a comparison as one object: a run template, the variants that differ
// from it, optional sweeps expanded as a product, and repetitions run interleaved.
// +kubebuilder:validation:XValidation:rule="self.variants.all(v, self.variants.exists_one(w, w.name == v.name))",message="spec.variants[].name must be unique: two variants share a name (name them by what differs, such as redis8 and redis8-io8)",fieldPath=".variants"
// +kubebuilder:validation:XValidation:rule="self.variants.filter(v, !has(v.target) && !has(v.redis) && !has(v.load) && !has(v.scenarioParams)).size() <= 1",message="spec.variants: more than one variant changes nothing (sets none of target, redis, load, scenarioParams): one variant may stand for the template as is, the others must change something, such as redis: {config: {io-threads: '8'}}; to run the same thing again use spec.repeat",fieldPath=".variants"
// +kubebuilder:validation:XValidation:rule="size(self.variants) * (has(self.sweeps) && size(self.sweeps) > 0 ? size(self.sweeps[0].values) : 1) * (has(self.sweeps) && size(self.sweeps) > 1 ? size(self.sweeps[1].values) : 1) * (has(self.sweeps) && size(self.sweeps) > 2 ? size(self.sweeps[2].values) : 1) * (has(self.repeat) ? self.repeat : 1) <= 64",message="spec: the suite expands to more than 64 runs (variants × the product of the sweeps' values × repeat): drop variants or sweep values, or lower repeat, such as 2 variants × 4 workers values × repeat 3 = 24 runs",fieldPath=".variants"
// +kubebuilder:validation:XValidation:rule="!has(self.reference) || self.variants.exists(v, v.name == self.reference)",message="spec.reference must name one of spec.variants, such as reference: redis8",fieldPath=".reference"
// +kubebuilder:validation:XValidation:rule="!has(self.thresholds) || self.thresholds.all(t, self.variants.exists(v, v.name == t.variant))",message="spec.thresholds[].variant must name one of spec.variants, such as variant: redis8-io8",fieldPath=".thresholds"
// +kubebuilder:validation:XValidation:rule="!has(self.thresholds) || self.thresholds.all(t, !has(t.scenario) || self.template.load.scenarios.exists(s, s.name == t.scenario))",message="spec.thresholds[].scenario must name one of spec.template.load.scenarios",fieldPath=".thresholds"
// +kubebuilder:validation:XValidation:rule="!has(self.thresholds) || self.thresholds.all(t, !t.expr.matches('%\\\\s*$') || t.variant != (has(self.reference) ? self.reference : self.variants[0].name))",message="spec.thresholds[]: a relative threshold on the reference variant (spec.reference, default the first variant) compares it with itself: name another variant",fieldPath=".thresholds"
// +kubebuilder:validation:XValidation:rule="self.variants.all(v, !has(v.scenarioParams) || v.scenarioParams.all(k, self.template.load.scenarios.exists(s, s.name == k)))",message="spec.variants[].scenarioParams keys must name scenarios of spec.template.load.scenarios, such as scenarioParams: {get: {batch: '10'}}",fieldPath=".variants"
// +kubebuilder:validation:XValidation:rule="self.variants.all(v, !has(v.redis) || (has(v.target) ? (has(v.target.redis) || has(v.target.hetu)) : (has(self.template.target.redis) || (has(self.template.target.hetu) && has(self.template.target.hetu.backend.redis)))))",message="spec.variants[].redis changes a Redis that benchrun deploys (target.redis, or target.hetu.backend.redis): the variant's target (or the template's) has none",fieldPath=".variants"
// +kubebuilder:validation:XValidation:rule="!has(self.sweeps) || self.sweeps.all(w, w.field != 'bodySize' || self.template.load.scenarios.all(s, s.type in ['redis.get', 'redis.set', 'ycsb', 'script', 'tcp.echo', 'http', 'grpc']))",message="spec.sweeps: a bodySize sweep sets every scenario's bodySize, which applies only to redis.get, redis.set, ycsb, script, tcp.echo, http and grpc scenarios",fieldPath=".sweeps"
// +kubebuilder:validation:XValidation:rule="!has(self.sweeps) || self.sweeps.all(w, w.field != 'rate' || self.template.load.scenarios.all(s, has(s.arrival) && has(s.arrival.rate)))",message="spec.sweeps: a rate sweep sets every scenario's arrival.rate, so every scenario of the template needs arrival.rate (an open-model scenario), such as arrival: {rate: 1000, maxVUs: 200}",fieldPath=".sweeps"
type BenchmarkSuiteSpec struct {
	// Template is the BenchmarkRun spec every child run starts from.
	Template BenchmarkRunSpec `json:"template"`

	// Variants are what is compared: each a name and what it changes in the template (none
	// of target, redis, load, scenarioParams for at most one variant: the template as is).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Variants []SuiteVariant `json:"variants"`

	// Sweeps run every variant at each combination of these values (a product).
	// +kubebuilder:validation:MaxItems=3
	// +listType=map
	// +listMapKey=field
	// +optional
	Sweeps []SuiteSweep `json:"sweeps,omitempty"`

	// Repeat runs each variant (and sweep point) this many times, interleaved (A B A B ...)
	// so that drift hits every variant alike; the tables then give mean, spread and a 95 %
	// confidence interval (default 1).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=1
	// +optional
	Repeat int32 `json:"repeat,omitempty"`

	// Reference names the variant every other is compared with (deltas, relative
	// thresholds, significance); default: the first variant.
	// +kubebuilder:validation:MaxLength=30
	// +optional
	Reference string `json:"reference,omitempty"`

	// Parallel lets the child runs overlap (all created at once); default false: one after
	// another, the next created when the previous ended.
	// +optional
	Parallel bool `json:"parallel,omitempty"`

	// ContinueOnFailure keeps the suite going when a child run fails (default true); the
	// failed child is shown as failed in every table. False stops creating children and
	// fails the suite.
	// +kubebuilder:default=true
	// +optional
	ContinueOnFailure *bool `json:"continueOnFailure,omitempty"`

	// Thresholds compare variants with the reference and decide the suite's verdict.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Thresholds []SuiteThreshold `json:"thresholds,omitempty"`
}

// SuiteVariant is one compared thing: a name and what it changes in the template.
// +kubebuilder:validation:XValidation:rule="!has(self.scenarioParams) || self.scenarioParams.all(k, size(self.scenarioParams[k]) > 0)",message="spec.variants[].scenarioParams: a scenario's params are empty (they change nothing), such as scenarioParams: {get: {batch: '10'}}",fieldPath=".scenarioParams"
type SuiteVariant struct {
	// Name names the variant in tables and its child runs' names (lower-case letters,
	// digits and '-', at most 30 characters), such as redis8-io8.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=30
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="variant names use lower-case letters, digits and '-' (they end up in the child runs' names), such as redis8-io8"
	Name string `json:"name"`

	// Target replaces the template's target as a whole (another kind: an external endpoint
	// beside an in-cluster Redis, Valkey, HeTu...). Its schema is a BenchmarkRun's
	// spec.target; it is checked in full when the suite starts (every child run is created
	// as a server-side dry run first, so a bad target fails the suite before anything runs)
	// and by `benchrun validate`: the full target schema in a list of variants exceeds the
	// API server's CEL cost budget, so admission checks only its shape here.
	// +kubebuilder:validation:XValidation:rule="(has(self.hetu) ? 1 : 0) + (has(self.redis) ? 1 : 0) + (has(self.external) ? 1 : 0) + (has(self.custom) ? 1 : 0) == 1",message="spec.variants[].target: set exactly one of hetu, redis, external or custom (a whole BenchmarkRun target), such as target: {external: {kind: redis, addresses: ['r-bp1xxxx.redis.rds.aliyuncs.com:6379']}}"
	// +optional
	Target *VariantTarget `json:"target,omitempty"`

	// Redis changes the Redis benchrun deploys (target.redis, or target.hetu.backend.redis),
	// applied after target: engine, image or version, and config merged key by key.
	// +optional
	Redis *VariantRedis `json:"redis,omitempty"`

	// Load changes the load settings.
	// +optional
	Load *VariantLoad `json:"load,omitempty"`

	// ScenarioParams merges params into scenarios of the template, by scenario name.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	ScenarioParams map[string]VariantParams `json:"scenarioParams,omitempty"`
}

// VariantTarget is a BenchmarkRun target (TargetSpec) in a variant. Each kind's schema is
// left open here: the full target schema in a list of variants exceeds the API server's CEL
// cost budget. It is checked in full when the suite starts (every child run is created as a
// server-side dry run first, so a bad target fails the suite before anything runs) and by
// `benchrun validate`.
type VariantTarget struct {
	// HeTu is as spec.target.hetu of a BenchmarkRun.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	HeTu *HeTuTarget `json:"hetu,omitempty"`
	// Redis is as spec.target.redis of a BenchmarkRun.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Redis *RedisTarget `json:"redis,omitempty"`
	// External is as spec.target.external of a BenchmarkRun.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	External *ExternalTarget `json:"external,omitempty"`
	// Custom is as spec.target.custom of a BenchmarkRun.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Custom *CustomTarget `json:"custom,omitempty"`
}

// TargetSpec is the variant's target as a BenchmarkRun target.
func (t *VariantTarget) TargetSpec() TargetSpec {
	return TargetSpec{HeTu: t.HeTu, Redis: t.Redis, External: t.External, Custom: t.Custom}
}

// VariantParams are params merged into one scenario's params.
// +kubebuilder:validation:MaxProperties=16
type VariantParams map[string]VariantParamValue

// VariantParamValue is one scenario param value of a variant.
// +kubebuilder:validation:MaxLength=256
type VariantParamValue string

// VariantRedis changes a deployed Redis.
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:XValidation:rule="!has(self.version) || !has(self.image)",message="spec.variants[].redis: set either version (a tag of the default image) or image, not both"
type VariantRedis struct {
	// Engine is redis or valkey.
	// +optional
	Engine RedisEngine `json:"engine,omitempty"`
	// Image replaces the Redis image.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`
	// Version is a tag of the default image, such as 8.4.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Version string `json:"version,omitempty"`
	// Config is merged into the Redis config key by key, such as io-threads: '8'.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z][a-z0-9-]*$'))",message="config keys must be Redis directive names in lower case, such as io-threads or maxmemory-policy"
	// +kubebuilder:validation:XValidation:rule="!('requirepass' in self) && !('masterauth' in self)",message="do not put passwords in config: use passwordSecretRef"
	// +optional
	Config map[string]RedisConfigValue `json:"config,omitempty"`
}

// VariantLoad changes load settings of the template.
// +kubebuilder:validation:MinProperties=1
type VariantLoad struct {
	// Workers replaces load.workers.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +optional
	Workers *int32 `json:"workers,omitempty"`
	// TasksPerWorker replaces load.tasksPerWorker.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	TasksPerWorker *int32 `json:"tasksPerWorker,omitempty"`
	// Parallelism replaces load.runners.parallelism (the number of runner pods).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`
}

// SweepField is a template field a sweep may vary.
// +kubebuilder:validation:Enum=workers;tasksPerWorker;bodySize;rate
type SweepField string

const (
	// SweepWorkers sets load.workers.
	SweepWorkers SweepField = "workers"
	// SweepTasksPerWorker sets load.tasksPerWorker (virtual users per worker).
	SweepTasksPerWorker SweepField = "tasksPerWorker"
	// SweepBodySize sets every scenario's bodySize.
	SweepBodySize SweepField = "bodySize"
	// SweepRate sets every scenario's arrival.rate.
	SweepRate SweepField = "rate"
)

// SuiteSweep is one field and the values it takes.
type SuiteSweep struct {
	// Field is workers, tasksPerWorker, bodySize or rate.
	Field SweepField `json:"field"`
	// Values are the values, in table order, such as [1, 2, 4, 8].
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=16777216
	Values []int64 `json:"values"`
}

// SuiteThreshold compares one variant's mean figure with the reference's (relative: a signed
// percentage) or with an absolute limit.
type SuiteThreshold struct {
	// Variant is the variant judged.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=30
	Variant string `json:"variant"`

	// Scenario limits the threshold to one scenario; empty: every scenario.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Scenario string `json:"scenario,omitempty"`

	// Expr is `<metric> <op> <value>` as for BenchmarkRun thresholds, on the variant's mean
	// over its repetitions; a signed percentage is relative to the reference variant's mean
	// (`cps >= -5%`: at least 95 % of the reference's CPS).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^\\\\s*(cps|errorRate|mean|p50|p90|p99|p999|max)\\\\s*(<|<=|>|>=)\\\\s*([0-9]+(\\\\.[0-9]+)?|[+-][0-9]+(\\\\.[0-9]+)?%)\\\\s*$')",message="a threshold is '<metric> <op> <value>' with metric cps, errorRate, mean, p50, p90, p99, p999 or max and op <, <=, > or >=, such as 'p99 < 5', or relative to the reference with a sign and %, such as 'cps >= -5%'"
	Expr string `json:"expr"`

	// Significance makes a broken relative threshold fail only when the difference from the
	// reference is statistically significant (two-sided, p < 0.05): a paired t-test on the log
	// ratios of the runs of each repetition (interleaved, so drift hits both alike) when every
	// successful run has its pair, else Mann–Whitney U on the per-run figures (needs 4 runs a
	// side to ever be significant); inside the noise it is "no significant difference" and passes.
	// +optional
	Significance bool `json:"significance,omitempty"`
}

// SuitePhase is where a BenchmarkSuite is.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type SuitePhase string

const (
	// SuitePending means no child run was created yet.
	SuitePending SuitePhase = "Pending"
	// SuiteRunning means child runs are being created or are running.
	SuiteRunning SuitePhase = "Running"
	// SuiteSucceeded means every child ended and the verdict (if any) passed.
	SuiteSucceeded SuitePhase = "Succeeded"
	// SuiteFailed means a child failed (without continueOnFailure), a child could not be
	// created, or the verdict failed.
	SuiteFailed SuitePhase = "Failed"
)

// BenchmarkSuiteStatus is what the operator observed of the suite's child runs.
type BenchmarkSuiteStatus struct {
	// Phase is Pending, Running, Succeeded or Failed.
	// +optional
	Phase SuitePhase `json:"phase,omitempty"`
	// Conditions: ChildrenComplete, ThresholdsMet, Succeeded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Progress is "<ended>/<total>" child runs, for the printer column.
	// +optional
	Progress string `json:"progress,omitempty"`
	// Children are the child runs in run order.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Children []SuiteChild `json:"children,omitempty"`
	// Table is the combined table: per scenario × variant (× sweep point) the figures over
	// the repetitions, with deltas against the reference.
	// +kubebuilder:validation:MaxItems=512
	// +optional
	Table []SuiteRow `json:"table,omitempty"`
	// Verdict is Passed or Failed once the thresholds were evaluated (unset without thresholds).
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// Thresholds is every threshold evaluated per scenario (and sweep point).
	// +kubebuilder:validation:MaxItems=512
	// +optional
	Thresholds []SuiteThresholdResult `json:"thresholds,omitempty"`
	// Report names the ConfigMap with report.md and table.json.
	// +optional
	Report *ReportRef `json:"report,omitempty"`
	// CompletionTime is when the suite ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// SuiteChild is one child run.
type SuiteChild struct {
	// Name is the BenchmarkRun's name.
	Name string `json:"name"`
	// Variant is the variant it runs.
	Variant string `json:"variant"`
	// Sweep is the sweep point, such as workers=8,bodySize=1024 (empty without sweeps).
	// +optional
	Sweep string `json:"sweep,omitempty"`
	// Repetition counts from 1.
	Repetition int32 `json:"repetition"`
	// Phase is the child's phase (empty before it is created).
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Reason is why a child failed (its Succeeded condition's reason and message, one line).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Reason string `json:"reason,omitempty"`
}

// SuiteThresholdResult is one suite threshold evaluated on one scenario (and sweep point).
type SuiteThresholdResult struct {
	// Variant is the variant judged.
	Variant string `json:"variant"`
	// Scenario is the scenario evaluated.
	Scenario string `json:"scenario"`
	// Sweep is the sweep point (empty without sweeps).
	// +optional
	Sweep string `json:"sweep,omitempty"`
	// Expr is the threshold as written.
	Expr string `json:"expr"`
	// Observed is the variant's mean figure over its successful runs.
	Observed float64 `json:"observed"`
	// Limit is the absolute limit compared with (a relative one computed from the reference's mean).
	// +optional
	Limit float64 `json:"limit"`
	// PValue is the p-value against the reference (significance thresholds): paired t-test on
	// the log ratios per repetition, else Mann–Whitney U (the message names the test).
	// +optional
	PValue *float64 `json:"pValue,omitempty"`
	// Passed tells whether the threshold held (or was broken inside the noise with significance).
	Passed bool `json:"passed"`
	// Message explains the outcome: no significant difference, no successful run...
	// +optional
	Message string `json:"message,omitempty"`
}

// SuiteRow is one scenario × variant (× sweep point) of the combined table.
type SuiteRow struct {
	// Scenario is the scenario name.
	Scenario string `json:"scenario"`
	// Variant is the variant name.
	Variant string `json:"variant"`
	// Sweep is the sweep point (empty without sweeps).
	// +optional
	Sweep string `json:"sweep,omitempty"`
	// Runs is the number of repetitions with results for this scenario.
	Runs int32 `json:"runs"`
	// Failed is the number of repetitions that failed (they are not in the figures).
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// CPS is calls per second over the repetitions.
	CPS Stat `json:"cps"`
	// P50 is the median latency (ms).
	P50 Stat `json:"p50"`
	// P99 is the 99th percentile latency (ms).
	P99 Stat `json:"p99"`
	// P999 is the 99.9th percentile latency (ms).
	P999 Stat `json:"p999"`
	// Errors is the total of failed calls over the repetitions.
	// +optional
	Errors int64 `json:"errors,omitempty"`
	// CPSDeltaPercent is the mean CPS against the reference's, in % (unset for the reference).
	// +optional
	CPSDeltaPercent *float64 `json:"cpsDeltaPercent,omitempty"`
	// P99DeltaPercent is the mean p99 against the reference's, in %.
	// +optional
	P99DeltaPercent *float64 `json:"p99DeltaPercent,omitempty"`
	// CPSPValue is the two-sided p-value of the CPS against the reference's per-run CPS: the
	// paired t-test on log ratios when every successful run of both has its repetition's pair
	// (2 or more), else Mann–Whitney U (unset for the reference or with fewer than 2 runs a side).
	// +optional
	CPSPValue *float64 `json:"cpsPValue,omitempty"`
	// Significant is true when CPSPValue < 0.05.
	// +optional
	Significant bool `json:"significant,omitempty"`
}

// Stat is a figure over repetitions: mean, sample standard deviation and 95 % confidence
// interval of the mean (Student's t); with one run the interval is that run's value.
type Stat struct {
	// Mean is the arithmetic mean.
	Mean float64 `json:"mean"`
	// SD is the sample standard deviation (n-1).
	// +optional
	SD float64 `json:"sd,omitempty"`
	// Low is the 95 % confidence interval's lower end.
	// +optional
	Low float64 `json:"low,omitempty"`
	// High is the 95 % confidence interval's upper end.
	// +optional
	High float64 `json:"high,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bs;benchsuite,categories=benchrun
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Runs",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Reference",type=string,JSONPath=`.spec.reference`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.metadata.name) || size(self.metadata.name) <= 30",message="metadata.name of a BenchmarkSuite must be at most 30 characters: it starts its child runs' names (<suite>-<variant>-r<k>), such as redis-compare"
// +kubebuilder:validation:XValidation:rule="!has(self.metadata.name) || self.metadata.name == '' || self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",messageExpression="'metadata.name ' + self.metadata.name + ' must start with a lowercase letter and hold only lowercase letters, digits and - (no dots): it starts the names of its child runs (for example redis-compare)'"

// BenchmarkSuite is a comparison as one object: child BenchmarkRuns (one per variant, sweep
// point and repetition) run one after another on the template's load pool, and their results
// combined into one table with deltas, confidence intervals and a noise-aware verdict.
type BenchmarkSuite struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the user asks for. It cannot change once created (the children already run
	// it): delete the suite and create it again.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec of a BenchmarkSuite cannot change after it was created (its child runs were expanded from it): delete the suite and create it again, or create a new one such as redis-compare-2"
	Spec BenchmarkSuiteSpec `json:"spec"`
	// Status is what the operator observed.
	// +optional
	Status BenchmarkSuiteStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkSuiteList is a list of BenchmarkSuites.
type BenchmarkSuiteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the BenchmarkSuites.
	Items []BenchmarkSuite `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkSuite{}, &BenchmarkSuiteList{})
}
