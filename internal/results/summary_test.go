package results

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// yaCPS is ya's computation on raw start times: sort, drop the first and last 10 % of the
// samples, divide the samples left by their time span.
func yaCPS(starts []time.Time) float64 {
	s := slices.Clone(starts)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	drop := len(s) / 10
	kept := s[drop : len(s)-drop]
	return float64(len(kept)) / kept[len(kept)-1].Sub(kept[0]).Seconds()
}

// recordStarts records one call per start with a 2 ms latency and returns its document.
func recordStarts(starts []time.Time) *Document {
	r := NewRecorder("s", "")
	for _, st := range starts {
		r.Record(st, 2*time.Millisecond, "0", "")
	}
	return &Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{r.Scenario()}}
}

func TestCPSMatchesYa(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name  string
		rate  func(sec float64) float64 // calls per second at time sec
		secs  float64
		start time.Time
	}{
		{"uniform 1000/s over 100 s", func(float64) float64 { return 1000 }, 100, t0},
		{"uniform 20000/s over 12.5 s", func(float64) float64 { return 20000 }, 12.5, t0.Add(613 * time.Millisecond)},
		{"uniform 50/s over 300 s", func(float64) float64 { return 50 }, 300, t0},
		{"ramp up then steady", func(s float64) float64 { return 3000 * min(s/20, 1) }, 120, t0},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A Poisson process with the given rate: exponential gaps between starts.
			var starts []time.Time
			for at := 0.0; at < c.secs; at += rng.ExpFloat64() / max(c.rate(at), 1) {
				starts = append(starts, c.start.Add(time.Duration(at*1e9)))
			}
			want := yaCPS(starts)
			got := Summarize(recordStarts(starts), DefaultOptions()).Scenarios[0].CPS
			if math.Abs(got-want)/want > 0.01 {
				t.Errorf("CPS %v, ya computes %v: more than 1 %% off", got, want)
			}
		})
	}
}

func TestCPSTinyRuns(t *testing.T) {
	for _, c := range []struct {
		name   string
		starts []time.Time
		want   float64
	}{
		{"no calls", nil, 0},
		{"one call", []time.Time{t0}, 0},
		{"two calls at once", []time.Time{t0, t0}, 0},
		{"three calls in one second", []time.Time{t0, t0.Add(100 * time.Millisecond), t0.Add(200 * time.Millisecond)}, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var doc *Document
			if c.name == "two calls at once" {
				r := NewRecorder("s", "")
				r.Record(t0, 0, "0", "")
				r.Record(t0, 0, "0", "")
				doc = &Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{r.Scenario()}}
			} else {
				doc = recordStarts(c.starts)
			}
			for _, opts := range []Options{DefaultOptions(), {TrimFraction: 0}, {WarmUp: time.Second}, {TrimFraction: 0.7}} {
				s := Summarize(doc, opts)
				if _, err := json.Marshal(s); err != nil {
					t.Fatalf("%+v: %v", opts, err)
				}
				cps := s.Scenarios[0].CPS
				if math.IsNaN(cps) || math.IsInf(cps, 0) || cps < 0 || (c.want >= 0 && cps != c.want) {
					t.Errorf("%+v: CPS %v, want %v", opts, cps, c.want)
				}
			}
		})
	}
	// Three calls spread over 202 ms: calls per second within the run, not per 1 s bucket.
	got := Summarize(recordStarts([]time.Time{t0, t0.Add(100 * time.Millisecond), t0.Add(200 * time.Millisecond)}), Options{}).Scenarios[0].CPS
	if math.Abs(got-3/0.202) > 0.01 {
		t.Errorf("short run CPS %v, want %v", got, 3/0.202)
	}
}

func TestCPSWarmUpCoolDown(t *testing.T) {
	var starts []time.Time
	for i := range 60_000 { // 1000/s for 60 s, then a slow tail
		starts = append(starts, t0.Add(time.Duration(i)*time.Millisecond))
	}
	for i := range 100 {
		starts = append(starts, t0.Add(60*time.Second+time.Duration(i)*100*time.Millisecond))
	}
	doc := recordStarts(starts)
	got := Summarize(doc, Options{WarmUp: 5 * time.Second, CoolDown: 15 * time.Second}).Scenarios[0].CPS
	if math.Abs(got-1000) > 10 {
		t.Errorf("CPS %v, want about 1000", got)
	}
	if got := Summarize(doc, Options{WarmUp: time.Hour}).Scenarios[0].CPS; got != 0 {
		t.Errorf("empty window: CPS %v", got)
	}
}

