package v1alpha1

// This file is the one home of the condition types and reasons a BenchmarkRun reports in
// status.conditions and in its Events (Argo CD's health check, kubectl wait and users match on
// them). The operator passes only these constants (controllers/contracts_test.go checks it);
// docs/reference/api.md lists them (`make docs-api`). A condition that changes also emits an
// Event whose reason is its type followed by its reason (TargetReadyTimeout).

// Condition types set on a BenchmarkRun (status.conditions[].type).
const (
	// ConditionQueued is true while the run waits for its load pool or external target endpoint (position and holder in the message).
	ConditionQueued = "Queued"
	// ConditionBaselineResolved is true when the baseline's figures were copied into status.baseline.
	ConditionBaselineResolved = "BaselineResolved"
	// ConditionTargetReady is true when the target accepts connections.
	ConditionTargetReady = "TargetReady"
	// ConditionRunnersReady is true when every runner reached the start barrier.
	ConditionRunnersReady = "RunnersReady"
	// ConditionLoadComplete is true when every runner finished its scenarios.
	ConditionLoadComplete = "LoadComplete"
	// ConditionResultsCollected is true when every runner's result document was merged.
	ConditionResultsCollected = "ResultsCollected"
	// ConditionThresholdsMet is true when every threshold held, false when one did not.
	ConditionThresholdsMet = "ThresholdsMet"
	// ConditionSucceeded is true when the run succeeded, false when it failed (its reason is the run's outcome).
	ConditionSucceeded = "Succeeded"
	// ConditionLiveMetrics is False (reason ReasonRemoteWriteFailing) when the runners' pushes to the remote-write endpoint fail; absent while none failed.
	ConditionLiveMetrics = "LiveMetrics"
)

// Reasons of conditions that are not reached yet (any condition type).
const (
	// ReasonWaiting marks a condition not reached yet; it emits no Event.
	ReasonWaiting = "Waiting"
	// ReasonStopping is LoadComplete's reason while the runners of an edited or deleted run are stopped (up to 20 s).
	ReasonStopping = "Stopping"
)

// Reasons of the Queued condition and of the phase moves around it.
const (
	// ReasonAccepted is the Event of a generation the operator accepted (phase Pending).
	ReasonAccepted = "Accepted"
	// ReasonQueued is the Event of a run that starts waiting for its load pool or external target (phase Queued).
	ReasonQueued = "Queued"
	// ReasonWaitingForPool is Queued's reason (True) while another run holds the load pool.
	ReasonWaitingForPool = "WaitingForPool"
	// ReasonWaitingForTarget is Queued's reason (True) while another run loads the same external target endpoint.
	ReasonWaitingForTarget = "WaitingForTarget"
	// ReasonPoolAcquired is Queued's reason (False) once the run holds its load pool.
	ReasonPoolAcquired = "PoolAcquired"
	// ReasonTargetAcquired is Queued's reason (False) once the run holds its external target endpoint.
	ReasonTargetAcquired = "TargetAcquired"
	// ReasonQueueTimeout fails a run that waited longer than load.runners.queueTimeout (Queued False, phase Failed).
	ReasonQueueTimeout = "QueueTimeout"
)

// Reasons of the BaselineResolved condition.
const (
	// ReasonCopied is BaselineResolved's reason (True) once the baseline's figures are in status.baseline.
	ReasonCopied = "Copied"
	// ReasonNoBaseline is BaselineResolved's reason (False) when no run matches and no threshold is relative (the run goes on).
	ReasonNoBaseline = "NoBaseline"
	// ReasonInvalidBaseline fails a run whose spec.baseline.selector cannot be parsed.
	ReasonInvalidBaseline = "InvalidBaseline"
	// ReasonBaselineNotFound fails a run whose baseline (by name, or by selector with relative thresholds) does not exist.
	ReasonBaselineNotFound = "BaselineNotFound"
	// ReasonBaselineFailed fails a run whose baseline ended Failed (its figures are no reference).
	ReasonBaselineFailed = "BaselineFailed"
	// ReasonBaselineMismatch fails a run whose baseline has no results for a scenario a relative threshold uses.
	ReasonBaselineMismatch = "BaselineMismatch"
)

