// Package resultstest builds realistic synthetic result documents for size and scale
// measurements (document budgets, collection of many runners) without running load for days.
package resultstest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/benchrun/benchrun/internal/results"
)

// Spec describes a synthetic runner document.
type Spec struct {
	// Runner names the runner.
	Runner string
	// Scenarios is how many scenarios, run one after the other, each lasting Duration.
	Scenarios int
	// Duration is each scenario's length.
	Duration time.Duration
	// CallsPerMinute is the mean call rate of the runner (Poisson-like noise is added).
	CallsPerMinute float64
	// Samples is how many log-normal latencies shape each scenario's histogram (the counts
	// are then scaled to the calls); more samples fill more of the tail, as a long run does.
	Samples int
	// Seed makes the document reproducible.
	Seed uint64
	// Start is the wall-clock start of the first scenario.
	Start time.Time
	// LatencyTimelines adds each scenario's latency timeline as a Recorder writes it (the
	// widths of LatencyTimelineMaxBuckets; per interval the scenario's latency distribution
	// over its calls, binned).
	LatencyTimelines bool
}

// Document builds the document of spec: per scenario a start timeline with the widths a
// Recorder ends at for that duration (TimelineWidthsMs, TimelineMaxBuckets), a log-normal
// latency histogram with a heavy tail, eight return values and two error kinds.
func Document(spec Spec) (*results.Document, error) {
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed*7919+1))
	var scs []results.Scenario
	at := spec.Start
	for i := range spec.Scenarios {
		s := scenario(rng, spec, fmt.Sprintf("scenario_%02d", i), at)
		scs = append(scs, s)
		at = at.Add(spec.Duration)
	}
	return results.NewDocument(spec.Runner, scs...)
}

// WidthFor is the bucket width (ms) a Recorder's timeline has after recording for d.
func WidthFor(d time.Duration) int64 {
	for _, w := range results.TimelineWidthsMs {
		if d.Milliseconds()/w <= results.TimelineMaxBuckets {
			return w
		}
	}
	return results.TimelineWidthsMs[len(results.TimelineWidthsMs)-1]
}

// scenario builds one scenario starting at start.
func scenario(rng *rand.Rand, spec Spec, name string, start time.Time) results.Scenario {
	w := WidthFor(spec.Duration)
	perBucket := spec.CallsPerMinute * float64(w) / 60_000
	n := int(spec.Duration.Milliseconds() / w)
	firstMs := (start.UnixMilli()/w + 1) * w
	counts := make([]int64, n)
	var calls int64
	for i := range counts {
		c := perBucket + math.Sqrt(perBucket)*rng.NormFloat64()
		counts[i] = max(int64(c), 1)
		calls += counts[i]
	}
	first := time.UnixMilli(firstMs).UTC().Add(time.Duration(rng.IntN(int(w))) * time.Millisecond / 2)
	last := time.UnixMilli(firstMs + int64(n-1)*w).UTC().Add(time.Duration(w) * time.Millisecond / 2)
	h := histogram(rng, spec.Samples, calls)
	errs := calls / 1000
	sc := results.Scenario{
		Name: name, Type: "redis.get", Calls: calls, Errors: errs,
		ErrorKinds:   split(map[string]float64{"timeout": 0.7, "closed": 0.3}, errs),
		ReturnValues: split(map[string]float64{"0": 0.5, "1": 0.2, "2": 0.1, "3": 0.08, "OK": 0.05, "PONG": 0.04, "bulk(3)": 0.02, "None": 0.01}, calls-errs),
		FirstStart:   first, LastEnd: last, Latency: h,
		Starts:    results.Timeline{StartUnixMs: firstMs, BucketMs: w, Counts: counts},
		BytesSent: calls * 40, BytesReceived: calls * 12,
	}
	if spec.LatencyTimelines {
		sc.LatencyTimeline = latencyTimeline(rng, sc.Starts, h, spec.Duration)
	}
	return sc
}

