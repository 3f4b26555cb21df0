package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phase is where a BenchmarkRun is in its lifecycle.
// +kubebuilder:validation:Enum=Pending;Queued;Provisioning;Starting;Running;Collecting;Succeeded;Failed
type Phase string

const (
	// PhasePending means the run was accepted and nothing was created yet.
	PhasePending Phase = "Pending"
	// PhaseQueued means the run waits for its load pool (load.runners.pool) or its external
	// target's endpoints (held by another run); nothing was created yet.
	PhaseQueued Phase = "Queued"
	// PhaseProvisioning means the target is being deployed and is not ready yet.
	PhaseProvisioning Phase = "Provisioning"
	// PhaseStarting means the runners are being scheduled and wait at the start barrier.
	PhaseStarting Phase = "Starting"
	// PhaseRunning means the load is running.
	PhaseRunning Phase = "Running"
	// PhaseCollecting means the runners finished and their results are being merged.
	PhaseCollecting Phase = "Collecting"
	// PhaseSucceeded means every runner finished and the results were merged.
	PhaseSucceeded Phase = "Succeeded"
	// PhaseFailed means the run failed; partial results, if any, are kept and marked partial.
	PhaseFailed Phase = "Failed"
)

// BenchmarkRunStatus is what the operator observed and measured.
type BenchmarkRunStatus struct {
	// Phase is the lifecycle phase: Pending, Queued, Provisioning, Starting, Running, Collecting, Succeeded or Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// QueuePosition is the run's place in line while Queued, such as 2/3 (second of three
	// runs waiting; 1/N: next), as the Queued condition's message says; empty otherwise.
	// +optional
	QueuePosition string `json:"queuePosition,omitempty"`

	// Conditions are the standard conditions: Queued, BaselineResolved, TargetReady, RunnersReady, LoadComplete,
	// ResultsCollected, ThresholdsMet, Succeeded and LiveMetrics (types and reasons: the Condition* and Reason* constants).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// StartTime is when the operator started working on this generation.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// LoadStartTime is when the runners were released from the start barrier.
	// +optional
	LoadStartTime *metav1.Time `json:"loadStartTime,omitempty"`

	// CompletionTime is when the run reached Succeeded or Failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Target describes the deployed (or external) target.
	// +optional
	Target *TargetStatus `json:"target,omitempty"`

	// Runners counts the runner pods by state.
	// +optional
	Runners *RunnersStatus `json:"runners,omitempty"`

	// Scenarios is the number of scenarios, for the printer column.
	// +optional
	Scenarios int32 `json:"scenarios,omitempty"`

	// BestCPS is the highest scenario CPS as text (e.g. "140,217.49 hello_world"), for the printer column.
	// +optional
	BestCPS string `json:"bestCPS,omitempty"`

	// Partial is true when the results miss data from a runner that did not finish.
	// +optional
	Partial bool `json:"partial,omitempty"`

	// PartialReasons say which runner data is missing and why.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	PartialReasons []string `json:"partialReasons,omitempty"`

	// Results are the merged results per scenario, in run order: the seed tables' numbers.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Results []ScenarioResult `json:"results,omitempty"`

	// Resources is the measured CPU and memory per role (target roles and runners).
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Resources []ResourceUsage `json:"resources,omitempty"`

	// Report names the ConfigMap with the rendered report (markdown and JSON).
	// +optional
	Report *ReportRef `json:"report,omitempty"`

	// Verdict is Passed or Failed once thresholds were evaluated (unset without thresholds).
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`

	// Thresholds is every threshold evaluated per scenario: observed vs limit.
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`

	// Baseline is the baseline's figures copied at start, and the deltas against them.
	// +optional
	Baseline *BaselineStatus `json:"baseline,omitempty"`

	// Live is the load's live progress while Running, merged over the runners' progress
	// documents (approximate; the exact figures are status.results after collection).
	// +optional
	Live *LiveStatus `json:"live,omitempty"`

	// History keeps the results of earlier generations of this run (the newest first, at most 10),
	// so that changing the spec of a finished run starts a new run without losing the old numbers.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	History []RunRecord `json:"history,omitempty"`

	// Faults are spec.faults as applied (one entry per fault once it is due), with the
	// failover measured after each.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Faults []FaultStatus `json:"faults,omitempty"`
}

// TargetStatus describes the target.
type TargetStatus struct {
	// Kind summarises the target, e.g. hetu, redis/single, redis/ha, valkey/proxy, external/redis.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Provider is what deployed it: builtin, redis-operator or external.
	// +optional
	Provider string `json:"provider,omitempty"`
	// Endpoints are the addresses the runners use, by role.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	// ReadyTime is when the target became ready.
	// +optional
	ReadyTime *metav1.Time `json:"readyTime,omitempty"`
}

// Endpoint is one address the runners use.
type Endpoint struct {
	// Role is what the address serves: hetu, master, replica, sentinel, proxy, redis.
	Role string `json:"role"`
	// Address is host:port.
	Address string `json:"address"`
}

// RunnersStatus counts runner pods.
type RunnersStatus struct {
	// Desired is the number of runner pods asked for.
	Desired int32 `json:"desired"`
	// Ready is the number of runners waiting at the start barrier or running.
	// +optional
	Ready int32 `json:"ready,omitempty"`
	// Succeeded is the number of runners that finished and stored their results.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// Failed is the number of runners that failed, were evicted or OOM-killed.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// StartSkew is the measured spread of the runners' actual load start times (e.g. "12ms").
	// +optional
	StartSkew string `json:"startSkew,omitempty"`
}

