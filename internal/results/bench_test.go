package results

import (
	"fmt"
	"testing"
	"time"
)

func BenchmarkRecorderRecord(b *testing.B) {
	r := NewRecorder("get", "redis.get")
	values := []string{"0", "0", "0", "1"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		// Starts advance 10 µs per call: a new timeline bucket every 100 000 calls.
		r.Record(t0.Add(time.Duration(i)*10*time.Microsecond), time.Duration(500+i%5000)*time.Microsecond, values[i&3], "")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkRecorderRecordInFaultWindow is BenchmarkRecorderRecord with every call inside a
// fault window (per-second figures kept too): the extra cost of a call near a fault.
func BenchmarkRecorderRecordInFaultWindow(b *testing.B) {
	r := NewRecorder("get", "redis.get")
	r.SetWindows([]Window{{From: t0.UnixNano(), To: t0.Add(1000 * time.Hour).UnixNano()}})
	values := []string{"0", "0", "0", "1"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		r.Record(t0.Add(time.Duration(i)*10*time.Microsecond), time.Duration(500+i%5000)*time.Microsecond, values[i&3], "")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

func BenchmarkMerge(b *testing.B) {
	const docs, n = 8, 100_000
	var all []*Document
	var samples int64
	for i := range docs {
		doc, _ := randomDoc(fmt.Sprint("runner-", i), uint64(i+1), t0.Add(time.Duration(i)*time.Second), n, "get", "set")
		all = append(all, doc)
		for _, s := range doc.Scenarios {
			samples += s.Calls
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Merge(all...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

func BenchmarkSummarize(b *testing.B) {
	doc, _ := randomDoc("r", 1, t0, 100_000, "get", "set")
	for b.Loop() {
		Summarize(doc, DefaultOptions())
	}
}
