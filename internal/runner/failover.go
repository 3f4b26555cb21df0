package runner

import (
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// Fault measurement windows of Failover.
const (
	// FaultInFlight is how long before the fault a failed write may have started and still
	// be the fault's (the probe's write timeout plus its interval).
	FaultInFlight = 2*time.Second + ProbeInterval
	// FaultOutageWindow is how long after the fault an outage may start to be the fault's.
	FaultOutageWindow = 30 * time.Second
)

// Bound cuts the report's lists to their limits (a runner's data: never trusted to be
// bounded); it reports false for a report that is not usable (Lost < 0 without a read-back error).
func (r *ProbeReport) Bound() bool {
	r.Outages = r.Outages[:min(len(r.Outages), MaxProbeOutages)]
	r.LostAckMs = r.LostAckMs[:min(len(r.LostAckMs), MaxProbeLost)]
	return r.Lost >= 0 || r.ReadBackError != ""
}

// Failover is the probe's view of a fault at t (Unix ms): the first outage that started
// within [t - FaultInFlight, t + FaultOutageWindow] and ended after t. Both drivers (the
// operator and `benchrun run`) measure faults with it.
func (r *ProbeReport) Failover(t int64) *v1alpha1.FailoverStatus {
	f := &v1alpha1.FailoverStatus{Recovered: true, AckedBefore: r.AckedBefore(t), LostBefore: -1}
	if r.Lost >= 0 {
		f.LostBefore = r.LostBefore(t)
	}
	for _, o := range r.Outages {
		if o.FirstFailMs < t-FaultInFlight.Milliseconds() || o.FirstFailMs > t+FaultOutageWindow.Milliseconds() ||
			(o.RecoveredMs != 0 && o.RecoveredMs <= t) {
			continue
		}
		f.FailedWrites = o.Failed
		if o.RecoveredMs == 0 {
			f.Recovered, f.Milliseconds = false, max(0, r.EndMs-t)
		} else {
			f.Milliseconds = o.RecoveredMs - t
		}
		break
	}
	return f
}
