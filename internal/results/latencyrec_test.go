package results

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// latencyStream feeds record n calls over d from start: latencies of profile (0 narrow around
// 500 µs, 1 spread over ~0.2–30 ms with a 1 % tail up to 2 s, 2 log-uniform over 1 µs–1 h),
// starts in time order displaced by up to jitter either way, and with probability early a
// start up to an hour before start (a timeline growing at the front).
func latencyStream(rng *rand.Rand, start time.Time, d time.Duration, n, profile int, jitter time.Duration, early float64, record func(time.Time, time.Duration)) {
	for i := range n {
		at := start.Add(time.Duration(int64(d) / int64(n) * int64(i)))
		if jitter > 0 {
			at = at.Add(time.Duration(rng.Int64N(2*int64(jitter))) - jitter)
		}
		if rng.Float64() < early {
			at = start.Add(-time.Duration(rng.Int64N(int64(time.Hour))))
		}
		var lat time.Duration
		switch profile {
		case 0:
			lat = time.Duration(475+rng.IntN(50)) * time.Microsecond
		case 1:
			lat = time.Duration(200+rng.ExpFloat64()*3000) * time.Microsecond
			if rng.IntN(100) == 0 {
				lat = time.Duration(rng.IntN(2_000_000)) * time.Microsecond
			}
		default:
			lat = time.Duration(float64(time.Microsecond) * float64(uint64(1)<<rng.IntN(32)) * (1 + rng.Float64()))
		}
		record(at, lat)
	}
}