func TestCallsPerMinute(t *testing.T) {
	// t0 is 12:00:30.37, so minutes start at 12:00:30, 12:01:30, ...
	starts := []time.Time{t0, t0.Add(59 * time.Second), t0.Add(59*time.Second + 700*time.Millisecond), t0.Add(3 * time.Minute)}
	got := Summarize(recordStarts(starts), DefaultOptions()).Scenarios[0].CallsPerMinute
	if !reflect.DeepEqual(got, []int64{2, 1, 0, 1}) {
		t.Errorf("calls per minute %v", got)
	}
}

func TestSummarizeLatencyAndValues(t *testing.T) {
	r := NewRecorder("get", "redis.get")
	for i := 1; i <= 1000; i++ { // 1..1000 µs: below 2048 the histogram is exact
		value := "0"
		switch {
		case i%10 == 0:
			value = "b"
		case i%10 == 1:
			value = "a"
		case i%100 == 2:
			value = "c"
		}
		kind := ""
		if i%250 == 0 {
			kind = "timeout"
		}
		r.Record(t0.Add(time.Duration(i)*time.Millisecond), time.Duration(i)*time.Microsecond, value, kind)
	}
	doc := &Document{SchemaVersion: SchemaVersion, Partial: true, PartialReasons: []string{"x"}, Scenarios: []Scenario{r.Scenario()}}
	s := Summarize(doc, Options{TrimFraction: 0.1, TopValues: 3})
	if !s.Partial || !reflect.DeepEqual(s.PartialReasons, []string{"x"}) {
		t.Errorf("partial %v %v", s.Partial, s.PartialReasons)
	}
	sc := s.Scenarios[0]
	want := Latency{Mean: 0.5, P50: 0.5, P90: 0.9, P99: 0.99, P999: 1, Min: 0, Max: 1, Median: 0.5, StdDev: 0.29}
	if sc.LatencyMs != want {
		t.Errorf("latency %+v, want %+v", sc.LatencyMs, want)
	}
	// 996 successful calls: "0" 790, "a" 100, "b" 96 (4 multiples of 10 failed), "c" 10: top 3.
	wantValues := []ValueCount{{"0", 790, 79.32}, {"a", 100, 10.04}, {"b", 96, 9.64}}
	if !reflect.DeepEqual(sc.ReturnValues, wantValues) {
		t.Errorf("values %+v, want %+v", sc.ReturnValues, wantValues)
	}
	if !reflect.DeepEqual(sc.ErrorKinds, []ValueCount{{"timeout", 4, 100}}) || sc.Errors != 4 {
		t.Errorf("errors %d %+v", sc.Errors, sc.ErrorKinds)
	}
	if sc.Name != "get" || sc.Type != "redis.get" || sc.Calls != 1000 || !sc.Start.Equal(t0.Add(time.Millisecond)) ||
		sc.DurationSeconds != 1 || sc.CPS == 0 {
		t.Errorf("summary %+v", sc)
	}
	// Ties are broken by value.
	if got := topValues(map[string]int64{"b": 2, "a": 2, "c": 5}, 9, 0); !reflect.DeepEqual(got,
		[]ValueCount{{"c", 5, 55.56}, {"a", 2, 22.22}, {"b", 2, 22.22}}) {
		t.Errorf("topValues %+v", got)
	}
}

func TestSummarizeInvalidDocument(t *testing.T) {
	doc := &Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{
		{Name: "no data", Calls: 5, Errors: 9},
		{Name: "far", Calls: 5, FirstStart: time.Unix(0, 0), LastEnd: t0, Starts: Timeline{StartUnixMs: t0.UnixMilli(), Counts: []int64{5}}},
	}}
	if doc.Validate() == nil {
		t.Fatal("document should be invalid")
	}
	if _, err := json.Marshal(Summarize(doc, DefaultOptions())); err != nil {
		t.Fatal(err)
	}
}
