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
		fs.Failover = faultFailover(scenarioOf(merged, fs.Scenario), t, fs.AppliedTime.UnixMilli()-fs.LateMs, failover)
	}
}

// faultFailover measures a fault at t (Unix ms, due at dueMs) through the path its scenario's
// load uses. The probe writes to the Redis write endpoint (the master Service or the proxy):
// that is the load's path only for scenarios that load that endpoint (redis.*, ycsb). For any
// other scenario (hetu.*: HeTu in front of its Redis back end, whose outage the probe never
// sees; custom targets) the load's own view decides: the scenario's merged per-second
// timeline (LoadFailover), which every workload records. Marker counts (acked, lost before)
// are the probe's whenever there is one. nil when neither applies (shown as "-", never 0).
func faultFailover(sc *results.Scenario, t, dueMs int64, probe func(int64) *v1alpha1.FailoverStatus) *v1alpha1.FailoverStatus {
	if probe != nil && (sc == nil || sc.Type == "" || LoadsRedisEndpoint(sc.Type)) {
		f := probe(t)
		f.MeasuredBy = v1alpha1.FailoverByProbe
		return f
	}
	f := LoadFailover(sc, t, dueMs)
	if f != nil && probe != nil {
		p := probe(t)
		f.AckedBefore, f.LostBefore = p.AckedBefore, p.LostBefore
	}
	return f
}

// LoadsRedisEndpoint tells whether scenarios of type t send their calls to the target's Redis
// write endpoint (the probe's path): redis.* and ycsb.
func LoadsRedisEndpoint(t string) bool {
	return strings.HasPrefix(t, "redis.") || t == string(v1alpha1.ScenarioYCSB)
}

// Failover attribution, for both measures (the probe's outages, the load's timeline).
const (
	// FaultInFlight is how long before the fault a failure may have started and still be the
	// fault's (the probe's write timeout, 2 s, plus its interval).
	FaultInFlight = 2050 * time.Millisecond
	// FaultOutageBound is how long after the fault an outage may begin and be the fault's.
	// A fault acts at once (SIGKILL/SIGSTOP, or a pod deleted with no grace, killed by the
	// kubelet well within a second); an outage beginning later has another cause (a failover
	// decided later, a proxy's reconnection) and is reported as a later outage, not the fault's.
	FaultOutageBound = 2 * time.Second
	// FaultLaterWindow is how long after the fault a later (not attributed) outage is looked for.
	FaultLaterWindow = 30 * time.Second
)

// OutageSpan is one outage of the path the load uses.
type OutageSpan struct {
	// BeganMs is when it began (Unix ms: the first failed write's start, or the start of the
	// first second without a success).
	BeganMs int64
	// RecoveredMs is the first success after it (Unix ms; 0: none before the end).
	RecoveredMs int64
	// Failed counts the failures in it.
	Failed int64
}

// AttributeOutages is the failover of a fault at t (Unix ms) from outages (oldest first)
// observed until endMs: the fault's outage is every outage that began between FaultInFlight
// before t and FaultOutageBound after it (several such, a flapping path, count as one, to the
// first success after the last), and did not end before t; Milliseconds runs from t to its
// recovery (to endMs when it never recovered). None such: Milliseconds 0, no failure. The
// first outage that began after that (up to later after t) is LaterOutage. MeasuredBy, AckedBefore
// and LostBefore are left to the caller.
func AttributeOutages(outages []OutageSpan, t, endMs int64, later time.Duration) *v1alpha1.FailoverStatus {
	f := &v1alpha1.FailoverStatus{Recovered: true}
	attributed := false
	for _, o := range outages {
		if (o.RecoveredMs != 0 && o.RecoveredMs <= t) || o.BeganMs < t-FaultInFlight.Milliseconds() {
			continue // over before the fault, or an outage already under way
		}
		if o.BeganMs <= t+FaultOutageBound.Milliseconds() {
			attributed = true
			f.FailedWrites += o.Failed
			f.Recovered, f.Milliseconds = o.RecoveredMs != 0, o.RecoveredMs-t
			if o.RecoveredMs == 0 {
				f.Milliseconds = max(0, endMs-t)
			}
			continue
		}
		if o.BeganMs <= t+later.Milliseconds() && (!attributed || f.Recovered) {
			l := &v1alpha1.LaterOutage{BeganAfterMs: o.BeganMs - t, Recovered: o.RecoveredMs != 0, Failed: o.Failed,
				Milliseconds: o.RecoveredMs - o.BeganMs}
			if o.RecoveredMs == 0 {
				l.Milliseconds = max(0, endMs-o.BeganMs)
			}
			f.LaterOutage = l
		}
		break
	}
	return f
}

