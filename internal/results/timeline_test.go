package results

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// recordSteady records one call every step from start for d into r and returns the start
// instants (Unix ms) it recorded.
func recordSteady(r *Recorder, start time.Time, d, step time.Duration, rng *rand.Rand) []int64 {
	var starts []int64
	for at := start; at.Before(start.Add(d)); at = at.Add(step + time.Duration(rng.IntN(int(step/10)+1))) {
		r.Record(at, time.Millisecond, "0", "")
		starts = append(starts, at.UnixMilli())
	}
	return starts
}

// exactBuckets counts starts (Unix ms) per bucket of w ms from the bucket holding the first.
func exactBuckets(starts []int64, w int64) (int64, []int64) {
	lo := floorDiv(slices.Min(starts), w) * w
	var out []int64
	for _, ms := range starts {
		i := (ms - lo) / w
		for int64(len(out)) <= i {
			out = append(out, 0)
		}
		out[i]++
	}
	return lo, out
}

// exactMinutes counts starts per minute [t0+i·60s, ...) with t0 the first start truncated to
// unit ms: the calls-per-minute rule.
func exactMinutes(starts []int64, unit int64) []int64 {
	t0 := floorDiv(slices.Min(starts), unit) * unit
	var m []int64
	for _, ms := range starts {
		i := (ms - t0) / 60_000
		for int64(len(m)) <= i {
			m = append(m, 0)
		}
		m[i]++
	}
	return m
}

// TestRecorderCoarsens: a Recorder's timeline coarsens along TimelineWidthsMs as the scenario
// grows, stays at most TimelineMaxBuckets long, counts every start in the right bucket, and
// the calls per minute stay exact while buckets divide a minute.
func TestRecorderCoarsens(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		d, step time.Duration
		wantMs  int64
	}{
		{40 * time.Minute, 50 * time.Millisecond, 1000},
		{90 * time.Minute, 500 * time.Millisecond, 2000},
		{6 * time.Hour, 2 * time.Second, 10_000},
		{12 * time.Hour, 5 * time.Second, 20_000},
		{24 * time.Hour, 5 * time.Second, 60_000},
		{168 * time.Hour, 30 * time.Second, 300_000},
	} {
		r := NewRecorder("s", "")
		starts := recordSteady(r, t0, c.d, c.step, rng)
		s := r.Scenario()
		doc := &Document{SchemaVersion: SchemaVersion, Runners: []string{"r"}, Scenarios: []Scenario{s}}
		if err := doc.Validate(); err != nil {
			t.Fatalf("%v: %v", c.d, err)
		}
		if s.Starts.BucketMs != c.wantMs || len(s.Starts.Counts) > TimelineMaxBuckets {
			t.Errorf("%v: %d buckets of %d ms, want buckets of %d ms, at most %d", c.d, len(s.Starts.Counts), s.Starts.BucketMs, c.wantMs, TimelineMaxBuckets)
		}
		lo, want := exactBuckets(starts, s.Starts.BucketMs)
		if lo != s.Starts.StartUnixMs || !slices.Equal(want, s.Starts.Counts) {
			t.Errorf("%v: timeline differs from the starts counted exactly", c.d)
		}
		cpm := Summarize(doc, DefaultOptions()).Scenarios[0]
		if c.wantMs <= 60_000 {
			unit, _ := commonWidth(1000, c.wantMs)
			if !slices.Equal(cpm.CallsPerMinute, exactMinutes(starts, unit)) || cpm.CallsPerInterval != nil {
				t.Errorf("%v: calls per minute %v…, want %v…", c.d, cpm.CallsPerMinute[:3], exactMinutes(starts, unit)[:3])
			}
		} else if cpm.CallsPerMinute != nil || !slices.Equal(cpm.CallsPerInterval, s.Starts.Counts) || cpm.IntervalSeconds != c.wantMs/1000 {
			t.Errorf("%v: buckets of %d ms: calls per minute %d long, per interval %d long of %d s", c.d, c.wantMs,
				len(cpm.CallsPerMinute), len(cpm.CallsPerInterval), cpm.IntervalSeconds)
		}
	}
}

