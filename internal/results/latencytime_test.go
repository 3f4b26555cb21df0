package results

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLatencyBins: the bins cover [0, HistogramMaxValue] in ascending order, each value lies
// in its bin, and a bin is less than 12.5 % of its value wide.
func TestLatencyBins(t *testing.T) {
	if b := LatencyBin(1<<32 - 1); b != latencyBinCount-1 || LatencyBin(HistogramMaxValue) >= latencyBinCount {
		t.Fatalf("bin of the largest value: %d, want %d", b, latencyBinCount-1)
	}
	for i := 1; i < latencyBinCount; i++ {
		if LatencyBinValue(i) <= LatencyBinValue(i-1) || LatencyBin(LatencyBinValue(i)) != i || LatencyBin(LatencyBinValue(i)-1) != i-1 {
			t.Fatalf("bin %d starts at %d (bin %d at %d)", i, LatencyBinValue(i), i-1, LatencyBinValue(i-1))
		}
		if i < latencyBinCount-1 && i >= 16 && float64(LatencyBinValue(i+1)-LatencyBinValue(i)) > 0.125*float64(LatencyBinValue(i)) {
			t.Fatalf("bin %d is %d wide at %d", i, LatencyBinValue(i+1)-LatencyBinValue(i), LatencyBinValue(i))
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100_000 {
		v := rng.Int64N(HistogramMaxValue + 1)
		if lo := LatencyBinValue(LatencyBin(v)); lo > v || (LatencyBin(v)+1 < latencyBinCount && LatencyBinValue(LatencyBin(v)+1) <= v) {
			t.Fatalf("%d in bin %d starting at %d", v, LatencyBin(v), lo)
		}
	}
}

// call is one recorded call of a test.
type call struct{ startNs, us int64 }

// recordCalls records n calls from start spread over d with log-normal-ish latencies and a
// tail into r, and returns them.
func recordCalls(r *Recorder, rng *rand.Rand, start time.Time, d time.Duration, n int) []call {
	out := make([]call, 0, n)
	for range n {
		at := start.Add(time.Duration(rng.Int64N(int64(d))))
		lat := time.Duration(200+rng.ExpFloat64()*3000) * time.Microsecond
		if rng.IntN(100) == 0 {
			lat = time.Duration(rng.IntN(2_000_000)) * time.Microsecond
		}
		r.Record(at, lat, "v", "")
		out = append(out, call{at.UnixNano(), clampMicros(int64(lat))})
	}
	return out
}

// expectedTimeline is the latency timeline of calls at width w, computed from every call.
func expectedTimeline(calls []call, w int64) *LatencyTimeline {
	lo, hi := int64(1<<62), int64(-1<<62)
	for _, c := range calls {
		k := floorDiv(c.startNs/1e6, w)
		lo, hi = min(lo, k), max(hi, k)
	}
	dense := make([][latencyBinCount]int64, hi-lo+1)
	maxes := make([]int64, hi-lo+1)
	for _, c := range calls {
		k := floorDiv(c.startNs/1e6, w) - lo
		dense[k][LatencyBin(c.us)]++
		maxes[k] = max(maxes[k], c.us)
	}
	t := &LatencyTimeline{StartUnixMs: lo * w, BucketMs: w, Intervals: make([][]int64, len(dense))}
	for k := range dense {
		t.Intervals[k] = []int64{}
		if maxes[k] > 0 {
			lo := slices.IndexFunc(dense[k][:], func(n int64) bool { return n > 0 })
			t.Intervals[k] = append([]int64{maxes[k], int64(lo)}, dense[k][lo:LatencyBin(maxes[k])+1]...)
		}
	}
	return t
}

// equalTimelines reports where two latency timelines differ ("" when equal).
func equalTimelines(a, b *LatencyTimeline) string {
	if a == nil || b == nil {
		return "nil timeline"
	}
	if a.StartUnixMs != b.StartUnixMs || a.BucketMs != b.BucketMs || len(a.Intervals) != len(b.Intervals) {
		return "start, width or length differ"
	}
	for i := range a.Intervals {
		if !slices.Equal(a.Intervals[i], b.Intervals[i]) {
			return "interval " + time.UnixMilli(a.StartUnixMs+int64(i)*a.BucketMs).UTC().String()
		}
	}
	return ""
}

// TestLatencyTimelineMergeExact: runners whose scenarios last differently long (so their
// timelines have different widths) merge to exactly the timeline of all their calls, whatever
// the order, and the merged timeline agrees with the scenario's histogram and starts.
func TestLatencyTimelineMergeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := time.Unix(1_800_000_000, 300_000_000)
	var all []call
	var docs []*Document
	for i, c := range []struct {
		off, d time.Duration
		vus    int
	}{{0, 3 * time.Minute, 3}, {2 * time.Second, 5 * time.Minute, 1}, {-700 * time.Millisecond, 30 * time.Second, 2}} {
		var snaps []Scenario
		for range c.vus { // one recorder per VU, like k6ext/bench
			r := NewRecorder("get", "redis.get")
			all = append(all, recordCalls(r, rng, base.Add(c.off), c.d, 20_000)...)
			snaps = append(snaps, r.Scenario())
		}
		doc, err := NewDocument("runner-"+string(rune('a'+i)), snaps...)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
	}
	if w := docs[0].Scenarios[0].LatencyTimeline.BucketMs; w != 1000 {
		t.Fatalf("3 min scenario: %d ms intervals, want 1000", w)
	}
	if w := docs[1].Scenarios[0].LatencyTimeline.BucketMs; w != 2000 {
		t.Fatalf("5 min scenario: %d ms intervals, want 2000", w)
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		m, err := Merge(docs[order[0]], docs[order[1]], docs[order[2]])
		if err != nil {
			t.Fatal(err)
		}
		got := m.Scenarios[0].LatencyTimeline
		if d := equalTimelines(got, expectedTimeline(all, 2000)); d != "" {
			t.Fatalf("order %v: merged timeline is not that of all calls: %s", order, d)
		}
		if n := len(got.Intervals); n > LatencyTimelineMaxBuckets {
			t.Fatalf("%d intervals", n)
		}
	}
	// Points: calls add up, percentiles within the exact values' range.
	m, _ := Merge(docs...)
	var calls int64
	for _, p := range m.Scenarios[0].LatencyTimeline.Points() {
		calls += p.Calls
		if !(p.P50Ms <= p.P90Ms && p.P90Ms <= p.P99Ms && p.P99Ms <= p.MaxMs) || p.P50Ms <= 0 {
			t.Fatalf("point %+v", p)
		}
	}
	if calls != m.Scenarios[0].Calls {
		t.Fatalf("points hold %d calls, scenario %d", calls, m.Scenarios[0].Calls)
	}
}

// TestLatencyTimelineRecorderWidens: a long scenario's timeline widens along TimelineWidthsMs
// and stays within LatencyTimelineMaxBuckets; calls out of order land in their interval.
func TestLatencyTimelineRecorderWidens(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	base := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{{4 * time.Minute, 1000}, {7 * time.Minute, 2000}, {39 * time.Minute, 10_000}, {3 * time.Hour, 60_000}, {50 * time.Hour, 900_000}} {
		r := NewRecorder("s", "")
		calls := recordCalls(r, rng, base, c.d, 5000)
		lt := r.Scenario().LatencyTimeline
		if lt.BucketMs != c.want || len(lt.Intervals) > LatencyTimelineMaxBuckets {
			t.Fatalf("%s: %d intervals of %d ms, want %d ms", c.d, len(lt.Intervals), lt.BucketMs, c.want)
		}
		if d := equalTimelines(lt, expectedTimeline(calls, c.want)); d != "" {
			t.Fatalf("%s: %s", c.d, d)
		}
	}
	if op := NewRecorder("s", "").Op("read"); op.lat != nil {
		t.Fatal("an operation records a latency timeline")
	}
	r := NewRecorder("s", "")
	recordCalls(r, rng, base, time.Minute, 100)
	full, live := r.Scenario(), r.LiveScenario()
	if live.LatencyTimeline != nil || full.LatencyTimeline == nil {
		t.Fatal("LiveScenario has a latency timeline, or Scenario none")
	}
	full.LatencyTimeline = nil
	if !reflect.DeepEqual(full, live) {
		t.Fatal("LiveScenario differs from Scenario beyond the latency timeline")
	}
}

// TestLatencyTimelineOptional: documents without a latency timeline (older runners, or Fit
// dropped it) decode and merge; the merge has none when a part with calls has none.
func TestLatencyTimelineOptional(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	base := time.Unix(1_800_000_000, 0)
	var docs []*Document
	for i := range 2 {
		r := NewRecorder("s", "")
		recordCalls(r, rng, base, time.Minute, 1000)
		docs = append(docs, mustDoc(t, "r"+string(rune('0'+i)), r.Scenario()))
	}
	empty := mustDoc(t, "r2", NewRecorder("s", "").Scenario())
	if m, err := Merge(docs[0], empty, docs[1]); err != nil || m.Scenarios[0].LatencyTimeline == nil {
		t.Fatalf("merging with a runner without calls: %v", err)
	}
	old := mustDoc(t, "r0", docs[0].Scenarios[0])
	old.Scenarios[0].LatencyTimeline = nil
	var buf bytes.Buffer
	if err := Encode(&buf, old); err != nil || strings.Contains(buf.String(), "latencyTimeline") {
		t.Fatalf("encoding without a timeline: %v", err)
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]*Document{{back, docs[1]}, {docs[1], back}} {
		m, err := Merge(pair[0], pair[1])
		if err != nil || m.Scenarios[0].LatencyTimeline != nil || m.Scenarios[0].Calls != 2000 {
			t.Fatalf("merge with an old document: %v, timeline %v", err, m.Scenarios[0].LatencyTimeline != nil)
		}
	}
}

// TestLatencyTimelineInvalid: inconsistent latency timelines are refused with the field named.
func TestLatencyTimelineInvalid(t *testing.T) {
	r := NewRecorder("s", "")
	recordCalls(r, rand.New(rand.NewPCG(4, 4)), time.Unix(1_800_000_000, 0), 10*time.Second, 500)
	for name, c := range map[string]struct {
		edit func(lt *LatencyTimeline, s *Scenario)
		want string
	}{
		"count":     {func(lt *LatencyTimeline, _ *Scenario) { lt.Intervals[0][2]++ }, "counts add up to"},
		"first":     {func(lt *LatencyTimeline, _ *Scenario) { lt.Intervals[1][1]++ }, "want from at least 1 to the bin of max"},
		"short":     {func(lt *LatencyTimeline, _ *Scenario) { lt.Intervals[2] = lt.Intervals[2][:2] }, "want [max, first, count"},
		"max":       {func(lt *LatencyTimeline, _ *Scenario) { lt.Intervals[3][0] = 1 }, "to the bin of max"},
		"width":     {func(lt *LatencyTimeline, _ *Scenario) { lt.BucketMs = 3000 }, "bucketMs"},
		"start":     {func(lt *LatencyTimeline, _ *Scenario) { lt.StartUnixMs -= 1000 }, "does not hold firstStart"},
		"empty end": {func(lt *LatencyTimeline, _ *Scenario) { lt.Intervals = append(lt.Intervals, []int64{}) }, "must not be empty"},
		"operation": {func(lt *LatencyTimeline, s *Scenario) { s.Operations = []Scenario{{Name: "x", LatencyTimeline: lt}} }, "latencyTimeline belong"},
		"negative": {func(lt *LatencyTimeline, _ *Scenario) {
			lt.Intervals[0][3], lt.Intervals[0][4] = -1, lt.Intervals[0][4]+lt.Intervals[0][3]+1
		}, "negative"},
		"zero count": {func(lt *LatencyTimeline, _ *Scenario) { lt.Intervals[0][2] = 0 }, "must be positive"},
	} {
		s := r.Scenario()
		c.edit(s.LatencyTimeline, &s)
		doc := &Document{SchemaVersion: SchemaVersion, Runners: []string{"r"}, Scenarios: []Scenario{s}}
		if err := doc.Validate(); err == nil || !strings.Contains(err.Error(), "latencyTimeline") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error naming latencyTimeline and %q, got %v", name, c.want, err)
		}
	}
}