// LoadOutageFraction is the outage rule of failover measured by load: a second is part of an
// outage when fewer calls succeeded in it than 1/LoadOutageFraction of those that succeeded in the second before the
// fault's (none at all: every call failed, or a stall; or a collapse to under 10 %).
const LoadOutageFraction = 10

// LoadFailover is a fault's failover (MeasuredBy load) from its scenario's merged per-second
// timeline (Scenario.FaultSeconds): an outage is a run of seconds in which (almost) no call
// succeeded (see LoadOutageFraction: calls completed only with errors, none completed (a
// stall), or successes under 10 % of the second before the fault's), from the fault's second to
// the end of the timeline (12 s after the fault was due, dueMs) or of the scenario's calls,
// whichever is first; it began at the start of its first second and recovered at the start
// of the next second with successes again (1 s resolution: the path came back within that
// second; an outage shorter than a whole second may leave no such second). nil
// when there is no timeline, or the second before the fault had no success either (a rate too
// low to tell an outage from a quiet second).
func LoadFailover(sc *results.Scenario, t, dueMs int64) *v1alpha1.FailoverStatus {
	if sc == nil || len(sc.FaultSeconds) == 0 {
		return nil
	}
	sec := t - ((t%1000)+1000)%1000
	base := results.SecondAt(sc.FaultSeconds, sec-1000)
	baseline := base.Calls - base.Errors
	if baseline <= 0 {
		return nil
	}
	endMs := min(sc.LastEnd.UnixMilli(), dueMs+results.FaultWindowAfter.Milliseconds())
	var spans []OutageSpan
	var open *OutageSpan
	for s := sec; s < endMs; s += 1000 {
		x := results.SecondAt(sc.FaultSeconds, s)
		if ok := x.Calls - x.Errors; ok > 0 && ok*LoadOutageFraction >= baseline {
			if open != nil {
				open.RecoveredMs = s
				spans, open = append(spans, *open), nil
			}
			continue
		}
		if open == nil {
			open = &OutageSpan{BeganMs: s}
		}
		open.Failed += x.Errors
	}
	if open != nil {
		spans = append(spans, *open)
	}
	f := AttributeOutages(spans, t, endMs, time.Duration(endMs-t)*time.Millisecond)
	f.MeasuredBy, f.AckedBefore, f.LostBefore = v1alpha1.FailoverByLoad, -1, -1
	return f
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
	md.WriteString("\nFaults:\n\n| # | scenario | offset | action | role | pod | applied | outcome | failover (ms) | failed writes | acked before | lost before | measured by | later outage (not the fault's) |\n|--:|:--|--:|:--|:--|:--|:--|:--|--:|--:|--:|--:|:--|:--|\n")
	for _, f := range st.Faults {
		applied := ""
		if f.AppliedTime != nil {
			applied = f.AppliedTime.UTC().Format("15:04:05.000")
		}
		fo, failed, acked, lost, by, later := failoverCells(f.Failover)
		outcome := string(f.Outcome)
		if f.Outcome != v1alpha1.FaultApplied {
			outcome += ": " + f.Message
		}
		action := string(f.Action)
		if f.Duration != "" {
			action += " " + f.Duration // a pause's duration
		}
		fmt.Fprintf(md, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f.Index, f.Scenario, f.Offset,
			action, f.Role, f.Pod, applied, outcome, fo, failed, acked, lost, by, later)
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

// failoverCells are the Faults table's failover cells: "-" for what was not measured.
func failoverCells(v *v1alpha1.FailoverStatus) (fo, failed, acked, lost, by, later string) {
	fo, failed, acked, lost, by, later = "-", "-", "-", "-", "-", "-"
	if v == nil {
		return
	}
	fo, failed, by = fmt.Sprint(v.Milliseconds), fmt.Sprint(v.FailedWrites), v.MeasuredBy
	if !v.Recovered {
		fo = fmt.Sprintf("> %d (not recovered)", v.Milliseconds)
	}
	if v.MeasuredBy == v1alpha1.FailoverByLoad {
		fo += " (1 s resolution)"
	}
	if v.AckedBefore >= 0 {
		acked = fmt.Sprint(v.AckedBefore)
	}
	if v.LostBefore >= 0 {
		lost = fmt.Sprint(v.LostBefore)
	}
	if l := v.LaterOutage; l != nil {
		later = fmt.Sprintf("began %+.1f s, lasted %.1f s, %d failed", float64(l.BeganAfterMs)/1000, float64(l.Milliseconds)/1000, l.Failed)
		if !l.Recovered {
			later += ", not recovered"
		}
	}
	return
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
