package results

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// randomDoc records a runner's document: for each scenario, n calls with log-normal latencies
// (whole microseconds) started at a steady pace from start, return values 0..3.
func randomDoc(runner string, seed uint64, start time.Time, n int, scenarios ...string) (*Document, map[string][]int64) {
	rng := rand.New(rand.NewPCG(seed, seed*31+1))
	raw := make(map[string][]int64)
	doc := &Document{SchemaVersion: SchemaVersion, Runners: []string{runner}}
	for si, name := range scenarios {
		r := NewRecorder(name, "test."+name)
		mu := math.Log(2000 * float64(si+1)) // median 2 ms, 4 ms, ...
		at := start
		for range n {
			us := int64(math.Exp(mu + 0.6*rng.NormFloat64()))
			us = max(us, 1)
			kind, value := "", "0"
			if x := rng.IntN(1000); x < 5 {
				kind = "timeout"
			} else if x < 60 {
				value = fmt.Sprint(1 + x%3)
			}
			r.Record(at, time.Duration(us)*time.Microsecond, value, kind)
			raw[name] = append(raw[name], us)
			at = at.Add(time.Duration(rng.IntN(200)) * time.Microsecond)
		}
		doc.Scenarios = append(doc.Scenarios, r.Scenario())
	}
	return doc, raw
}

// exactQuantile returns the nearest-rank quantile q of sorted values.
func exactQuantile(sorted []int64, q float64) float64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	return float64(sorted[max(rank, 1)-1])
}

func TestMergeAccuracy(t *testing.T) {
	const docs, n = 8, 100_000
	var all []*Document
	var raw []int64
	for i := range docs {
		// Runners start up to 3 s apart, not aligned on seconds.
		doc, r := randomDoc(fmt.Sprint("runner-", i), uint64(i+1), t0.Add(time.Duration(i)*377*time.Millisecond), n, "get")
		all = append(all, doc)
		raw = append(raw, r["get"]...)
	}
	merged, err := Merge(all...)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(raw)
	var sum int64
	for _, v := range raw {
		sum += v
	}
	sc := Summarize(merged, DefaultOptions()).Scenarios[0]
	if sc.Calls != docs*n || merged.Scenarios[0].Latency.Sum != sum {
		t.Errorf("calls %d sum %d, want %d and %d", sc.Calls, merged.Scenarios[0].Latency.Sum, docs*n, sum)
	}
	exact := map[string]float64{
		"mean": round2(float64(sum) / float64(len(raw)) / 1000),
		"min":  round2(float64(raw[0]) / 1000),
		"max":  round2(float64(raw[len(raw)-1]) / 1000),
	}
	got := map[string]float64{"mean": sc.LatencyMs.Mean, "min": sc.LatencyMs.Min, "max": sc.LatencyMs.Max}
	if !reflect.DeepEqual(got, exact) {
		t.Errorf("got %v, want exactly %v", got, exact)
	}
	for _, c := range []struct {
		q   float64
		got float64
	}{{0.5, sc.LatencyMs.P50}, {0.9, sc.LatencyMs.P90}, {0.99, sc.LatencyMs.P99}, {0.999, sc.LatencyMs.P999}} {
		want := exactQuantile(raw, c.q) / 1000
		if math.Abs(c.got-want)/want > 0.01 {
			t.Errorf("p%v = %v ms, exact %v ms: more than 1 %% off", c.q*100, c.got, want)
		}
	}
	var mean, ss float64
	for _, v := range raw {
		mean += float64(v)
	}
	mean /= float64(len(raw))
	for _, v := range raw {
		ss += (float64(v) - mean) * (float64(v) - mean)
	}
	if std := math.Sqrt(ss/float64(len(raw)-1)) / 1000; math.Abs(sc.LatencyMs.StdDev-std) > 0.01 {
		t.Errorf("stddev %v, want %v", sc.LatencyMs.StdDev, std)
	}
	var timeline int64
	for _, n := range merged.Scenarios[0].Starts.Counts {
		timeline += n
	}
	if timeline != docs*n || len(merged.Runners) != docs {
		t.Errorf("timeline holds %d starts, %d runners", timeline, len(merged.Runners))
	}
}

// sameDocs compares merged documents, allowing float rounding in SumSquares.
func sameDocs(t *testing.T, what string, a, b *Document) {
	t.Helper()
	a, b = cloneDoc(a), cloneDoc(b)
	if len(a.Scenarios) == len(b.Scenarios) {
		for i := range a.Scenarios {
			x, y := a.Scenarios[i].Latency.SumSquares, b.Scenarios[i].Latency.SumSquares
			if math.Abs(x-y) > 1e-12*math.Max(x, y) {
				t.Errorf("%s: scenario %d sumSquares %v vs %v", what, i, x, y)
			}
			a.Scenarios[i].Latency.SumSquares, b.Scenarios[i].Latency.SumSquares = 0, 0
		}
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: documents differ:\n%+v\n%+v", what, a, b)
	}
}