// Reasons of the TargetReady condition and the provisioning phase.
const (
	// ReasonProvisioning is the Event of a run whose target objects were created (phase Provisioning).
	ReasonProvisioning = "Provisioning"
	// ReasonReady is TargetReady's reason (True) once the target accepts connections.
	ReasonReady = "Ready"
	// ReasonTimeout is TargetReady's reason (False) when the target was not ready within its timeout.
	ReasonTimeout = "Timeout"
	// ReasonTargetNotReady fails a run whose target was not ready within its timeout (phase Failed).
	ReasonTargetNotReady = "TargetNotReady"
	// ReasonTargetFailed fails a run whose target will never be ready (e.g. a proxy refused the password).
	ReasonTargetFailed = "TargetFailed"
	// ReasonInvalidTarget fails a run whose target cannot be built from its spec (or its HeTu app is invalid).
	ReasonInvalidTarget = "InvalidTarget"
)

// Reasons of the RunnersReady condition and the starting phase.
const (
	// ReasonRunnersCreated is the Event of a run whose runner objects were created (phase Starting).
	ReasonRunnersCreated = "RunnersCreated"
	// ReasonAllReady is RunnersReady's reason (True) once every runner waits at the start barrier.
	ReasonAllReady = "AllReady"
	// ReasonLoadStarted is the Event of a run whose start barrier was released (phase Running).
	ReasonLoadStarted = "LoadStarted"
	// ReasonRunnerFailed fails a run one of whose runners failed (RunnersReady or LoadComplete False, phase Failed).
	ReasonRunnerFailed = "RunnerFailed"
	// ReasonRunnersCannotStart fails a run whose runner pods wait on an error that does not heal (e.g. a missing Secret).
	ReasonRunnersCannotStart = "RunnersCannotStart"
	// ReasonRunnersNotReady fails a run whose runners did not all reach the start barrier within their timeout.
	ReasonRunnersNotReady = "RunnersNotReady"
	// ReasonScriptNotFound fails a run whose custom script ConfigMap or key does not exist.
	ReasonScriptNotFound = "ScriptNotFound"
	// ReasonInvalidLoad fails a run whose load cannot be planned for its runners.
	ReasonInvalidLoad = "InvalidLoad"
)

// Reasons of the LoadComplete, ResultsCollected and ThresholdsMet conditions.
const (
	// ReasonAllFinished is LoadComplete's reason (True) once every runner finished its scenarios.
	ReasonAllFinished = "AllFinished"
	// ReasonRunTimeout stops a run that ran past its run timeout (LoadComplete False; collects what was stored, phase Failed).
	ReasonRunTimeout = "RunTimeout"
	// ReasonAbortedOnThreshold stops a run whose live figures broke an abortOnFail threshold (phase Failed, what the runners stored is kept).
	ReasonAbortedOnThreshold = "AbortedOnThreshold"
	// ReasonRemoteWriteFailing is the reason of a False LiveMetrics condition: pushes to the remote-write endpoint failed (the message counts them and gives one runner's last error; the load and its results are not affected).
	ReasonRemoteWriteFailing = "RemoteWriteFailing"
	// ReasonCollecting is ResultsCollected's reason (Unknown) while the stored result documents are merged.
	ReasonCollecting = "Collecting"
	// ReasonMerged is ResultsCollected's reason (True) once every stored result document was merged.
	ReasonMerged = "Merged"
	// ReasonMergeFailed fails a run whose result documents could not be merged.
	ReasonMergeFailed = "MergeFailed"
	// ReasonNoResults fails a run whose runners stored no result document at all.
	ReasonNoResults = "NoResults"
	// ReasonCollectRejected fails a run whose merged results or report the API server refused to store.
	ReasonCollectRejected = "CollectRejected"
	// ReasonCollectTimeout fails a run whose results were not collected within the collect deadline.
	ReasonCollectTimeout = "CollectTimeout"
	// ReasonPassed is ThresholdsMet's reason (True) when every threshold held.
	ReasonPassed = "Passed"
	// ReasonThresholdsNotMet is ThresholdsMet's reason (False) and fails the run (phase Failed) when a threshold was broken.
	ReasonThresholdsNotMet = "ThresholdsNotMet"
)