// TestLatencyTimelineFit: a document over budget widens its latency timelines first, then
// drops them before the rest loses any precision; the rest is fitted as without them.
func TestLatencyTimelineFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	base := time.Unix(1_800_000_000, 0)
	doc := &Document{SchemaVersion: SchemaVersion, Runners: []string{"r"}}
	for i := range 8 {
		r := NewRecorder("s"+string(rune('a'+i)), "")
		recordCalls(r, rng, base, 4*time.Minute, 60_000)
		doc.Scenarios = append(doc.Scenarios, r.Scenario())
	}
	full := gzSize(t, doc)
	plain := mustCopy(t, doc)
	for i := range plain.Scenarios {
		plain.Scenarios[i].LatencyTimeline = nil
	}
	without := gzSize(t, plain)
	t.Logf("8 scenarios × 4 min: %d gzip bytes, %d without latency timelines", full, without)
	// Just under the full size: the timelines widen, the histograms keep 3 figures.
	d := mustCopy(t, doc)
	if _, n, err := Fit(d, full-1000); err != nil || n > (full-1000)/8*LatencyShareEighths {
		t.Fatalf("fit: %d, %v", n, err)
	}
	if lt := d.Scenarios[0].LatencyTimeline; lt == nil || lt.BucketMs == 1000 || d.Scenarios[0].Latency.SignificantFigures != 3 {
		t.Fatalf("fitted: timeline %+v, sigFigs %d", lt != nil, d.Scenarios[0].Latency.SignificantFigures)
	}
	// The rest fits but not with the narrowest timelines in LatencyShareEighths: some are
	// dropped, 3 figures kept.
	d = mustCopy(t, doc)
	budget := (without + 20_000) / 7 * 8
	if _, n, err := Fit(d, budget); err != nil || n > budget/8*LatencyShareEighths || d.Scenarios[0].Latency.SignificantFigures != 3 {
		t.Fatalf("fit: %d, %v", n, err)
	}
	kept := 0
	for _, s := range d.Scenarios {
		if s.LatencyTimeline != nil {
			kept++
		}
	}
	if kept == 0 || kept == len(d.Scenarios) {
		t.Fatalf("%d of %d timelines kept", kept, len(d.Scenarios))
	}
	t.Logf("within %d bytes: %d of %d timelines kept", budget, kept, len(d.Scenarios))
	// Below the size without timelines: the rest is fitted as if they did not exist.
	d, p := mustCopy(t, doc), mustCopy(t, plain)
	rawD, _, err := Fit(d, without-1000)
	if err != nil {
		t.Fatal(err)
	}
	rawP, _, _ := Fit(p, without-1000)
	for i := range d.Scenarios {
		d.Scenarios[i].LatencyTimeline = nil
	}
	var b bytes.Buffer
	_ = Encode(&b, d)
	if !bytes.Equal(b.Bytes(), rawP) || len(rawD) < len(rawP) {
		t.Fatal("the rest of the document is not fitted as without timelines")
	}
}