// cloneDoc deep-copies a document.
func cloneDoc(d *Document) *Document {
	c := *d
	c.Runners = slices.Clone(d.Runners)
	c.PartialReasons = slices.Clone(d.PartialReasons)
	c.Scenarios = nil
	for _, s := range d.Scenarios {
		c.Scenarios = append(c.Scenarios, cloneScenario(s))
	}
	return &c
}

// mustMerge merges or fails the test.
func mustMerge(t *testing.T, docs ...*Document) *Document {
	t.Helper()
	m, err := Merge(docs...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMergeProperties(t *testing.T) {
	a, _ := randomDoc("a", 1, t0, 3000, "get", "set")
	b, _ := randomDoc("b", 2, t0.Add(4*time.Second), 2000, "set", "upsert")
	c, _ := randomDoc("c", 3, t0.Add(-1500*time.Millisecond), 1000, "get", "hello")
	c.Partial, c.PartialReasons = true, []string{"runner c: evicted"}
	c.Scenarios = append(c.Scenarios, NewRecorder("idle", "test.idle").Scenario())

	abc := mustMerge(t, a, b, c)
	sameDocs(t, "commutative", abc, mustMerge(t, c, a, b))
	sameDocs(t, "commutative", abc, mustMerge(t, b, c, a))
	sameDocs(t, "associative (ab)c", abc, mustMerge(t, mustMerge(t, a, b), c))
	sameDocs(t, "associative a(bc)", abc, mustMerge(t, a, mustMerge(t, b, c)))
	sameDocs(t, "associative (ac)b", abc, mustMerge(t, mustMerge(t, a, c), b))
	sameDocs(t, "idempotent single", a, mustMerge(t, a))

	s1 := Summarize(abc, DefaultOptions())
	s2 := Summarize(mustMerge(t, mustMerge(t, c, b), a), DefaultOptions())
	if !reflect.DeepEqual(s1, s2) {
		t.Errorf("summaries differ:\n%+v\n%+v", s1, s2)
	}

	var names []string
	for _, s := range abc.Scenarios {
		names = append(names, s.Name)
	}
	// Run order: by first start; scenarios without calls last.
	if got := strings.Join(names, ","); got != "get,hello,set,upsert,idle" {
		t.Errorf("scenario order %s", got)
	}
	if !abc.Partial || !reflect.DeepEqual(abc.PartialReasons, []string{"runner c: evicted"}) || strings.Join(abc.Runners, ",") != "a,b,c" {
		t.Errorf("partial %v %v runners %v", abc.Partial, abc.PartialReasons, abc.Runners)
	}
	get := abc.Scenarios[0]
	if get.Calls != 4000 || get.Type != "test.get" {
		t.Errorf("get: %d calls, type %q", get.Calls, get.Type)
	}
	// Inputs are untouched.
	a2, _ := randomDoc("a", 1, t0, 3000, "get", "set")
	sameDocs(t, "input unchanged", a, a2)

	if m, err := Merge(); err != nil || len(m.Scenarios) != 0 || m.Validate() != nil {
		t.Errorf("Merge() = %+v, %v", m, err)
	}
}

func TestMergeTimelineAlignment(t *testing.T) {
	ra, rb := NewRecorder("s", ""), NewRecorder("s", "")
	ra.Record(t0, time.Millisecond, "0", "")                    // second 30
	ra.Record(t0.Add(time.Second), time.Millisecond, "0", "")   // second 31
	rb.Record(t0.Add(3*time.Second), time.Millisecond, "0", "") // second 33
	rb.Record(t0.Add(-2*time.Second), time.Millisecond, "0", "")
	doc := func(s Scenario) *Document { return &Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{s}} }
	m := mustMerge(t, doc(ra.Scenario()), doc(rb.Scenario()))
	st := m.Scenarios[0].Starts
	if st.StartUnixMs != t0.Add(-2*time.Second).Truncate(time.Second).UnixMilli() || fmt.Sprint(st.Counts) != "[1 0 1 1 0 1]" {
		t.Errorf("merged timeline %+v", st)
	}
	if !m.Scenarios[0].FirstStart.Equal(t0.Add(-2*time.Second)) || !m.Scenarios[0].LastEnd.Equal(t0.Add(3001*time.Millisecond)) {
		t.Errorf("first %v last %v", m.Scenarios[0].FirstStart, m.Scenarios[0].LastEnd)
	}
}

func TestMergeErrors(t *testing.T) {
	a, _ := randomDoc("a", 1, t0, 10, "get")
	b, _ := randomDoc("b", 2, t0, 10, "get")
	b.Scenarios[0].Starts.BucketMs = 500
	b.Scenarios[0].Starts.StartUnixMs = t0.Truncate(500 * time.Millisecond).UnixMilli()
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	// Different widths merge at their least common multiple (here 1000 ms), exactly.
	if m, err := Merge(a, b); err != nil || m.Scenarios[0].Starts.BucketMs != 1000 || m.Scenarios[0].Calls != 20 {
		t.Errorf("bucketMs 1000 and 500: %v", err)
	}
	// Widths without a common multiple of at most a day are an error.
	b.Scenarios[0].Starts = rebucket(b.Scenarios[0].Starts, 86_400_000)
	c, _ := randomDoc("c", 3, t0, 10, "get")
	c.Scenarios[0].Starts = rebucket(rebucket(c.Scenarios[0].Starts, 7000), 7000)
	if err := errors.Join(b.Validate(), c.Validate()); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(b, c); err == nil || !strings.Contains(err.Error(), "bucketMs 86400000 and 7000 have no common width") {
		t.Errorf("bucketMs mismatch: %v", err)
	}
	b, _ = randomDoc("b", 2, t0, 10, "get")
	b.Scenarios[0].Type = "other"
	if _, err := Merge(a, b); err == nil || !strings.Contains(err.Error(), `scenario "get": type "other" differs`) {
		t.Errorf("type mismatch: %v", err)
	}
	b.Scenarios[0].Calls++
	if _, err := Merge(a, b); err == nil || !strings.Contains(err.Error(), "merging document 1") {
		t.Errorf("invalid input: %v", err)
	}
	b, _ = randomDoc("b", 2, t0.AddDate(2, 0, 0), 10, "get")
	if _, err := Merge(a, b); err == nil || !strings.Contains(err.Error(), "merged starts timeline: ") {
		t.Errorf("timelines two years apart: %v", err)
	}
}

func TestMergeFoldsValues(t *testing.T) {
	// Two runners see disjoint sets of MaxDistinctValues values: the merge keeps the
	// MaxDistinctValues-1 largest counts and folds the rest into OtherValue.
	var docs []*Document
	for d := range 2 {
		r := NewRecorder("s", "")
		for v := range MaxDistinctValues {
			for range 1 + v + d*MaxDistinctValues {
				r.Record(t0, time.Millisecond, fmt.Sprint("v", d, "-", v), "")
			}
		}
		docs = append(docs, &Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{r.Scenario()}})
	}
	m := mustMerge(t, docs...)
	vals := m.Scenarios[0].ReturnValues
	if len(vals) != MaxDistinctValues {
		t.Fatalf("%d values", len(vals))
	}
	var total, wantOther int64
	for _, n := range vals {
		total += n
	}
	for v := range MaxDistinctValues {
		wantOther += int64(1 + v) // all of runner 0's values are smaller than runner 1's
		if _, ok := vals[fmt.Sprint("v1-", v)]; !ok && v > 0 {
			t.Errorf("v1-%d folded although larger than others", v)
		}
	}
	wantOther += 1 + MaxDistinctValues // runner 1's smallest value
	if total != m.Scenarios[0].Calls || vals[OtherValue] != wantOther {
		t.Errorf("total %d (calls %d), other %d want %d", total, m.Scenarios[0].Calls, vals[OtherValue], wantOther)
	}
	// Folding keeps the larger counts and breaks ties by value.
	got := boundMap(map[string]int64{OtherValue: 5, "b": 3, "a": 3})
	if !reflect.DeepEqual(got, map[string]int64{OtherValue: 5, "b": 3, "a": 3}) {
		t.Errorf("small map changed: %v", got)
	}
	big := map[string]int64{OtherValue: 1}
	for i := range MaxDistinctValues + 1 {
		big[fmt.Sprintf("k%03d", i)] = 10
	}
	got = boundMap(big)
	if len(got) != MaxDistinctValues || got[OtherValue] != 1+2*10 || got["k000"] != 10 || got[fmt.Sprintf("k%03d", MaxDistinctValues)] != 0 {
		t.Errorf("folded map: %d entries, other %d", len(got), got[OtherValue])
	}
}

func TestNewDocument(t *testing.T) {
	vu1, vu2, other := NewRecorder("get", "redis.get"), NewRecorder("get", "redis.get"), NewRecorder("set", "redis.set")
	vu1.Record(t0, time.Millisecond, "0", "")
	vu2.Record(t0.Add(time.Second), 2*time.Millisecond, "1", "")
	other.Record(t0.Add(time.Second), time.Millisecond, "OK", "")
	doc, err := NewDocument("runner-0", vu1.Scenario(), other.Scenario(), vu2.Scenario())
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Scenarios) != 2 || doc.Scenarios[0].Calls != 2 || doc.Scenarios[1].Name != "set" || !reflect.DeepEqual(doc.Runners, []string{"runner-0"}) {
		t.Errorf("document %+v", doc)
	}
	m := mustMerge(t, doc, doc)
	if !reflect.DeepEqual(m.Runners, []string{"runner-0"}) || m.Scenarios[0].Calls != 4 {
		t.Errorf("runners %v, calls %d", m.Runners, m.Scenarios[0].Calls)
	}
}
