package runner

import (
	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
)

// Fault measurement windows of Failover (lifecycle's attribution rule, shared with the load's
// own per-second view).
const (
	// FaultInFlight is how long before the fault a failed write may have started and still
	// be the fault's (the probe's write timeout plus its interval).
	FaultInFlight = lifecycle.FaultInFlight
	// FaultOutageBound is how long after the fault an outage may begin to be the fault's.
	FaultOutageBound = lifecycle.FaultOutageBound
	// FaultOutageWindow is how long after the fault a later, not attributed, outage is looked for.
	FaultOutageWindow = lifecycle.FaultLaterWindow
)

// Bound cuts the report's lists to their limits (a runner's data: never trusted to be
// bounded); it reports false for a report that is not usable (Lost < 0 without a read-back error).
func (r *ProbeReport) Bound() bool {
	r.Outages = r.Outages[:min(len(r.Outages), MaxProbeOutages)]
	r.LostAckMs = r.LostAckMs[:min(len(r.LostAckMs), MaxProbeLost)]
	return r.Lost >= 0 || r.ReadBackError != ""
}

// Failover is the probe's view of a fault at t (Unix ms), by lifecycle.AttributeOutages: the
// outage that began within [t - FaultInFlight, t + FaultOutageBound] and ended after t is the
// fault's, from t to the first acknowledged write after it; the first outage that began later
// (within FaultOutageWindow) is LaterOutage, not the fault's. Both drivers (the operator and
// `benchrun run`) measure faults with it.
func (r *ProbeReport) Failover(t int64) *v1alpha1.FailoverStatus {
	spans := make([]lifecycle.OutageSpan, len(r.Outages))
	for i, o := range r.Outages {
		spans[i] = lifecycle.OutageSpan{BeganMs: o.FirstFailMs, RecoveredMs: o.RecoveredMs, Failed: o.Failed}
	}
	f := lifecycle.AttributeOutages(spans, t, r.EndMs, FaultOutageWindow)
	f.MeasuredBy, f.AckedBefore, f.LostBefore = v1alpha1.FailoverByProbe, r.AckedBefore(t), -1
	if r.Lost >= 0 {
		f.LostBefore = r.LostBefore(t)
	}
	return f
}
