package bench

import (
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/livemetrics"
	"github.com/benchrun/benchrun/internal/results"
)

// busyRecorder is a recorder after 100,000 calls spread over 10 s of latencies 50 µs–5 ms.
func busyRecorder() *results.Recorder {
	r := results.NewRecorder("get", "redis.get")
	start := time.Unix(1_700_000_000, 0)
	for i := range 100_000 {
		r.Record(start.Add(time.Duration(i)*100*time.Microsecond), time.Duration(50+i%4950)*time.Microsecond, "OK", "")
	}
	return r
}

// BenchmarkLivePublish is what a VU pays once per push interval with live metrics on: a
// snapshot of its recorder into the registry. Divided by the VU's calls per interval it is the
// per-call overhead (plus one atomic load per call).
func BenchmarkLivePublish(b *testing.B) {
	r := busyRecorder()
	g := newRegistry()
	g.recs[r] = struct{}{}
	b.ReportAllocs()
	for b.Loop() {
		g.publish(r, 1)
	}
}

// BenchmarkLivePush is the pusher goroutine's work per push for 64 VUs of one scenario: sum
// their figures, build the series and encode them (protobuf + snappy).
func BenchmarkLivePush(b *testing.B) {
	g := newRegistry()
	for range 64 {
		r := busyRecorder()
		g.recs[r] = struct{}{}
		g.publish(r, 1)
	}
	cfg := livemetrics.Config{Run: "r", Namespace: "ns", Runner: "r-0", Target: "redis/single"}
	b.ReportAllocs()
	for b.Loop() {
		stats, vus := g.liveStatsByScenario(1)
		if _, err := livemetrics.Encode(1, liveSeries(cfg, stats, vus)); err != nil {
			b.Fatal(err)
		}
	}
}