// latencyTimeline is a latency timeline of the calls of starts whose latencies follow h: per
// interval (the width a Recorder has after d) its calls spread over h's distribution in the
// timeline's bins, each bin's share lowered by up to 20 % at random and the remainder given to
// the largest; every interval spans h's bins from min to max (intervals need 2 calls).
func latencyTimeline(rng *rand.Rand, starts results.Timeline, h results.Histogram, d time.Duration) *results.LatencyTimeline {
	w := results.TimelineWidthsMs[len(results.TimelineWidthsMs)-1]
	for _, x := range results.TimelineWidthsMs {
		if d.Milliseconds()/x < results.LatencyTimelineMaxBuckets {
			w = x
			break
		}
	}
	lo, hi := results.LatencyBin(h.Min), results.LatencyBin(h.Max)
	weights := make([]float64, hi-lo+1)
	var all float64
	for _, b := range h.Buckets {
		weights[results.LatencyBin(max(b[0], h.Min))-lo] += float64(b[1])
		all += float64(b[1])
	}
	big := 0
	for j := range weights {
		if weights[j] > weights[big] {
			big = j
		}
	}
	lt := &results.LatencyTimeline{StartUnixMs: starts.StartUnixMs / w * w, BucketMs: w}
	for i, n := range starts.Counts {
		k := int((starts.StartUnixMs + int64(i)*starts.BucketMs - lt.StartUnixMs) / w)
		for len(lt.Intervals) <= k {
			lt.Intervals = append(lt.Intervals, append([]int64{h.Max, int64(lo)}, make([]int64, len(weights))...))
		}
		iv := lt.Intervals[k]
		var total int64
		for j, wt := range weights {
			c := int64(float64(n) * wt / all * (0.8 + 0.2*rng.Float64()))
			iv[2+j] += c
			total += c
		}
		iv[2+big] += n - total
	}
	for _, iv := range lt.Intervals { // the first and last bins hold h's min and max
		for _, j := range []int{2, len(iv) - 1} {
			if iv[j] == 0 {
				iv[j], iv[2+big] = 1, iv[2+big]-1
			}
		}
	}
	return lt
}

// histogram shapes a histogram from samples log-normal latencies (median 2 ms, heavy tail)
// and scales its counts to calls.
func histogram(rng *rand.Rand, samples int, calls int64) results.Histogram {
	r := results.NewRecorder("h", "")
	t := time.Unix(1_700_000_000, 0)
	for range samples {
		us := math.Exp(math.Log(2000) + 0.8*rng.NormFloat64() + 0.5*math.Abs(rng.NormFloat64())*float64(rng.IntN(2)))
		r.Record(t, time.Duration(us*1000), "", "")
	}
	h := r.Scenario().Latency
	var total int64
	scale := float64(calls) / float64(samples)
	big := 0
	for i := range h.Buckets {
		h.Buckets[i][1] = max(int64(float64(h.Buckets[i][1])*scale), 1)
		total += h.Buckets[i][1]
		if h.Buckets[i][1] > h.Buckets[big][1] {
			big = i
		}
	}
	h.Buckets[big][1] += calls - total
	h.Sum, h.SumSquares = 0, 0
	for _, b := range h.Buckets {
		v := min(max(b[0], h.Min), h.Max)
		h.Sum += v * b[1]
		h.SumSquares += float64(v) * float64(v) * float64(b[1])
	}
	return h
}

// split divides total among keys by weight, exactly (the remainder goes to the first key in
// iteration order that has the largest weight).
func split(weights map[string]float64, total int64) map[string]int64 {
	if total == 0 {
		return nil
	}
	out := make(map[string]int64, len(weights))
	var sum int64
	top, topW := "", -1.0
	for k, w := range weights {
		out[k] = int64(float64(total) * w)
		sum += out[k]
		if w > topW || (w == topW && k < top) {
			top, topW = k, w
		}
	}
	out[top] += total - sum
	for k, n := range out {
		if n == 0 {
			delete(out, k)
		}
	}
	return out
}
