package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FaultAction is what a fault does to the pod of its role.
// +kubebuilder:validation:Enum=kill;restart;pause
type FaultAction string

const (
	// FaultKill deletes the pod with grace period 0 (SIGKILL); its controller recreates it.
	FaultKill FaultAction = "kill"
	// FaultRestart deletes the pod with its own grace period (SIGTERM first).
	FaultRestart FaultAction = "restart"
	// FaultPause stops the server process of the pod (SIGSTOP) for the fault's duration, then
	// continues it (SIGCONT); the pod is not deleted. See the README's "Fault injection".
	FaultPause FaultAction = "pause"
)

// FaultRole names the pods a fault acts on, resolved when the fault is applied.
// +kubebuilder:validation:Enum=master;replica;sentinel;proxy;hetu;custom
type FaultRole string

const (
	// FaultRoleMaster is the current Redis master (after an earlier failover: the promoted
	// replica); a single server for mode single.
	FaultRoleMaster FaultRole = "master"
	// FaultRoleReplica is one current Redis replica (the first by name).
	FaultRoleReplica FaultRole = "replica"
	// FaultRoleSentinel is one sentinel (mode ha).
	FaultRoleSentinel FaultRole = "sentinel"
	// FaultRoleProxy is one read/write-splitting proxy pod (mode proxy).
	FaultRoleProxy FaultRole = "proxy"
	// FaultRoleHeTu is one HeTu server pod.
	FaultRoleHeTu FaultRole = "hetu"
	// FaultRoleCustom is one pod of a custom target.
	FaultRoleCustom FaultRole = "custom"
)

// Fault is one fault injected into a target pod while the load runs: offset after the start
// of a scenario, the pod currently holding role is killed, restarted or paused.
// +kubebuilder:validation:XValidation:rule="!has(self.action) || (self.action == 'pause') == has(self.duration)",message="faults[].duration is required for action pause and refused for kill and restart"
type Fault struct {
	// Scenario names the scenario (spec.load.scenarios[].name) the offset counts from.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Scenario string `json:"scenario"`

	// Offset is when the fault is applied, counted from the scenario's start; it must be
	// shorter than the scenario's duration.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="faults[].offset must be a duration such as 20s or 1m30s"
	Offset metav1.Duration `json:"offset"`

	// Action is kill (delete the pod, grace period 0), restart (delete it gracefully) or
	// pause (stop the pod's server processes with SIGSTOP for duration, then SIGCONT).
	Action FaultAction `json:"action"`

	// Duration is how long a pause lasts (100ms to 10m); required for pause, refused for kill
	// and restart. Offset + duration must end inside the scenario.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('100ms') && duration(self) <= duration('10m')",message="faults[].duration must be a duration from 100ms to 10m, such as 1s or 30s"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// Role is whose pod: master, replica or sentinel (Redis, also a HeTu target's Redis back
	// end), proxy (Redis mode proxy), hetu, custom. The pod is chosen when the fault is due:
	// master is the master at that moment.
	Role FaultRole `json:"role"`
}

// FaultOutcome says what became of a fault.
type FaultOutcome string

const (
	// FaultApplied means the pod was deleted (kill, restart) or its pause was started.
	FaultApplied FaultOutcome = "Applied"
	// FaultFailed means the fault could not be applied (no pod held the role, or the delete
	// failed); message says why.
	FaultFailed FaultOutcome = "Failed"
	// FaultNotApplied means the load ended (or was stopped) before the fault was due.
	FaultNotApplied FaultOutcome = "NotApplied"
)