// TestLatencyTimelineCompactEqualsDense: for random call streams (narrow to extreme latencies,
// seconds to years, in order, jittered, growing at the front, widening, outgrowing
// MaxLatencyIntervals) the compact recorder's timeline equals, at every snapshot, that of the
// int64-band recorder it replaced (refLatencyRec), and so do the documents of several VUs,
// encoded and merged.
func TestLatencyTimelineCompactEqualsDense(t *testing.T) {
	durations := []time.Duration{3 * time.Second, 4 * time.Minute, 7 * time.Minute, 50 * time.Minute, 5 * time.Hour, 70 * time.Hour, 300 * 24 * time.Hour, 2 * 8784 * time.Hour}
	base := time.Unix(1_800_000_000, 123_456_789)
	for seed := range 64 {
		rng := rand.New(rand.NewPCG(uint64(seed), 77))
		d := durations[seed%len(durations)]
		profile, jitter := seed%3, []time.Duration{0, 5 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Minute}[seed/3%4]
		early := []float64{0, 1e-4}[seed/12%2]
		var docs, refDocs []*Document
		for vu := range 1 + seed%3 {
			r, ref := NewRecorder("s", "redis.get"), newRefLatencyRec()
			calls := 0
			latencyStream(rng, base.Add(time.Duration(vu)*time.Second), d, 1000+rng.IntN(30_000), profile, jitter, early, func(at time.Time, lat time.Duration) {
				r.Record(at, lat, "v", "")
				ref.record(at.UnixNano(), clampMicros(int64(lat)))
				if calls++; calls%4999 == 0 { // a snapshot mid-stream changes nothing
					if got, want := r.Scenario().LatencyTimeline, ref.snapshot(); !reflect.DeepEqual(got, want) {
						t.Fatalf("seed %d: after %d calls the timelines differ", seed, calls)
					}
				}
			})
			s := r.Scenario()
			want := ref.snapshot()
			if !reflect.DeepEqual(s.LatencyTimeline, want) {
				t.Fatalf("seed %d (%s, profile %d, jitter %s): timelines differ: %s", seed, d, profile, jitter, equalTimelines(s.LatencyTimeline, want))
			}
			if d > 366*24*time.Hour {
				continue // the timeline outgrew MaxLatencyIntervals (both nil); no document spans it
			}
			docs = append(docs, mustDoc(t, "r", s))
			s.LatencyTimeline = want
			refDocs = append(refDocs, mustDoc(t, "r", s))
		}
		if len(docs) == 0 {
			continue
		}
		got, err := Merge(docs...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Merge(refDocs...)
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		if err := Encode(&a, got); err != nil {
			t.Fatal(err)
		}
		if err := Encode(&b, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("seed %d: merged documents differ", seed)
		}
		if lt := got.Scenarios[0].LatencyTimeline; lt != nil && seed < len(durations) {
			t.Logf("seed %d: %s, %d intervals of %d ms", seed, d, len(lt.Intervals), lt.BucketMs)
		}
	}
}

// latencyMemCase is a memory benchmark's stream: 240 s of 1,000 calls/s (1 s intervals, the
// most a recorder holds at that width) of latency profile (see latencyStream).
type latencyMemCase struct {
	name    string
	profile int
}

// BenchmarkLatencyTimelineMemory reports the heap one VU's latency timeline holds after 240 s
// at 1,000 calls/s (1 s intervals: the longest timeline a recorder keeps before it widens),
// for a narrow and a wide latency distribution: the compact recorder and, measured in the same
// run, the int64-band recorder it replaced (the baseline), and their ratio.
func BenchmarkLatencyTimelineMemory(b *testing.B) {
	for _, c := range []latencyMemCase{{"narrow", 0}, {"wide", 1}} {
		var dense, compact float64
		b.Run(c.name+"/int64-band", func(b *testing.B) {
			dense = latencyHeapPerRecorder(b, c, func() (func(int64, int64), any) {
				l := newRefLatencyRec()
				return l.record, l
			})
		})
		b.Run(c.name+"/compact", func(b *testing.B) {
			compact = latencyHeapPerRecorder(b, c, func() (func(int64, int64), any) {
				l := newLatencyRec()
				return l.record, l
			})
			b.ReportMetric(compact/dense, "ratio-vs-int64-band")
		})
	}
}

// latencyHeapPerRecorder fills b.N (at least 4) timelines made by mk with c's stream and
// reports, and returns, the live heap each holds (bytes/recorder: HeapAlloc, which counts
// objects, not HeapInuse, which counts whole spans).
func latencyHeapPerRecorder(b *testing.B, c latencyMemCase, mk func() (func(int64, int64), any)) float64 {
	n := max(b.N, 4)
	keep := make([]any, n)
	base := heapAlloc()
	b.ResetTimer()
	for i := range n {
		record, l := mk()
		rng := rand.New(rand.NewPCG(3, 4))
		latencyStream(rng, time.Unix(1_800_000_000, 0), 240*time.Second, 240_000, c.profile, 0, 0, func(at time.Time, lat time.Duration) {
			record(at.UnixNano(), clampMicros(int64(lat)))
		})
		keep[i] = l
	}
	b.StopTimer()
	per := float64(heapAlloc()-base) / float64(n)
	runtime.KeepAlive(keep)
	b.ReportMetric(per, "bytes/recorder")
	return per
}

// BenchmarkLatencyTimelineRecord is the cost of recording a call in the latency timeline alone,
// compact vs the int64-band recorder: a call per ms of wide latencies for 240 s (1 s intervals,
// then a fresh timeline), in order, and with starts jittered by ±5 ms (calls finishing out of
// order around an interval's end, so the recorder goes back to the interval it closed).
func BenchmarkLatencyTimelineRecord(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	lats, jit := make([]int64, 4096), make([]int64, 4096)
	for i := range lats {
		lats[i] = int64(200 + rng.ExpFloat64()*3000)
		if i%100 == 0 {
			lats[i] = rng.Int64N(2_000_000)
		}
		jit[i] = rng.Int64N(10e6) - 5e6
	}
	for _, jitter := range []int64{0, 1} {
		for _, impl := range []string{"int64-band", "compact"} {
			b.Run([]string{"in-order", "jitter5ms"}[jitter]+"/"+impl, func(b *testing.B) {
				mk := func() func(int64, int64) { return newLatencyRec().record }
				if impl == "int64-band" {
					mk = func() func(int64, int64) { return newRefLatencyRec().record }
				}
				record := mk()
				b.ReportAllocs()
				i := int64(0)
				for b.Loop() {
					if i++; i%240_000 == 0 {
						record = mk()
					}
					record(1_800_000_000e9+(i%240_000)*1e6+jitter*jit[i&4095], lats[i&4095])
				}
			})
		}
	}
}

// heapAlloc is the heap's live bytes after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestLatencyTimelineRevisits: calls whose starts alternate between two intervals (each call
// reopens the other interval) keep the recorder's buffer bounded (stale encodings are
// compacted) and its timeline equal to the int64-band recorder's.
func TestLatencyTimelineRevisits(t *testing.T) {
	l, ref := newLatencyRec(), newRefLatencyRec()
	rng := rand.New(rand.NewPCG(2, 3))
	base := int64(1_800_000_000e9)
	for i := range 100_000 {
		at, us := base+int64(i%2)*1e9+int64(i), 1+rng.Int64N(4_000_000)
		l.record(at, us)
		ref.record(at, us)
	}
	if got, want := l.snapshot(), ref.snapshot(); !reflect.DeepEqual(got, want) {
		t.Fatalf("timelines differ: %s", equalTimelines(got, want))
	}
	if n := l.memBytes(); n > 16<<10 {
		t.Fatalf("the recorder holds %d bytes after 100,000 revisits of two intervals", n)
	}
}