// TestRecorderCoarsensOutOfOrder: starts arriving before the first one seen (grown at the
// front) coarsen the timeline the same way.
func TestRecorderCoarsensOutOfOrder(t *testing.T) {
	r := NewRecorder("s", "")
	r.Record(t0.Add(3*time.Hour), time.Millisecond, "0", "")
	r.Record(t0, time.Millisecond, "0", "")
	r.Record(t0.Add(time.Hour), time.Millisecond, "0", "")
	s := r.Scenario()
	if s.Starts.BucketMs != 10_000 || len(s.Starts.Counts) > TimelineMaxBuckets {
		t.Fatalf("%d buckets of %d ms", len(s.Starts.Counts), s.Starts.BucketMs)
	}
	if err := (&Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{s}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestMergeDifferentWidths: documents whose timelines coarsened differently (a runner that
// ran 2 h next to one that ran 30 h: 10 s and 1 min buckets) merge exactly at the coarser width, in any order, and
// the calls per minute of the merge are the exact counts of all starts.
func TestMergeDifferentWidths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ra, rb := NewRecorder("s", ""), NewRecorder("s", "")
	sa := recordSteady(ra, t0.Add(90*time.Minute), 2*time.Hour, 700*time.Millisecond, rng)
	sb := recordSteady(rb, t0, 30*time.Hour, 11*time.Second, rng)
	da := &Document{SchemaVersion: SchemaVersion, Runners: []string{"a"}, Scenarios: []Scenario{ra.Scenario()}}
	db := &Document{SchemaVersion: SchemaVersion, Runners: []string{"b"}, Scenarios: []Scenario{rb.Scenario()}}
	if da.Scenarios[0].Starts.BucketMs != 10_000 || db.Scenarios[0].Starts.BucketMs != 60_000 {
		t.Fatalf("widths %d and %d", da.Scenarios[0].Starts.BucketMs, db.Scenarios[0].Starts.BucketMs)
	}
	ab, ba := mustMerge(t, da, db), mustMerge(t, db, da)
	all := append(slices.Clone(sa), sb...)
	lo, want := exactBuckets(all, 60_000)
	for _, m := range []*Document{ab, ba} {
		st := m.Scenarios[0].Starts
		if st.BucketMs != 60_000 || st.StartUnixMs != lo || !slices.Equal(st.Counts, want) {
			t.Errorf("merged timeline: %d buckets of %d ms from %d, want %d from %d", len(st.Counts), st.BucketMs, st.StartUnixMs, len(want), lo)
		}
	}
	if got := Summarize(ab, DefaultOptions()).Scenarios[0].CallsPerMinute; !slices.Equal(got, exactMinutes(all, 60_000)) {
		t.Errorf("calls per minute of the merge differ from the exact counts")
	}
	// Inputs untouched.
	if da.Scenarios[0].Starts.BucketMs != 10_000 || da.Validate() != nil {
		t.Error("merge changed its input")
	}
}

// TestMergerStreams: a Merger fed one document at a time gives Merge's document.
func TestMergerStreams(t *testing.T) {
	var docs []*Document
	m := NewMerger()
	for i := range 130 {
		d, _ := randomDoc(fmt.Sprint("runner-", i), uint64(i+1), t0.Add(time.Duration(i)*time.Second), 200, "get", "set")
		docs = append(docs, d)
		if err := m.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	got, err := m.Document()
	if err != nil {
		t.Fatal(err)
	}
	sameDocs(t, "streamed", got, mustMerge(t, docs...))
	if len(got.Runners) != 130 {
		t.Errorf("%d runners", len(got.Runners))
	}
}

// TestReducePrecision: a histogram reduced to 2 significant figures keeps every count, stays
// valid, merges with 3-figure histograms at 2 figures exactly, and its percentiles stay
// within 1 % of the exact ones.
func TestReducePrecision(t *testing.T) {
	a, raw := randomDoc("a", 1, t0, 50_000, "get")
	b, rawB := randomDoc("b", 2, t0, 50_000, "get")
	coarse := &Document{SchemaVersion: SchemaVersion, Runners: a.Runners, Scenarios: slices.Clone(a.Scenarios)}
	coarse.Scenarios[0].Latency = reducePrecision(a.Scenarios[0].Latency, HistogramCoarseSigFigs)
	if err := coarse.Validate(); err != nil {
		t.Fatal(err)
	}
	h := coarse.Scenarios[0].Latency
	if len(h.Buckets) >= len(a.Scenarios[0].Latency.Buckets)/3 {
		t.Errorf("%d buckets from %d", len(h.Buckets), len(a.Scenarios[0].Latency.Buckets))
	}
	m := mustMerge(t, coarse, b)
	bc := &Document{SchemaVersion: SchemaVersion, Runners: b.Runners, Scenarios: slices.Clone(b.Scenarios)}
	bc.Scenarios[0].Latency = reducePrecision(b.Scenarios[0].Latency, HistogramCoarseSigFigs)
	want := mustMerge(t, coarse, bc)
	if !slices.Equal(m.Scenarios[0].Latency.Buckets, want.Scenarios[0].Latency.Buckets) || m.Scenarios[0].Latency.SignificantFigures != 2 {
		t.Error("merging 2 and 3 figures differs from merging both at 2")
	}
	all := append(slices.Clone(raw["get"]), rawB["get"]...)
	slices.Sort(all)
	got := Summarize(m, DefaultOptions()).Scenarios[0].LatencyMs
	for _, c := range []struct {
		q   float64
		got float64
	}{{0.5, got.P50}, {0.9, got.P90}, {0.99, got.P99}} {
		if exact := exactQuantile(all, c.q) / 1000; c.got < exact*0.99-0.01 || c.got > exact*1.01+0.01 {
			t.Errorf("p%v = %v ms, exact %v ms", c.q*100, c.got, exact)
		}
	}
}

// TestFit: a document over budget is coarsened step by step, exactly, until it fits or
// nothing is left to coarsen; one within budget is left alone.
func TestFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := NewRecorder("s", "")
	recordSteady(r, t0, 40*time.Minute, 100*time.Millisecond, rng)
	doc := &Document{SchemaVersion: SchemaVersion, Runners: []string{"r"}, Scenarios: []Scenario{r.Scenario()}}
	before := doc.Scenarios[0]
	if _, _, err := Fit(doc, 1<<20); err != nil || doc.Scenarios[0].Starts.BucketMs != 1000 || doc.Scenarios[0].Latency.SignificantFigures != 3 {
		t.Fatalf("a small document was coarsened: %v", err)
	}
	raw, n, err := Fit(doc, 1)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(bytesReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	s := back.Scenarios[0]
	if s.Calls != before.Calls || s.Latency.Sum != before.Latency.Sum || s.Latency.SignificantFigures != 2 ||
		s.Starts.BucketMs != 3_600_000 || n <= 0 {
		t.Errorf("fitted to nothing: %d calls, sigFigs %d, buckets of %d ms, %d bytes", s.Calls, s.Latency.SignificantFigures, s.Starts.BucketMs, n)
	}
	if doc.Coarsen() {
		t.Error("Coarsen reported more to do at the coarsest")
	}
}

// bytesReader reads b.
func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestFitOperations: Fit coarsens the per-operation histograms and timelines with their
// scenario's (a YCSB document is mostly operations), exactly.
func TestFitOperations(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	r := NewRecorder("ycsb", "ycsb")
	read, update := r.Op("read"), r.Op("update")
	for at := t0; at.Before(t0.Add(40 * time.Minute)); at = at.Add(100*time.Millisecond + time.Duration(rng.IntN(10_000_000))) {
		op := read
		if rng.IntN(2) == 0 {
			op = update
		}
		d := time.Duration(50+rng.IntN(5000)) * time.Microsecond
		r.Record(at, d, "0", "")
		op.Record(at, d, "0", "")
	}
	doc := &Document{SchemaVersion: SchemaVersion, Runners: []string{"r"}, Scenarios: []Scenario{r.Scenario()}}
	before := doc.Scenarios[0]
	if len(before.Operations) != 2 {
		t.Fatalf("operations = %d, want 2", len(before.Operations))
	}
	raw, _, err := Fit(doc, 1)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(bytesReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for i, op := range back.Scenarios[0].Operations {
		if op.Latency.SignificantFigures != 2 || op.Starts.BucketMs != 3_600_000 ||
			op.Calls != before.Operations[i].Calls || op.Latency.Sum != before.Operations[i].Latency.Sum {
			t.Errorf("operation %s not fitted exactly: sigFigs %d, buckets of %d ms, %d calls (want %d)",
				op.Name, op.Latency.SignificantFigures, op.Starts.BucketMs, op.Calls, before.Operations[i].Calls)
		}
	}
}
