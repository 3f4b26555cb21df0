package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/workload"
)

// Fault measurement, shared by the operator (controllers/faults.go applies faults to pods) and
// `benchrun run` (local processes): once the results are merged, every applied fault gets the
// per-second timeline of its scenario around it and, when a probe measured the Redis write path,
// its failover; report.md gets the faults table and one per-second table per fault.

// FaultTimelineBefore and FaultTimelineLen place status.faults[].callsPerSecond and .timeline
// around a fault: from FaultTimelineBefore seconds before the fault's second, FaultTimelineLen
// seconds (the fault's second is the sixth).
const (
	FaultTimelineBefore = 5
	FaultTimelineLen    = 15
)

// FaultProbeKey is the list the fault probe of a run appends its markers to.
func FaultProbeKey(run string) string { return "benchrun:fault-probe:" + run }

// FaultDue is when fault i of run is due: the load start + its scenario's start + its offset
// (workload.ScenarioWindows: arrival stages and search steps count, as the runners schedule
// them); false when its scenario is not in the run.
func FaultDue(run *v1alpha1.BenchmarkRun, i int, loadStart time.Time) (time.Time, bool) {
	f := run.Spec.Faults[i]
	w, ok := workload.ScenarioWindows(&run.Spec)[f.Scenario]
	return loadStart.Add(w.Start + f.Offset.Duration), ok
}

// FaultEntry is the status entry of fault i before it is applied: its spec.
func FaultEntry(i int, f v1alpha1.Fault) v1alpha1.FaultStatus {
	fs := v1alpha1.FaultStatus{Index: int32(i), Scenario: f.Scenario, Action: f.Action, Role: f.Role, Offset: f.Offset.Duration.String()}
	if f.Duration != nil {
		fs.Duration = f.Duration.Duration.String()
	}
	return fs
}

// FaultNotApplied is the status entry of fault i that was never due before the load ended.
func FaultNotApplied(i int, f v1alpha1.Fault) v1alpha1.FaultStatus {
	fs := FaultEntry(i, f)
	fs.Outcome, fs.Message = v1alpha1.FaultNotApplied, "the load ended before the fault was due"
	return fs
}

// MeasureFaults completes st.Faults once the results are merged: a NotApplied entry for each
// fault of faults without one (sorted by index), and for each applied fault the calls started
// per second (CallsPerSecond), the per-second timeline (Timeline) and, when failover is not
// nil, failover(fault time in Unix ms). A pause's fault time is its PausedTime when known.
func MeasureFaults(st *v1alpha1.BenchmarkRunStatus, faults []v1alpha1.Fault, merged *results.Document,
	failover func(int64) *v1alpha1.FailoverStatus) {
	for i, f := range faults {
		if !slices.ContainsFunc(st.Faults, func(fs v1alpha1.FaultStatus) bool { return int(fs.Index) == i }) {
			st.Faults = append(st.Faults, FaultNotApplied(i, f))
		}
	}
	slices.SortFunc(st.Faults, func(a, b v1alpha1.FaultStatus) int { return int(a.Index - b.Index) })
	for i := range st.Faults {
		fs := &st.Faults[i]
		if fs.Outcome != v1alpha1.FaultApplied || fs.AppliedTime == nil {
			continue
		}
		t := fs.AppliedTime.UnixMilli()
		if fs.PausedTime != nil { // a pause: when the processes were actually stopped
			t = fs.PausedTime.UnixMilli()
		}
		fs.CallsPerSecond = CallsAround(merged, fs.Scenario, t)
		fs.Timeline = TimelineAround(merged, fs.Scenario, t)
		if failover != nil {
			fs.Failover = failover(t)
		}
	}
}

// scenarioOf is the merged document's scenario name, or nil.
func scenarioOf(doc *results.Document, name string) *results.Scenario {
	if doc == nil {
		return nil
	}
	for i := range doc.Scenarios {
		if doc.Scenarios[i].Name == name {
			return &doc.Scenarios[i]
		}
	}
	return nil
}

// CallsAround is the scenario's calls started per second from FaultTimelineBefore seconds
// before t (Unix ms) on, FaultTimelineLen values; nil unless its start timeline has one-second
// buckets.
func CallsAround(doc *results.Document, scenario string, t int64) []int64 {
	sc := scenarioOf(doc, scenario)
	if sc == nil || sc.Starts.BucketMs != 1000 {
		return nil
	}
	tl := sc.Starts
	first := (t-tl.StartUnixMs)/1000 - FaultTimelineBefore
	out := make([]int64, FaultTimelineLen)
	for k := range out {
		if i := first + int64(k); i >= 0 && i < int64(len(tl.Counts)) {
			out[k] = tl.Counts[i]
		}
	}
	return out
}

// TimelineAround is the scenario's per-second timeline around a fault at t (Unix ms): calls
// completed, errors and p99 of each second from FaultTimelineBefore seconds before t's second,
// FaultTimelineLen entries; nil when the runners recorded no fault seconds for it.
func TimelineAround(doc *results.Document, scenario string, t int64) []v1alpha1.FaultSecond {
	sc := scenarioOf(doc, scenario)
	if sc == nil || len(sc.FaultSeconds) == 0 {
		return nil
	}
	sec := t - ((t%1000)+1000)%1000
	out := make([]v1alpha1.FaultSecond, FaultTimelineLen)
	for k := range out {
		rel := k - FaultTimelineBefore
		s := results.SecondAt(sc.FaultSeconds, sec+int64(rel)*1000)
		out[k] = v1alpha1.FaultSecond{Second: int32(rel), Calls: s.Calls, Errors: s.Errors, P99Micros: s.P99Micros(), MaxMicros: s.Latency.Max}
	}
	return out
}

// RenderFaults appends the "Faults" section of report.md: one row per fault, then for each
// fault with a timeline its per-second table (second, calls, errors, p99), else its calls
// started per second.
func RenderFaults(md *strings.Builder, st *v1alpha1.BenchmarkRunStatus) {
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
		switch {
		case len(f.Timeline) > 0:
			renderFaultTimeline(md, f)
		case len(f.CallsPerSecond) > 0:
			fmt.Fprintf(md, "\nFault %d: calls per second from %d s before to %d s after: %s\n", f.Index, FaultTimelineBefore,
				FaultTimelineLen-FaultTimelineBefore-1, strings.Trim(fmt.Sprint(f.CallsPerSecond), "[]"))
		}
	}
}

// renderFaultTimeline writes one fault's per-second table.
func renderFaultTimeline(md *strings.Builder, f v1alpha1.FaultStatus) {
	fmt.Fprintf(md, "\nFault %d (%s %s in %s), per second (0: the second it was applied in; calls and errors completed in the second):\n\n",
		f.Index, f.Action, f.Role, f.Scenario)
	md.WriteString("| second | calls | errors | p99 (ms) | max (ms) |\n|--:|--:|--:|--:|--:|\n")
	for _, s := range f.Timeline {
		p99, slowest := "-", "-"
		if s.Calls > 0 {
			p99, slowest = fmt.Sprintf("%.2f", float64(s.P99Micros)/1000), fmt.Sprintf("%.2f", float64(s.MaxMicros)/1000)
		}
		sec := fmt.Sprintf("%+d", s.Second)
		if s.Second == 0 {
			sec = "0 (fault)"
		}
		fmt.Fprintf(md, "| %s | %d | %d | %s | %s |\n", sec, s.Calls, s.Errors, p99, slowest)
	}
}
