package results

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// t0 is an arbitrary wall-clock instant not aligned on a second.
var t0 = time.Date(2026, 11, 21, 12, 0, 30, 370_000_000, time.UTC)

func TestHDRLayout(t *testing.T) {
	for _, c := range []struct{ v, lowest, width int64 }{
		{1, 1, 1}, {2047, 2047, 1}, {2048, 2048, 2}, {2049, 2048, 2}, {4095, 4094, 2},
		{4096, 4096, 4}, {1_000_000, 999_936, 512}, {HistogramMaxValue, 3_598_712_832, 2_097_152},
	} {
		if got := hdrLowest(c.v); got != c.lowest {
			t.Errorf("hdrLowest(%d) = %d, want %d", c.v, got, c.lowest)
		}
		if got := hdrWidth(c.v); got != c.width {
			t.Errorf("hdrWidth(%d) = %d, want %d", c.v, got, c.width)
		}
	}
	prev := int64(-1)
	for i := 0; i < hdrCountsLen; i++ {
		v := hdrValue(i)
		if v <= prev {
			t.Fatalf("hdrValue(%d) = %d not above hdrValue(%d) = %d", i, v, i-1, prev)
		}
		if v > HistogramMaxValue {
			break
		}
		if got := hdrIndex(v); got != i {
			t.Fatalf("hdrIndex(hdrValue(%d)=%d) = %d", i, v, got)
		}
		if hdrLowest(v) != v || hdrIndex(v+hdrWidth(v)-1) != i {
			t.Fatalf("bucket %d [%d, +%d) inconsistent", i, v, hdrWidth(v))
		}
		if hdrWidth(v) > 1 && float64(hdrWidth(v))/float64(v) > 1.0/1024 {
			t.Fatalf("bucket at %d is %d wide, more than 1/1024", v, hdrWidth(v))
		}
		prev = v
	}
	if hdrIndex(HistogramMaxValue) >= hdrCountsLen {
		t.Fatalf("HistogramMaxValue does not fit the counts array")
	}
}

func TestRecorderSnapshot(t *testing.T) {
	r := NewRecorder("get", "redis.get")
	r.Record(t0, 1500*time.Microsecond, "0", "")
	r.Record(t0.Add(200*time.Millisecond), 3*time.Millisecond, "1", "")
	r.Record(t0.Add(1100*time.Millisecond), 2*time.Millisecond, "", "timeout")
	r.AddBytes(30, 40)
	s := r.Scenario()

	if s.Name != "get" || s.Type != "redis.get" || s.Calls != 3 || s.Errors != 1 {
		t.Fatalf("got %+v", s)
	}
	if s.Latency.Min != 1500 || s.Latency.Max != 3000 || s.Latency.Sum != 6500 || s.Latency.SumSquares != 1500*1500+3000*3000+2000*2000 {
		t.Errorf("latency %+v", s.Latency)
	}
	if fmt.Sprint(s.Latency.Buckets) != "[[1500 1] [2000 1] [3000 1]]" {
		t.Errorf("buckets %v", s.Latency.Buckets)
	}
	if s.Starts.StartUnixMs != t0.Truncate(time.Second).UnixMilli() || fmt.Sprint(s.Starts.Counts) != "[2 1]" {
		t.Errorf("starts %+v", s.Starts)
	}
	if !s.FirstStart.Equal(t0) || !s.LastEnd.Equal(t0.Add(1102*time.Millisecond)) {
		t.Errorf("firstStart %v lastEnd %v", s.FirstStart, s.LastEnd)
	}
	if fmt.Sprint(s.ReturnValues) != "map[0:1 1:1]" || fmt.Sprint(s.ErrorKinds) != "map[timeout:1]" {
		t.Errorf("values %v errors %v", s.ReturnValues, s.ErrorKinds)
	}
	if s.BytesSent != 30 || s.BytesReceived != 40 {
		t.Errorf("bytes %d %d", s.BytesSent, s.BytesReceived)
	}
	doc := &Document{SchemaVersion: SchemaVersion, Runners: []string{"r"}, Scenarios: []Scenario{s}}
	if err := doc.Validate(); err != nil {
		t.Fatal(err)
	}
	// The snapshot is a copy: recording goes on without changing it.
	r.Record(t0.Add(5*time.Second), time.Millisecond, "0", "")
	if s.Calls != 3 || len(s.Starts.Counts) != 2 {
		t.Errorf("snapshot changed by later recording")
	}
}