// mustCopy is a deep copy of doc through its encoding.
func mustCopy(t *testing.T, doc *Document) *Document {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, doc); err != nil {
		t.Fatal(err)
	}
	c, err := Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLatencyTimelineSize measures what the latency timeline costs a runner's stored document
// (gzip bytes per scenario-minute) for scenarios of 1,000 calls/s with widely spread
// latencies, by duration.
func TestLatencyTimelineSize(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		d    time.Duration
		tail bool
	}{{time.Minute, true}, {4 * time.Minute, true}, {4 * time.Minute, false}, {10 * time.Minute, true}, {time.Hour, true}} {
		d := c.d
		rng := rand.New(rand.NewPCG(1, 9))
		r := NewRecorder("s", "redis.get")
		for ms := int64(0); ms < d.Milliseconds(); ms++ {
			lat := time.Duration(200+rng.ExpFloat64()*3000) * time.Microsecond
			if c.tail && ms%100 == 0 {
				lat = time.Duration(rng.IntN(2_000_000)) * time.Microsecond
			}
			r.Record(base.Add(time.Duration(ms)*time.Millisecond), lat, "v", "")
		}
		mem := r.lat.memBytes()
		t.Logf("%s: the recorder holds %d KiB of latency timeline", d, mem>>10)
		doc := mustDoc(t, "r", r.Scenario())
		lt := doc.Scenarios[0].LatencyTimeline
		with := gzSize(t, doc)
		doc.Scenarios[0].LatencyTimeline = nil
		without := gzSize(t, doc)
		t.Logf("%s at 1,000 calls/s, 1 %% tail %v: %d intervals of %d s cost %d gzip bytes (%d per scenario-minute); document %d -> %d",
			d, c.tail, len(lt.Intervals), lt.BucketMs/1000, with-without, int(float64(with-without)/d.Minutes()), without, with)
		if with-without > 32<<10 {
			t.Fatalf("%s: the latency timeline costs %d bytes", d, with-without)
		}
	}
}

