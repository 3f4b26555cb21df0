package controllers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// withFaultProbe asks runner 0 to run the fault probe (internal/runner/probe.go) when the run
// declares faults; the runner runs it only when its target has a Redis write endpoint.
func withFaultProbe(run *v1alpha1.BenchmarkRun, inv *plan.Invocation, index int) {
	if index != 0 || len(run.Spec.Faults) == 0 {
		return
	}
	if inv.Env == nil {
		inv.Env = map[string]string{}
	}
	inv.Env[plan.EnvFaultProbe] = "benchrun:fault-probe:" + run.Name
}

// Fault measurement windows.
const (
	// faultInFlight is how long before the fault a failed write may have started and still
	// be the fault's (the probe's write timeout plus its interval).
	faultInFlight = 2*time.Second + runner.ProbeInterval
	// faultOutageWindow is how long after the fault an outage may start to be the fault's.
	faultOutageWindow = 30 * time.Second
	// faultTimelineBefore and faultTimelineLen place CallsPerSecond around the fault.
	faultTimelineBefore = 5
	faultTimelineLen    = 15
)

// measureFaults adds to status.faults what was measured around each applied fault: the calls
// per second of its scenario, and from runner 0's probe report the failover.
func measureFaults(run *v1alpha1.BenchmarkRun, obs *observation, merged *results.Document) {
	notApplied(run)
	if len(run.Status.Faults) == 0 {
		return
	}
	probe := probeReport(obs)
	for i := range run.Status.Faults {
		fs := &run.Status.Faults[i]
		if fs.Outcome != v1alpha1.FaultApplied || fs.AppliedTime == nil {
			continue
		}
		t := fs.AppliedTime.UnixMilli()
		if fs.PausedTime != nil { // the pause container's own time of the SIGSTOP
			t = fs.PausedTime.UnixMilli()
		}
		fs.CallsPerSecond = callsAround(merged, fs.Scenario, t)
		if probe != nil {
			fs.Failover = failover(probe, t)
		}
	}
}

// notApplied adds a NotApplied entry for each fault the load ended before.
func notApplied(run *v1alpha1.BenchmarkRun) {
	for i, f := range run.Spec.Faults {
		if faultStatusAt(run, i) == nil {
			fs := faultEntry(i, f)
			fs.Outcome, fs.Message = v1alpha1.FaultNotApplied, "the load ended before the fault was due"
			run.Status.Faults = append(run.Status.Faults, fs)
		}
	}
	slices.SortFunc(run.Status.Faults, func(a, b v1alpha1.FaultStatus) int { return int(a.Index - b.Index) })
}

// probeReport is runner 0's probe report, bounded, or nil when there is none or it does not
// parse (a runner's data: never trusted to be well formed).
func probeReport(obs *observation) *runner.ProbeReport {
	if len(obs.configs) == 0 || obs.configs[0] == nil {
		return nil
	}
	raw, ok := obs.configs[0].Data[runner.KeyFaultProbe]
	if !ok {
		return nil
	}
	var p runner.ProbeReport
	if err := json.Unmarshal([]byte(raw), &p); err != nil || p.Lost < 0 && p.ReadBackError == "" {
		return nil
	}
	p.Outages = p.Outages[:min(len(p.Outages), runner.MaxProbeOutages)]
	p.LostAckMs = p.LostAckMs[:min(len(p.LostAckMs), runner.MaxProbeLost)]
	return &p
}

// failover is the probe's view of a fault at t (Unix ms): the first outage that started
// within [t - faultInFlight, t + faultOutageWindow] and ended after t.
func failover(p *runner.ProbeReport, t int64) *v1alpha1.FailoverStatus {
	f := &v1alpha1.FailoverStatus{Recovered: true, AckedBefore: p.AckedBefore(t), LostBefore: -1}
	if p.Lost >= 0 {
		f.LostBefore = p.LostBefore(t)
	}
	for _, o := range p.Outages {
		if o.FirstFailMs < t-faultInFlight.Milliseconds() || o.FirstFailMs > t+faultOutageWindow.Milliseconds() ||
			(o.RecoveredMs != 0 && o.RecoveredMs <= t) {
			continue
		}
		f.FailedWrites = o.Failed
		if o.RecoveredMs == 0 {
			f.Recovered, f.Milliseconds = false, max(0, p.EndMs-t)
		} else {
			f.Milliseconds = o.RecoveredMs - t
		}
		break
	}
	return f
}

// callsAround is the scenario's calls per second from faultTimelineBefore seconds before t
// (Unix ms) on, faultTimelineLen values; nil unless its timeline has one-second buckets.
func callsAround(doc *results.Document, scenario string, t int64) []int64 {
	if doc == nil {
		return nil
	}
	for _, sc := range doc.Scenarios {
		tl := sc.Starts
		if sc.Name != scenario || tl.BucketMs != 1000 {
			continue
		}
		first := (t-tl.StartUnixMs)/1000 - faultTimelineBefore
		out := make([]int64, faultTimelineLen)
		for k := range out {
			if i := first + int64(k); i >= 0 && i < int64(len(tl.Counts)) {
				out[k] = tl.Counts[i]
			}
		}
		return out
	}
	return nil
}

// renderFaults appends the "Faults" section to report.md.
func renderFaults(md *strings.Builder, st *v1alpha1.BenchmarkRunStatus) {
	if len(st.Faults) == 0 {
		return
	}
	md.WriteString("\nFaults:\n\n| # | scenario | offset | action | role | pod | applied | outcome | failover (ms) | failed writes | acked before | lost before |\n|--:|:--|--:|:--|:--|:--|:--|:--|--:|--:|--:|--:|\n")
	for _, f := range st.Faults {
		applied := ""
		if f.AppliedTime != nil {
			applied = f.AppliedTime.UTC().Format("15:04:05.000")
		}
		fo, failed, acked, lost := "-", "-", "-", "-"
		if v := f.Failover; v != nil {
			fo = fmt.Sprint(v.Milliseconds)
			if !v.Recovered {
				fo = fmt.Sprintf("> %d (not recovered)", v.Milliseconds)
			}
			failed, acked = fmt.Sprint(v.FailedWrites), fmt.Sprint(v.AckedBefore)
			if v.LostBefore >= 0 {
				lost = fmt.Sprint(v.LostBefore)
			}
		}
		outcome := string(f.Outcome)
		if f.Outcome != v1alpha1.FaultApplied {
			outcome += ": " + f.Message
		}
		action := string(f.Action)
		if f.Duration != "" {
			action += " " + f.Duration // a pause's duration
		}
		fmt.Fprintf(md, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f.Index, f.Scenario, f.Offset,
			action, f.Role, f.Pod, applied, outcome, fo, failed, acked, lost)
	}
	for _, f := range st.Faults {
		if f.PausedTime != nil && f.ResumedTime != nil {
			fmt.Fprintf(md, "\nFault %d: the server's processes were stopped from %s to %s (%v)\n", f.Index,
				f.PausedTime.UTC().Format("15:04:05.000"), f.ResumedTime.UTC().Format("15:04:05.000"),
				f.ResumedTime.Sub(f.PausedTime.Time).Round(time.Millisecond))
		}
		if len(f.CallsPerSecond) > 0 {
			fmt.Fprintf(md, "\nFault %d: calls per second from %d s before to %d s after: %s\n", f.Index, faultTimelineBefore,
				faultTimelineLen-faultTimelineBefore-1, strings.Trim(fmt.Sprint(f.CallsPerSecond), "[]"))
		}
	}
}
