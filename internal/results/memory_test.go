package results

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestRunnerMemory1e8 records 10^8 samples (1 h of simulated wall clock, 8 return values)
// into one Recorder and reports the heap it holds, next to the baseline of a k6 Trend metric,
// which keeps every sample as a float64. Run by `make bench` (BENCHRUN_BENCH=1); too slow
// for the unit tests.
func TestRunnerMemory1e8(t *testing.T) {
	if os.Getenv("BENCHRUN_BENCH") == "" {
		t.Skip("measurement: set BENCHRUN_BENCH=1 (make bench)")
	}
	n := 100_000_000
	if s := os.Getenv("BENCHRUN_BENCH_SAMPLES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	base := heapInUse()
	rec := NewRecorder("mem", "redis.get")
	start := time.Unix(1_700_000_000, 0)
	step := time.Hour / time.Duration(n)
	values := []string{"0", "1", "2", "3", "OK", "PONG", "bulk(3)", "None"}
	t0 := time.Now()
	for i := range n {
		d := time.Duration(50+i%997) * time.Microsecond
		rec.Record(start.Add(time.Duration(i)*step), d, values[i&7], "")
	}
	elapsed := time.Since(t0)
	recorder := grown(base)
	sc := rec.Scenario()
	if sc.Calls != int64(n) {
		t.Fatalf("recorded %d calls, want %d", sc.Calls, n)
	}
	runtime.KeepAlive(rec)

	// Baseline measured in the same run: every sample kept, as k6's Trend sink does.
	base = heapInUse()
	samples := make([]float64, 0, 1024)
	for i := range n {
		samples = append(samples, float64(50+i%997)/1000)
	}
	trend := grown(base)
	runtime.KeepAlive(samples)

	fmt.Printf("runner memory after %d samples: benchrun recorder %.1f MiB (%.1f ns/sample); k6 Trend baseline (every sample kept) %.1f MiB; ratio %.5f\n",
		n, mib(recorder), float64(elapsed.Nanoseconds())/float64(n), mib(trend), float64(recorder)/float64(trend))
	if limit := uint64(16 << 20); recorder > limit {
		t.Errorf("recorder holds %.1f MiB after %d samples, want bounded under %.0f MiB", mib(recorder), n, mib(limit))
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// grown is the heap growth since base, 0 if the heap shrank.
func grown(base uint64) uint64 {
	if now := heapInUse(); now > base {
		return now - base
	}
	return 0
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
