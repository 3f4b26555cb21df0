package runner

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results"
)

// TestFailoverAttribution: the rule that ties an outage to a fault, on synthetic probe logs.
// An outage is the fault's only when it began within 2 s of it (a write in flight counts);
// a later one is reported as LaterOutage and never as the fault's failover (the proxy master
// kill that reported 10.4 s for an outage beginning 8.4 s after the kill).
func TestFailoverAttribution(t *testing.T) {
	const f = 1_000_000
	cases := []struct {
		name     string
		outages  []Outage
		ms       int64
		failed   int64
		rec      bool
		later    *v1alpha1.LaterOutage
		laterNil bool
	}{
		{name: "at once", outages: []Outage{{FirstFailMs: f + 300, RecoveredMs: f + 7500, Failed: 40}}, ms: 7500, failed: 40, rec: true, laterNil: true},
		{name: "in flight", outages: []Outage{{FirstFailMs: f - 1000, RecoveredMs: f + 2000, Failed: 3}}, ms: 2000, failed: 3, rec: true, laterNil: true},
		{name: "at the bound", outages: []Outage{{FirstFailMs: f + 2000, RecoveredMs: f + 2500, Failed: 2}}, ms: 2500, failed: 2, rec: true, laterNil: true},
		{name: "began 8.4 s later", outages: []Outage{{FirstFailMs: f + 8400, RecoveredMs: f + 10_400, Failed: 40}}, rec: true,
			later: &v1alpha1.LaterOutage{BeganAfterMs: 8400, Milliseconds: 2000, Recovered: true, Failed: 40}},
		{name: "just after the bound", outages: []Outage{{FirstFailMs: f + 2001, RecoveredMs: f + 3000, Failed: 1}}, rec: true,
			later: &v1alpha1.LaterOutage{BeganAfterMs: 2001, Milliseconds: 999, Recovered: true, Failed: 1}},
		{name: "flapping", outages: []Outage{{FirstFailMs: f + 100, RecoveredMs: f + 200, Failed: 1}, {FirstFailMs: f + 900, RecoveredMs: f + 6000, Failed: 20}},
			ms: 6000, failed: 21, rec: true, laterNil: true},
		{name: "the fault's, then a later one", outages: []Outage{{FirstFailMs: f + 100, RecoveredMs: f + 1000, Failed: 5}, {FirstFailMs: f + 12_000, Failed: 7}},
			ms: 1000, failed: 5, rec: true, later: &v1alpha1.LaterOutage{BeganAfterMs: 12_000, Milliseconds: 48_000, Failed: 7}},
		{name: "under way before", outages: []Outage{{FirstFailMs: f - 5000, RecoveredMs: f + 3000, Failed: 60}}, rec: true, laterNil: true},
		{name: "over before", outages: []Outage{{FirstFailMs: f - 1500, RecoveredMs: f - 10, Failed: 3}}, rec: true, laterNil: true},
		{name: "never recovered", outages: []Outage{{FirstFailMs: f + 200, Failed: 900}}, ms: 60_000, failed: 900, laterNil: true},
		{name: "later than 30 s", outages: []Outage{{FirstFailMs: f + 31_000, RecoveredMs: f + 32_000, Failed: 5}}, rec: true, laterNil: true},
	}
	for _, c := range cases {
		p := &ProbeReport{EndMs: f + 60_000, Outages: c.outages}
		got := p.Failover(f)
		if got.Milliseconds != c.ms || got.FailedWrites != c.failed || got.Recovered != c.rec || got.MeasuredBy != v1alpha1.FailoverByProbe {
			t.Errorf("%s: %+v, want %d ms, %d failed, recovered %v", c.name, got, c.ms, c.failed, c.rec)
		}
		switch {
		case c.laterNil && got.LaterOutage != nil:
			t.Errorf("%s: later outage %+v, want none", c.name, got.LaterOutage)
		case c.later != nil && (got.LaterOutage == nil || *got.LaterOutage != *c.later):
			t.Errorf("%s: later outage %+v, want %+v", c.name, got.LaterOutage, c.later)
		}
	}
}

// secondsDoc is a scenario of type typ whose fault seconds have the given calls and errors
// from second 0 (start) on; its last call ended at the end of the last second.
func secondsDoc(typ string, start int64, calls, errs []int64) *results.Document {
	sc := results.Scenario{Name: "s", Type: typ, LastEnd: time.UnixMilli(start + int64(len(calls))*1000 - 1)}
	for i := range calls {
		if calls[i] > 0 {
			sc.FaultSeconds = append(sc.FaultSeconds, results.Second{StartUnixMs: start + int64(i)*1000, Calls: calls[i], Errors: errs[i]})
		}
	}
	return &results.Document{Scenarios: []results.Scenario{sc}}
}

