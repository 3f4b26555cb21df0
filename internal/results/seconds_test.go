package results

import (
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestFaultSecondsRecordMerge: calls completing inside a window are counted per wall-clock
// second of their end (errors and latency too), calls outside are not, and two runners'
// seconds merge to exactly what one recorder of all the calls has.
func TestFaultSecondsRecordMerge(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	wins := FaultWindows(base, []time.Duration{10 * time.Second})
	one, a, b := NewRecorder("s", "redis.get"), NewRecorder("s", "redis.get"), NewRecorder("s", "redis.get")
	for _, r := range []*Recorder{one, a, b} {
		r.SetWindows(wins)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20_000 {
		start := base.Add(time.Duration(i) * time.Millisecond)
		d := time.Duration(50+rng.IntN(5000)) * time.Microsecond
		errKind := ""
		if i%97 == 0 {
			errKind = "timeout"
		}
		one.Record(start, d, "v", errKind)
		if i%3 == 0 {
			a.Record(start, d, "v", errKind)
		} else {
			b.Record(start, d, "v", errKind)
		}
	}
	s := one.Scenario()
	// window [4 s, 22 s) of a 20 s load: seconds 4..19 (the calls ending in second 20 are past the load).
	if len(s.FaultSeconds) != 17 || s.FaultSeconds[0].StartUnixMs != base.Add(4*time.Second).UnixMilli() {
		t.Fatalf("seconds: %d, first %v", len(s.FaultSeconds), s.FaultSeconds[0].StartUnixMs)
	}
	mid := SecondAt(s.FaultSeconds, base.Add(10*time.Second).UnixMilli())
	if mid.Calls < 990 || mid.Calls > 1010 || mid.Errors < 9 || mid.Errors > 12 {
		t.Fatalf("second 10: %+v", mid)
	}
	if p := mid.P99Micros(); p < 4900 || p > 5100 {
		t.Fatalf("p99 %d µs, want about 5000", p)
	}
	if z := SecondAt(s.FaultSeconds, base.Add(30*time.Second).UnixMilli()); z.Calls != 0 || z.P99Micros() != 0 {
		t.Fatalf("an empty second: %+v", z)
	}
	merged, err := Merge(mustDoc(t, "a", a.Scenario()), mustDoc(t, "b", b.Scenario()))
	if err != nil {
		t.Fatal(err)
	}
	got := merged.Scenarios[0].FaultSeconds
	for i := range got { // float sums differ in their last bits only
		got[i].Latency.SumSquares, s.FaultSeconds[i].Latency.SumSquares = 0, 0
	}
	if !reflect.DeepEqual(got, s.FaultSeconds) {
		t.Fatalf("merged seconds differ from one recorder's")
	}
}

// mustDoc is the document of one runner's scenario.
func mustDoc(t *testing.T, runner string, s Scenario) *Document {
	t.Helper()
	doc, err := NewDocument(runner, s)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestFaultSecondsCodec: a document with fault seconds round-trips, Fit reduces their
// histograms exactly, and inconsistent seconds are refused with the field named.
func TestFaultSecondsCodec(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	r := NewRecorder("s", "redis.get")
	r.SetWindows(FaultWindows(base, []time.Duration{5 * time.Second}))
	for i := range 3000 {
		r.Record(base.Add(time.Duration(i)*3*time.Millisecond), time.Duration(100+i)*time.Microsecond, "v", "")
	}
	doc := mustDoc(t, "r", r.Scenario())
	var buf bytes.Buffer
	if err := Encode(&buf, doc); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Scenarios[0].FaultSeconds, doc.Scenarios[0].FaultSeconds) {
		t.Fatal("round trip changed the seconds")
	}
	calls := back.Scenarios[0].FaultSeconds[2].Calls
	for back.Coarsen() {
	}
	sec := back.Scenarios[0].FaultSeconds[2]
	if sec.Latency.SignificantFigures != 1 || sec.Calls != calls {
		t.Fatalf("after Coarsen: %+v", sec)
	}
	if err := back.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		edit func(*Second)
		want string
	}{
		{func(s *Second) { s.StartUnixMs++ }, "faultSeconds[0].startUnixMs"},
		{func(s *Second) { s.Errors = s.Calls + 1 }, "faultSeconds[0].errors"},
		{func(s *Second) { s.Calls++ }, "faultSeconds[0].latency.buckets"},
		{func(s *Second) { s.Latency.SignificantFigures = 3 }, "faultSeconds[0].latency.sigFigs"},
	}
	for _, c := range bad {
		d := mustDoc(t, "r", r.Scenario())
		c.edit(&d.Scenarios[0].FaultSeconds[0])
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error naming %s, got %v", c.want, err)
		}
	}
}

// TestFaultSecondsSize measures what fault seconds cost a runner's stored document: 16 faults
// (the most spec.faults allows) whose every second holds calls of widely spread latencies.
func TestFaultSecondsSize(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	offsets := make([]time.Duration, 16)
	for i := range offsets {
		offsets[i] = time.Duration(30*(i+1)) * time.Second
	}
	r := NewRecorder("s", "redis.get")
	r.SetWindows(FaultWindows(base, offsets))
	rng := rand.New(rand.NewPCG(3, 4))
	for ms := range int64(520_000) { // one call per ms over 8 min 40 s: every window full
		d := time.Duration(rng.ExpFloat64()*2000+20) * time.Microsecond
		if ms%50 == 0 {
			d = time.Duration(rng.IntN(2_000_000)) * time.Microsecond // a tail up to 2 s
		}
		r.Record(base.Add(time.Duration(ms)*time.Millisecond), d, "v", "")
	}
	doc := mustDoc(t, "r", r.Scenario())
	secs := len(doc.Scenarios[0].FaultSeconds)
	with := gzSize(t, doc)
	doc.Scenarios[0].FaultSeconds = nil
	without := gzSize(t, doc)
	t.Logf("%d fault seconds cost %d gzip bytes (%d per second): document %d -> %d bytes", secs, with-without, (with-without)/secs, without, with)
	doc = mustDoc(t, "r", r.Scenario())
	doc.coarsenSeconds()
	with = gzSize(t, doc)
	t.Logf("reduced to 1 significant figure: %d gzip bytes (%d per second)", with-without, (with-without)/secs)
	if secs > MaxFaultSeconds || secs < 16*18 {
		t.Fatalf("%d seconds", secs)
	}
	if with-without > StoredBudget/4 { // what Fit brings them to when a document is over budget
		t.Fatalf("reduced fault seconds take %d of the %d stored budget", with-without, StoredBudget)
	}
}

// gzSize is the gzip'd size of doc's encoding.
func gzSize(t *testing.T, doc *Document) int {
	t.Helper()
	var raw bytes.Buffer
	if err := Encode(&raw, doc); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(raw.Bytes())
	_ = zw.Close()
	return gz.Len()
}