// ScenarioResult is the merged result of one scenario: the numbers of the seed tables.
type ScenarioResult struct {
	// Name is the scenario name.
	Name string `json:"name"`
	// Type is the scenario type.
	// +optional
	Type string `json:"type,omitempty"`
	// Calls is the number of calls (the seeds' Count).
	Calls int64 `json:"calls"`
	// Errors is the number of failed calls.
	// +optional
	Errors int64 `json:"errors,omitempty"`
	// CPS is calls per second after warm-up/cool-down trimming (the seeds' Average CPS).
	CPS float64 `json:"cps"`
	// LatencyMs are the call latency statistics in milliseconds.
	LatencyMs LatencyMs `json:"latencyMs"`
	// ReturnValues is the return-value distribution (top values).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ReturnValues []ValueCount `json:"returnValues,omitempty"`
	// CallsPerMinute counts calls per minute of the scenario (first and last minute partial).
	// +kubebuilder:validation:MaxItems=10080
	// +optional
	CallsPerMinute []int64 `json:"callsPerMinute,omitempty"`
	// Operations are the per-operation results (YCSB read, update, insert), compact: the
	// Pegasus table's figures.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Operations []OperationResult `json:"operations,omitempty"`
	// ServerCalls is the target's own count of the scenario's commands (Redis INFO
	// commandstats around the scenario), to compare with Calls (the protocol table's PROTO/METRICS).
	// +optional
	ServerCalls *int64 `json:"serverCalls,omitempty"`
	// Open holds an arrival-rate scenario's open-model figures (LatencyMs is then corrected for
	// coordinated omission: from each call's intended start).
	// +optional
	Open *OpenModelResult `json:"open,omitempty"`
	// TransferMiBPerSec is a tcp.echo scenario's bytes read back from the target per second
	// over its calls' span, in MiB, 2 decimals: the echo table's Transfer/sec.
	// +optional
	TransferMiBPerSec float64 `json:"transferMiBPerSec,omitempty"`
}

// OperationResult is one operation of a scenario, latencies in microseconds.
type OperationResult struct {
	// Name is the operation (read, update, insert).
	Name string `json:"name"`
	// Calls is the number of calls of the operation.
	Calls int64 `json:"calls"`
	// CPS is its calls per second after trimming.
	CPS float64 `json:"cps"`
	// MeanUs is the mean latency in µs.
	MeanUs int64 `json:"meanUs"`
	// P99Us is the 99th percentile latency in µs.
	P99Us int64 `json:"p99Us"`
	// P999Us is the 99.9th percentile latency in µs.
	P999Us int64 `json:"p999Us"`
}

// LatencyMs are latency statistics in milliseconds, 2 decimals.
type LatencyMs struct {
	// Mean is the arithmetic mean.
	Mean float64 `json:"mean"`
	// P50 is the 50th percentile (the seeds' k50).
	P50 float64 `json:"p50"`
	// P90 is the 90th percentile (k90).
	P90 float64 `json:"p90"`
	// P99 is the 99th percentile (k99).
	P99 float64 `json:"p99"`
	// P999 is the 99.9th percentile.
	P999 float64 `json:"p999"`
	// Min is the smallest latency.
	Min float64 `json:"min"`
	// Max is the largest latency.
	Max float64 `json:"max"`
	// Median equals P50 (kept because the seed tables show both).
	Median float64 `json:"median"`
	// StdDev is the standard deviation.
	StdDev float64 `json:"stddev"`
}

// ValueCount is one entry of a return-value distribution.
type ValueCount struct {
	// Value is the return value as text.
	Value string `json:"value"`
	// Count is how many calls returned it.
	Count int64 `json:"count"`
	// Percent is its share of all calls, 2 decimals.
	Percent float64 `json:"percent"`
}

// ResourceUsage is measured CPU and memory for one role.
type ResourceUsage struct {
	// Role is hetu, redis-master, redis-replica, sentinel, proxy or runner; a Redis pod
	// counts under the role it has when sampled (a replica promoted by a failover as master).
	Role string `json:"role"`
	// Pods is the number of pods measured.
	Pods int32 `json:"pods"`
	// CPUAvgCores is the average CPU use per pod in cores.
	CPUAvgCores float64 `json:"cpuAvgCores"`
	// CPUMaxCores is the maximum CPU use of a pod in cores.
	CPUMaxCores float64 `json:"cpuMaxCores"`
	// MemoryAvgBytes is the average memory working set per pod.
	MemoryAvgBytes int64 `json:"memoryAvgBytes"`
	// MemoryMaxBytes is the maximum memory working set of a pod.
	MemoryMaxBytes int64 `json:"memoryMaxBytes"`
	// Source is where the numbers came from: metrics.k8s.io, kubelet (the nodes'
	// /metrics/resource, when the cluster has no metrics.k8s.io) or cgroup (a runner's own).
	// +optional
	Source string `json:"source,omitempty"`
}

// ReportRef names the report ConfigMap.
type ReportRef struct {
	// ConfigMapName is the ConfigMap holding report.md and results.json.
	ConfigMapName string `json:"configMapName"`
	// Parts name further ConfigMaps holding the per-minute series (series.json) when the
	// report would not fit in one ConfigMap; report.md and results.json then leave them out.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Parts []string `json:"parts,omitempty"`
}

// RunRecord keeps the outcome of an earlier generation.
type RunRecord struct {
	// Generation is the spec generation that was run.
	Generation int64 `json:"generation"`
	// Phase is how it ended.
	Phase Phase `json:"phase"`
	// StartTime is when it started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when it ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Partial tells whether its results were partial.
	// +optional
	Partial bool `json:"partial,omitempty"`
	// Verdict is its thresholds' verdict, when it had thresholds.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// Results are its merged results.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Results []ScenarioResult `json:"results,omitempty"`
	// Report names its report ConfigMap, kept until the BenchmarkRun is deleted.
	// +optional
	Report *ReportRef `json:"report,omitempty"`
}