// measure runs lifecycle.MeasureFaults for one kill applied at t (due then) on scenario s.
func measure(doc *results.Document, t int64, probe *ProbeReport) *v1alpha1.FailoverStatus {
	st := v1alpha1.BenchmarkRunStatus{Faults: []v1alpha1.FaultStatus{{Scenario: "s", Outcome: v1alpha1.FaultApplied,
		AppliedTime: &metav1.MicroTime{Time: time.UnixMilli(t)}}}}
	var fo func(int64) *v1alpha1.FailoverStatus
	if probe != nil {
		fo = probe.Failover
	}
	lifecycle.MeasureFaults(&st, []v1alpha1.Fault{{Scenario: "s"}}, doc, fo)
	return st.Faults[0].Failover
}

// TestFailoverThroughTheLoad: a HeTu pod kill after which every call failed (the probe, writing
// to the Redis back end directly, saw nothing) is measured from the scenario's own per-second
// timeline: not recovered, not 0 ms; the probe still gives the marker counts. A redis.*
// scenario keeps the probe's figure. A stall (no call completed for 3 s) and a collapse under
// 10 % of the second before are outages too; a
// quiet second before the fault makes the figure unmeasurable (nil, shown "-").
func TestFailoverThroughTheLoad(t *testing.T) {
	const start = 1_700_000_000_000
	kill := int64(start + 5400)
	probe := &ProbeReport{EndMs: kill + 12_000, AckTimes: EncodeAckTimes([]int64{kill - 100, kill + 100})}
	allFail := secondsDoc("hetu.hello_world", start, []int64{5000, 5000, 5000, 5000, 5000, 2100, 10, 12, 11, 10, 12, 10, 11, 12, 10, 9, 10},
		[]int64{0, 0, 0, 0, 0, 24, 10, 12, 11, 10, 12, 10, 11, 12, 10, 9, 10})
	f := measure(allFail, kill, probe)
	if f == nil || f.MeasuredBy != v1alpha1.FailoverByLoad || f.Recovered || f.Milliseconds < 10_000 || f.FailedWrites != 117 || f.AckedBefore != 1 || f.LostBefore != 0 {
		t.Errorf("hetu kill, every call failing after it: %+v", f)
	}
	allFail.Scenarios[0].Type = "redis.set"
	if f := measure(allFail, kill, probe); f == nil || f.MeasuredBy != v1alpha1.FailoverByProbe || f.Milliseconds != 0 {
		t.Errorf("redis.set scenario: the probe's figure: %+v", f)
	}
	stall := secondsDoc("hetu.get", start, []int64{900, 900, 900, 900, 900, 500, 0, 0, 0, 300, 900, 900}, make([]int64, 12))
	if f := measure(stall, kill, nil); f == nil || !f.Recovered || f.Milliseconds != 9000-5400 || f.FailedWrites != 0 || f.AckedBefore != -1 {
		t.Errorf("stall of 3 s: %+v", f)
	}
	collapse := secondsDoc("hetu.get", start, []int64{900, 900, 900, 900, 1000, 900, 40, 99, 500, 900}, make([]int64, 10))
	if f := measure(collapse, kill, nil); f == nil || !f.Recovered || f.Milliseconds != 8000-5400 {
		t.Errorf("successes under 10 %% of the second before for 2 s: %+v", f)
	}
	late := secondsDoc("tcp.echo", start, []int64{900, 900, 900, 900, 900, 900, 900, 900, 900, 0, 0, 900, 900}, make([]int64, 13))
	if f := measure(late, kill, nil); f == nil || f.Milliseconds != 0 || f.LaterOutage == nil || f.LaterOutage.BeganAfterMs != 9000-5400 || f.LaterOutage.Milliseconds != 2000 {
		t.Errorf("an outage 3.6 s after the fault: %+v", f)
	}
	quiet := secondsDoc("http", start, []int64{1, 0, 1, 0, 1, 0, 1, 0, 1}, make([]int64, 9))
	if f := measure(quiet, start+6400, nil); f != nil {
		t.Errorf("a quiet second before the fault: %+v, want not measured", f)
	}
	if f := measure(&results.Document{Scenarios: []results.Scenario{{Name: "s", Type: "http"}}}, kill, nil); f != nil {
		t.Errorf("no timeline: %+v, want not measured", f)
	}
}