func TestRecorderEmpty(t *testing.T) {
	doc := &Document{SchemaVersion: SchemaVersion, Runners: []string{"r"}, Scenarios: []Scenario{NewRecorder("idle", "x").Scenario()}}
	if err := doc.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestRecorderClampsDurations(t *testing.T) {
	r := NewRecorder("s", "")
	r.Record(t0, 0, "v", "")
	r.Record(t0, -time.Second, "v", "")
	r.Record(t0, 400*time.Nanosecond, "v", "")
	r.Record(t0, 2*time.Hour, "v", "")
	s := r.Scenario()
	if s.Latency.Min != 1 || s.Latency.Max != HistogramMaxValue {
		t.Errorf("min %d max %d", s.Latency.Min, s.Latency.Max)
	}
	if err := (&Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{s}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestRecorderOutOfOrderStarts(t *testing.T) {
	r := NewRecorder("s", "")
	r.Record(t0.Add(3*time.Second), time.Millisecond, "v", "")
	r.Record(t0, time.Millisecond, "v", "")
	r.Record(t0.Add(5*time.Second), time.Millisecond, "v", "")
	s := r.Scenario()
	if fmt.Sprint(s.Starts.Counts) != "[1 0 0 1 0 1]" || !s.FirstStart.Equal(t0) {
		t.Errorf("starts %+v first %v", s.Starts, s.FirstStart)
	}
	if err := (&Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{s}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestRecorderBoundsValues(t *testing.T) {
	r := NewRecorder("s", "")
	long := strings.Repeat("é", MaxValueLength) // 2 bytes per rune
	r.Record(t0, time.Millisecond, long, "")
	for i := range 1000 {
		kind := ""
		if i%5 == 0 {
			kind = fmt.Sprint("e", i%3)
		}
		r.Record(t0, time.Millisecond, fmt.Sprint(i%200), kind)
	}
	s := r.Scenario()
	if len(s.ReturnValues) != MaxDistinctValues {
		t.Fatalf("%d return values, want %d", len(s.ReturnValues), MaxDistinctValues)
	}
	if len(s.ErrorKinds) != 3 || s.Errors != 200 {
		t.Fatalf("errors %d kinds %v", s.Errors, s.ErrorKinds)
	}
	if s.ReturnValues[OtherValue] == 0 {
		t.Errorf("no %q entry: %v", OtherValue, s.ReturnValues)
	}
	if err := (&Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{s}}).Validate(); err != nil {
		t.Fatal(err)
	}

	r = NewRecorder("s", "")
	r.Record(t0, time.Millisecond, long, "")
	r.Record(t0, time.Millisecond, long+"x", "")
	if n := r.Scenario().ReturnValues[long[:MaxValueLength]]; n != 2 {
		t.Errorf("long values not truncated to %d bytes: %v", MaxValueLength, r.Scenario().ReturnValues)
	}

	r = NewRecorder("s", "")
	for i := range 1000 {
		r.Record(t0, time.Millisecond, fmt.Sprint(i), "")
	}
	s = r.Scenario()
	var total int64
	for _, n := range s.ReturnValues {
		total += n
	}
	if len(s.ReturnValues) != MaxDistinctValues || total != 1000 || s.ReturnValues[OtherValue] != 1000-(MaxDistinctValues-1) {
		t.Errorf("%d values, total %d, other %d", len(s.ReturnValues), total, s.ReturnValues[OtherValue])
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	r := NewRecorder("s", "")
	values := []string{"0", "1", "世界收到"}
	kinds := []string{"", "", "timeout", "", "rejected"}
	for i := range 100 { // see every value once, so the maps hold them
		r.Record(t0, time.Millisecond, values[i%len(values)], kinds[i%len(kinds)])
	}
	i := 0
	allocs := testing.AllocsPerRun(10_000, func() {
		i++
		r.Record(t0.Add(time.Duration(i%900)*time.Millisecond), time.Duration(i)*time.Microsecond, values[i%len(values)], kinds[i%len(kinds)])
	})
	if allocs != 0 {
		t.Fatalf("Record allocates %v times per call", allocs)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	allocs = testing.AllocsPerRun(10_000, func() {
		r.Record(t0, time.Duration(rng.Int64N(int64(time.Second))), "0", "")
	})
	if allocs != 0 {
		t.Fatalf("Record with a repeated value allocates %v times per call", allocs)
	}
}