// FaultStatus is one fault of spec.faults as applied, with what was measured around it.
type FaultStatus struct {
	// Index is the fault's position in spec.faults.
	Index int32 `json:"index"`
	// Scenario, Action, Role and Offset repeat the fault's spec.
	Scenario string `json:"scenario"`
	// Action is the fault's action.
	Action FaultAction `json:"action"`
	// Role is the fault's role.
	Role FaultRole `json:"role"`
	// Offset is the fault's offset from the scenario's start.
	Offset string `json:"offset"`
	// AppliedTime is when the pod was deleted (or the attempt failed), to the microsecond.
	// +optional
	AppliedTime *metav1.MicroTime `json:"appliedTime,omitempty"`
	// LateMs is how late the fault was applied after its due time, in milliseconds.
	// +optional
	LateMs int64 `json:"lateMs,omitempty"`
	// Pod is the pod the fault acted on.
	// +optional
	Pod string `json:"pod,omitempty"`
	// Outcome is Applied, Failed or NotApplied.
	Outcome FaultOutcome `json:"outcome"`
	// Message says why a fault failed, or what was done.
	// +optional
	Message string `json:"message,omitempty"`
	// CallsPerSecond are the calls the runners started in each second around the fault, from
	// 5 s before it to 10 s after (the merged per-second timeline of its scenario; the fault
	// falls in the sixth value).
	// +kubebuilder:validation:MaxItems=15
	// +optional
	CallsPerSecond []int64 `json:"callsPerSecond,omitempty"`
	// Timeline is the per-second view of the fault's scenario from 5 s before the fault's
	// second to 9 s after it: calls completed, errors and p99 latency per second (absent when
	// the runners recorded no fault seconds, e.g. results of an older runner).
	// +kubebuilder:validation:MaxItems=15
	// +optional
	Timeline []FaultSecond `json:"timeline,omitempty"`
	// Failover is the outage the fault caused, measured through the path its scenario's load
	// uses (measuredBy: the probe for redis.*/ycsb scenarios, else the scenario's per-second
	// timeline); absent when neither applies.
	// +optional
	Failover *FailoverStatus `json:"failover,omitempty"`
	// Duration is a pause's duration (spec.faults[].duration).
	// +optional
	Duration string `json:"duration,omitempty"`
	// PausedTime and ResumedTime are when a pause stopped and continued the server's
	// processes, as the pause container in the pod reported them (read when results are
	// collected; absent when the pod was gone or the pause container had not ended).
	// +optional
	PausedTime *metav1.MicroTime `json:"pausedTime,omitempty"`
	// ResumedTime is when the paused processes were continued.
	// +optional
	ResumedTime *metav1.MicroTime `json:"resumedTime,omitempty"`
}

// Values of FailoverStatus.MeasuredBy.
const (
	// FailoverByProbe: runner 0's fault probe, writing a marker every 50 ms through the Redis
	// write endpoint the fault's scenario loads (the master Service, or the proxy).
	FailoverByProbe = "probe"
	// FailoverByLoad: the fault's scenario's own per-second timeline (calls completed and
	// errors per second, every runner merged), 1 s resolution: for scenarios that do not load
	// the probe's endpoint (hetu.*, custom targets) or runs without a probe.
	FailoverByLoad = "load"
)

// FailoverStatus is the outage the path the fault's scenario uses saw after one fault: the
// outage attributed to a fault is the one that began at most 2 s after it (a write in flight
// at the fault counts); a later one is reported separately (LaterOutage), never as the fault's.
type FailoverStatus struct {
	// MeasuredBy is probe (marker writes through the endpoint the load uses) or load (the
	// scenario's per-second timeline: an outage is a run of seconds in which no call succeeded).
	// +optional
	MeasuredBy string `json:"measuredBy,omitempty"`
	// Milliseconds is the failover time: from the fault to the first success (probe: marker
	// write acknowledged; load: the start of the first second with a successful call, so the
	// first success came within the second after) after the outage the fault caused; 0 when
	// no outage began within 2 s of the fault.
	Milliseconds int64 `json:"milliseconds"`
	// Recovered is false when nothing succeeded again before the load ended (or, measured by
	// load, before the timeline's end, 12 s after the fault).
	Recovered bool `json:"recovered"`
	// FailedWrites counts the probe's marker writes that failed in that outage (measured by
	// load: the scenario's calls that failed in the outage's seconds).
	FailedWrites int64 `json:"failedWrites"`
	// AckedBefore counts the probe's marker writes acknowledged before the fault (-1: no probe).
	AckedBefore int64 `json:"ackedBefore"`
	// LostBefore counts those of them missing when the markers were read back after the load
	// (acknowledged writes the failover lost); -1 when they could not be read back (or no probe).
	LostBefore int64 `json:"lostBefore"`
	// LaterOutage is the first outage that began more than 2 s after the fault (within 30 s,
	// or the timeline's 12 s): not attributed to the fault, shown so it is not hidden.
	// +optional
	LaterOutage *LaterOutage `json:"laterOutage,omitempty"`
}

// LaterOutage is an outage after a fault that is not attributed to it (it began too late).
type LaterOutage struct {
	// BeganAfterMs is when it began, in milliseconds after the fault.
	BeganAfterMs int64 `json:"beganAfterMs"`
	// Milliseconds is how long it lasted (until the load ended when not recovered).
	Milliseconds int64 `json:"milliseconds"`
	// Recovered is false when nothing succeeded again before the end.
	Recovered bool `json:"recovered"`
	// Failed counts its failed writes (probe) or failed calls (load).
	Failed int64 `json:"failed"`
}