// TestLatencyTimelineHostileDecode: the most intervals the bounds let through (64 scenarios ×
// 8,784, empty or of one number: the most headers per stored byte) allocate a slice header
// each and their numbers once, not a slice each: under 40 MiB, not 74 MiB as encoding/json's
// [][]int64 did; text that is not arrays of integers is refused.
func TestLatencyTimelineHostileDecode(t *testing.T) {
	for _, iv := range []string{"[]", "[1]"} {
		sc := `{"latencyTimeline":{"intervals":[` + iv + strings.Repeat(","+iv, MaxLatencyIntervals-1) + `]}}`
		doc := []byte(`{"schemaVersion":2,"runners":["r"],"scenarios":[` + sc + strings.Repeat(","+sc, MaxScenarios-1) + `]}`)
		var a, z runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		_, err := DecodeBytes(doc)
		runtime.ReadMemStats(&z)
		alloc := z.TotalAlloc - a.TotalAlloc
		t.Logf("%s × %d × %d: %d KiB of text, %d MiB allocated (%v)", iv, MaxLatencyIntervals, MaxScenarios, len(doc)>>10, alloc>>20, err)
		if err == nil || alloc > 40<<20 {
			t.Errorf("%s: %d MiB allocated, error %v", iv, alloc>>20, err)
		}
	}
	for text, want := range map[string]string{
		`[[1.5]]`: "unexpected", `[[1e3]]`: "unexpected", `[[null]]`: "unexpected", `[[[1]]]`: "nested too deep",
		`[["a"]]`: "unexpected", `[[99999999999999999999]]`: "out of range", `[[-9223372036854775809]]`: "out of range",
	} {
		var lt LatencyTimeline
		if err := lt.UnmarshalJSON([]byte(`{"startUnixMs":0,"bucketMs":1000,"intervals":` + text + `}`)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an error containing %q, got %v", text, want, err)
		}
	}
}