// Reasons of the Succeeded condition (the run's outcome) not listed above.
const (
	// ReasonSucceeded is Succeeded's reason (True) of a run whose every runner finished and whose results were merged.
	ReasonSucceeded = "Succeeded"
	// ReasonPartialResults fails a run whose results are partial (a runner failed or stored nothing); what was collected is kept.
	ReasonPartialResults = "PartialResults"
	// ReasonStatusRejected fails a run whose status the API server refused even after trimming.
	ReasonStatusRejected = "StatusRejected"
)

// Reasons of Events only (no condition carries them).
const (
	// ReasonSuperseded is the Event of a generation stopped mid-run because the spec changed.
	ReasonSuperseded = "Superseded"
	// ReasonArchived is the Event of a generation moved to status.history.
	ReasonArchived = "Archived"
	// ReasonCleanedUp is the Event of a finished run whose target and runner objects were deleted (cleanup policy).
	ReasonCleanedUp = "CleanedUp"
	// ReasonExpired is the Event of a finished run deleted after ttlSecondsAfterFinished.
	ReasonExpired = "Expired"
	// ReasonResultsKept is the Event of a run deleted mid-run whose stored results were kept in a report ConfigMap.
	ReasonResultsKept = "ResultsKept"
	// ReasonResultsLost is the Event of a run deleted mid-run whose stored results could not be kept.
	ReasonResultsLost = "ResultsLost"
	// ReasonFaultApplied is the Event of a fault applied to the target.
	ReasonFaultApplied = "FaultApplied"
	// ReasonFaultFailed is the Event of a fault that could not be applied.
	ReasonFaultFailed = "FaultFailed"
	// ReasonStatusTrimmed is the Event of a status over its size budget from which parts were dropped (kept in the report).
	ReasonStatusTrimmed = "StatusTrimmed"
	// ReasonKubeletMetricsFailed is the Event of a node whose kubelet's CPU/memory figures could not be read.
	ReasonKubeletMetricsFailed = "KubeletMetricsFailed"
)

// Condition types of a BenchmarkSuite (besides ConditionSucceeded and ConditionThresholdsMet,
// which a suite sets as a run does).
const (
	// ConditionChildrenComplete is true when every child run of a suite ended.
	ConditionChildrenComplete = "ChildrenComplete"
)

// Reasons of a BenchmarkSuite's conditions and Events.
const (
	// ReasonChildCreated is the Event of a child run the suite created.
	ReasonChildCreated = "ChildCreated"
	// ReasonChildCreateFailed marks a child run the API server refused to create.
	ReasonChildCreateFailed = "CreateFailed"
	// ReasonChildSucceeded is the Event of a child run that succeeded.
	ReasonChildSucceeded = "ChildSucceeded"
	// ReasonChildFailed is the Event of a child run that failed, and the reason of a suite failed by one.
	ReasonChildFailed = "ChildFailed"
	// ReasonChildrenRunning is ChildrenComplete's reason while child runs are running.
	ReasonChildrenRunning = "Running"
	// ReasonAllEnded is ChildrenComplete's reason once every child run ended.
	ReasonAllEnded = "AllEnded"
	// ReasonInvalidSpec fails a suite whose spec cannot be expanded into child runs.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonInvalidVariant fails a suite one of whose child runs the API server refuses (a server-side dry run, before anything is created).
	ReasonInvalidVariant = "InvalidVariant"
)
