package results

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// openRunner records a two-step search of one runner: step 1 at 100/s with 1 ms service
// times; step 2 at 200/s where the calls start late (queueing) by lag and some are dropped.
func openRunner(t *testing.T, runner string, t0 time.Time, lag time.Duration, dropped int64) *Document {
	t.Helper()
	r := NewRecorder("search", "redis.get")
	r.SetTargetRate(150)
	for step, rate := range []float64{100, 200} {
		op := r.Op(StepName(step + 1))
		op.SetTargetRate(rate)
		base := t0.Add(time.Duration(step) * 10 * time.Second)
		n := int(rate * 10)
		for i := range n {
			intended := base.Add(time.Duration(i) * time.Second / time.Duration(rate))
			sent := intended
			if step == 1 {
				sent = intended.Add(lag)
			}
			end := sent.Add(time.Millisecond)
			r.RecordOpen(intended, sent, end, "OK", "")
			op.RecordOpen(intended, sent, end, "OK", "")
		}
		if step == 1 {
			op.AddDropped(dropped)
			r.AddDropped(dropped)
		}
	}
	doc, err := NewDocument(runner, r.Scenario())
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestOpenModelDocumentMergeAndSearch(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := openRunner(t, "a", t0, 20*time.Millisecond, 10)
	b := openRunner(t, "b", t0, 20*time.Millisecond, 5)
	var buf bytes.Buffer
	if err := Encode(&buf, a); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	m, err := Merge(back, b)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Scenarios[0]
	if s.ServiceTime == nil || s.Dropped != 15 || s.TargetRate != 300 || s.Calls != 6000 {
		t.Fatalf("merged: serviceTime %v dropped %d targetRate %v calls %d", s.ServiceTime != nil, s.Dropped, s.TargetRate, s.Calls)
	}
	maxErr := 0.1
	opts := DefaultOptions()
	opts.Search = map[string]SearchRule{"search": {MaxP99: 10 * time.Millisecond, MaxErrorPercent: &maxErr}}
	sum := Summarize(m, opts)
	o := sum.Scenarios[0].Open
	if o == nil || o.Search == nil || len(o.Search.Steps) != 2 {
		t.Fatalf("open summary: %+v", o)
	}
	st1, st2 := o.Search.Steps[0], o.Search.Steps[1]
	if !st1.Passed || st2.Passed || o.Search.BestRate != 200 {
		t.Errorf("steps passed %v %v, best %v; want step 1 only, best 200/s", st1.Passed, st2.Passed, o.Search.BestRate)
	}
	// Corrected latency includes the 20 ms start lag, the service time does not.
	if st2.P99Ms < 20 || st2.ServiceP99Ms > 1.1 {
		t.Errorf("step 2: corrected p99 %v ms (want >= 20), service p99 %v ms (want ~1)", st2.P99Ms, st2.ServiceP99Ms)
	}
	if st1.CPS < 198 || st1.CPS > 202 {
		t.Errorf("step 1 CPS %v, want 200 (two runners at 100/s)", st1.CPS)
	}
	if sum.Scenarios[0].Reads != nil {
		t.Error("a search scenario got YCSB read/write groups")
	}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, "", sum); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Open Model", "Saturation Search search (p99 <= 10ms, (errors+dropped) <= 0.1 %): highest rate meeting the rule: 200.00/s", "step-02"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
}

func TestOpenModelRefusesMixedAndInvalid(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	open := openRunner(t, "a", t0, 0, 0)
	closed := NewRecorder("search", "redis.get")
	closed.Record(t0, time.Millisecond, "OK", "")
	c, err := NewDocument("b", closed.Scenario())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(open, c); err == nil || !strings.Contains(err.Error(), "closed-model") {
		t.Errorf("open + closed merged: %v", err)
	}
	bad := openRunner(t, "a", t0, 0, 0)
	bad.Scenarios[0].Dropped = -1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "dropped") {
		t.Errorf("negative dropped: %v", err)
	}
	bad = openRunner(t, "a", t0, 0, 0)
	bad.Scenarios[0].ServiceTime.Buckets[0][1]++
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "serviceTime") {
		t.Errorf("service histogram not adding up: %v", err)
	}
}

func TestClosedModelUnchanged(t *testing.T) {
	r := NewRecorder("get", "redis.get")
	r.Record(time.Unix(1e9, 0), time.Millisecond, "OK", "")
	var buf bytes.Buffer
	doc, _ := NewDocument("a", r.Scenario())
	if err := Encode(&buf, doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"serviceTime", "dropped", "targetRate"} {
		if strings.Contains(buf.String(), k) {
			t.Errorf("closed-model document has %q", k)
		}
	}
	if Summarize(doc, DefaultOptions()).Scenarios[0].Open != nil {
		t.Error("closed-model summary has open figures")
	}
}
