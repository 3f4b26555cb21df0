package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Latency over time (Scenario.LatencyTimeline). A Recorder counts, per wall-clock interval of
// the call's start, the call's latency in a coarse histogram of 240 fixed bins: the HDR layout
// with 8 bins per power of two (bin i < 16 holds the value i; then bin 16 + 8·(e−4) + k holds
// [(8+k)·2^(e−3), (9+k)·2^(e−3)), so a bin is < 12.5 % of its value wide), plus the
// interval's exact maximum. Intervals are aligned
// on wall-clock time and widen along TimelineWidthsMs like the start timeline, but the
// timeline holds at most LatencyTimelineMaxBuckets intervals, so its size is bounded whatever
// the scenario's length. Timelines of different runners merge exactly (bins added, maxima
// taken), so the merged bins of an interval are the bins of every call started in it.

// LatencyTimelineMaxBuckets is how many intervals a Recorder's latency timeline holds before
// it widens to the next width of TimelineWidthsMs: 1 s intervals for scenarios up to 4 min,
// 2 s up to 8 min, 10 s up to 40 min, 20 s up to 80 min, 1 min up to 4 h, 5 min up to 20 h,
// 15 min up to 60 h, then 1 h.
const LatencyTimelineMaxBuckets = 240

// MaxLatencyIntervals bounds a LatencyTimeline's intervals in a document (a year of 1 h
// intervals); a longer merged timeline is dropped, not an error.
const MaxLatencyIntervals = 8784

// latencyTimelineMinBuckets is the fewest intervals Fit widens a latency timeline to before
// it drops it.
const latencyTimelineMinBuckets = 30

// latencyBinCount is the number of bins over [0, HistogramMaxValue] (values below 16 µs, then
// 8 per power of two up to 2^32).
const latencyBinCount = 16 + 28*8

// LatencyTimeline is a scenario's latency per wall-clock interval of call starts.
type LatencyTimeline struct {
	// StartUnixMs is the start of interval 0 in Unix milliseconds, a multiple of BucketMs.
	StartUnixMs int64 `json:"startUnixMs"`
	// BucketMs is the interval width, one of TimelineWidthsMs.
	BucketMs int64 `json:"bucketMs"`
	// Intervals are, per interval, [max, first, count, count, ...]: the exact largest latency
	// (µs) of the calls started in it, the index of its first non-empty bin, then the counts
	// of the bins from that one to the bin holding max (first and last non-zero); [] for an
	// interval without calls.
	Intervals [][]int64 `json:"intervals"`
}

// LatencyBin is the index of the latency timeline's bin holding v µs (in [0, HistogramMaxValue]).
func LatencyBin(v int64) int {
	if v < 16 {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 1 // 2^e <= v < 2^(e+1), e >= 4
	return 16 + (e-4)*8 + int((v>>(e-3))&7)
}

// LatencyBinValue is the lowest value (µs) of the latency timeline's bin i (in [0, 240)).
func LatencyBinValue(i int) int64 {
	if i < 16 {
		return int64(i)
	}
	e := (i-16)/8 + 4
	return (8 + int64((i-16)%8)) << (e - 3)
}

// trim drops leading and trailing empty intervals; nil when no interval has calls.
func (t *LatencyTimeline) trim() *LatencyTimeline {
	a, b := 0, len(t.Intervals)
	for a < b && len(t.Intervals[a]) == 0 {
		a++
	}
	for b > a && len(t.Intervals[b-1]) == 0 {
		b--
	}
	if a == b {
		return nil
	}
	for i := a; i < b; i++ {
		if t.Intervals[i] == nil {
			t.Intervals[i] = []int64{}
		}
	}
	t.StartUnixMs += int64(a) * t.BucketMs
	t.Intervals = t.Intervals[a:b]
	return t
}

// nextWidth is the width of TimelineWidthsMs after w (w itself when it is the last).
func nextWidth(w int64) int64 {
	for _, x := range TimelineWidthsMs {
		if x > w {
			return x
		}
	}
	return w
}

// addInterval returns the sum of two intervals ([max, first, count, ...], or empty); a and b
// are not modified.
func addInterval(a, b []int64) []int64 {
	if len(a) == 0 {
		return slices.Clone(b)
	}
	if len(b) == 0 {
		return slices.Clone(a)
	}
	lo := min(a[1], b[1])
	hi := max(a[1]+int64(len(a))-3, b[1]+int64(len(b))-3)
	out := make([]int64, hi-lo+3)
	out[0], out[1] = max(a[0], b[0]), lo
	for _, x := range [][]int64{a, b} {
		for i, n := range x[2:] {
			out[2+x[1]-lo+int64(i)] += n
		}
	}
	return out
}

// widenLatency returns t with intervals of width w, a multiple of t.BucketMs (both start at
// multiples of their width, so each interval lies in exactly one wider one). t is not modified.
func widenLatency(t LatencyTimeline, w int64) LatencyTimeline {
	if w == t.BucketMs || len(t.Intervals) == 0 {
		return LatencyTimeline{StartUnixMs: floorDiv(t.StartUnixMs, w) * w, BucketMs: w, Intervals: slices.Clone(t.Intervals)}
	}
	start := floorDiv(t.StartUnixMs, w) * w
	last := t.StartUnixMs + int64(len(t.Intervals)-1)*t.BucketMs
	out := LatencyTimeline{StartUnixMs: start, BucketMs: w, Intervals: make([][]int64, (last-start)/w+1)}
	for i, iv := range t.Intervals {
		if len(iv) > 0 {
			k := (t.StartUnixMs + int64(i)*t.BucketMs - start) / w
			out.Intervals[k] = addInterval(out.Intervals[k], iv)
		}
	}
	for i, iv := range out.Intervals {
		if iv == nil {
			out.Intervals[i] = []int64{}
		}
	}
	return out
}

// mergeLatencyTimelines adds two timelines (either may be nil: then nil, the merged
// timeline would miss calls) at the coarser width; a merged timeline longer than
// MaxLatencyIntervals is widened, or dropped (nil) at the widest width.
func mergeLatencyTimelines(a, b *LatencyTimeline) *LatencyTimeline {
	if a == nil || b == nil {
		return nil
	}
	w := max(a.BucketMs, b.BucketMs)
	for {
		x, y := widenLatency(*a, w), widenLatency(*b, w)
		start := min(x.StartUnixMs, y.StartUnixMs)
		end := max(x.StartUnixMs+int64(len(x.Intervals))*w, y.StartUnixMs+int64(len(y.Intervals))*w)
		if (end-start)/w <= MaxLatencyIntervals {
			out := &LatencyTimeline{StartUnixMs: start, BucketMs: w, Intervals: make([][]int64, (end-start)/w)}
			for _, t := range []LatencyTimeline{x, y} {
				off := (t.StartUnixMs - start) / w
				for i, iv := range t.Intervals {
					out.Intervals[off+int64(i)] = addInterval(out.Intervals[off+int64(i)], iv)
				}
			}
			return out.trim()
		}
		if w == nextWidth(w) {
			return nil
		}
		w = nextWidth(w)
	}
}

// mergedLatency is the latency timeline of a scenario of accCalls calls with timeline acc
// once s is added: s's when acc has no calls, none when either part with calls has none.
func mergedLatency(acc *LatencyTimeline, s *Scenario, accCalls int64) *LatencyTimeline {
	switch {
	case s.Calls == 0:
		return acc
	case accCalls == 0:
		return s.LatencyTimeline.clone()
	}
	return mergeLatencyTimelines(acc, s.LatencyTimeline)
}

// clone returns a copy of t sharing nothing with it (nil for nil).
func (t *LatencyTimeline) clone() *LatencyTimeline {
	if t == nil {
		return nil
	}
	c := *t
	c.Intervals = make([][]int64, len(t.Intervals))
	for i, iv := range t.Intervals {
		c.Intervals[i] = slices.Clone(iv)
	}
	return &c
}

// validateLatencyTimeline checks s.LatencyTimeline against s; errors start with the field name.
func (s *Scenario) validateLatencyTimeline() error {
	t := s.LatencyTimeline
	if t == nil {
		return nil
	}
	switch {
	case s.Calls == 0:
		return errors.New("latencyTimeline: set although calls is 0")
	case !slices.Contains(TimelineWidthsMs, t.BucketMs):
		return fmt.Errorf("latencyTimeline.bucketMs: %d is not one of %v", t.BucketMs, TimelineWidthsMs)
	case t.StartUnixMs%t.BucketMs != 0 || t.StartUnixMs < 0 || t.StartUnixMs >= maxTime.UnixMilli():
		return fmt.Errorf("latencyTimeline.startUnixMs: %d is not a multiple of bucketMs in [1970, 2262)", t.StartUnixMs)
	case len(t.Intervals) == 0 || len(t.Intervals) > MaxLatencyIntervals:
		return fmt.Errorf("latencyTimeline.intervals: %d entries, want 1 to %d", len(t.Intervals), MaxLatencyIntervals)
	case len(t.Intervals[0]) == 0 || len(t.Intervals[len(t.Intervals)-1]) == 0:
		return errors.New("latencyTimeline.intervals: first and last intervals must not be empty")
	}
	if ms := s.FirstStart.UnixMilli(); ms < t.StartUnixMs || ms >= t.StartUnixMs+t.BucketMs {
		return fmt.Errorf("latencyTimeline.startUnixMs: first interval [%d, %d) does not hold firstStart (%d ms)", t.StartUnixMs, t.StartUnixMs+t.BucketMs, ms)
	}
	if last := t.StartUnixMs + int64(len(t.Intervals)-1)*t.BucketMs; last > s.LastEnd.UnixMilli() {
		return fmt.Errorf("latencyTimeline.intervals: last interval starts at %d ms, after lastEnd", last)
	}
	var total, top int64
	for i, iv := range t.Intervals {
		n, err := validateInterval(iv)
		if err != nil {
			return fmt.Errorf("latencyTimeline.intervals[%d]: %w", i, err)
		}
		if total > math.MaxInt64-n {
			return fmt.Errorf("latencyTimeline.intervals[%d]: counts overflow", i)
		}
		total += n
		if len(iv) > 0 {
			top = max(top, iv[0])
		}
	}
	if total != s.Calls {
		return fmt.Errorf("latencyTimeline.intervals: counts add up to %d, calls is %d", total, s.Calls)
	}
	if top != s.Latency.Max {
		return fmt.Errorf("latencyTimeline.intervals: largest max %d is not latency.max %d", top, s.Latency.Max)
	}
	return nil
}

// validateInterval checks one interval and returns its calls.
func validateInterval(iv []int64) (int64, error) {
	if len(iv) == 0 {
		return 0, nil
	}
	if len(iv) < 3 {
		return 0, fmt.Errorf("%d numbers, want [max, first, count, ...]", len(iv))
	}
	mx, first := iv[0], iv[1]
	if mx < HistogramMinValue || mx > HistogramMaxValue {
		return 0, fmt.Errorf("max %d outside [%d, %d]", mx, HistogramMinValue, HistogramMaxValue)
	}
	if last := int64(LatencyBin(mx)); first < HistogramMinValue || first+int64(len(iv))-3 != last {
		return 0, fmt.Errorf("bins %d to %d+%d, want from at least %d to the bin of max (%d)", first, first, len(iv)-3, HistogramMinValue, last)
	}
	if iv[2] <= 0 || iv[len(iv)-1] <= 0 {
		return 0, errors.New("the first and last counts must be positive")
	}
	var total int64
	for k, n := range iv[2:] {
		if n < 0 {
			return 0, fmt.Errorf("count %d of bin %d is negative", n, first+int64(k))
		}
		if total > math.MaxInt64-n {
			return 0, errors.New("counts overflow")
		}
		total += n
	}
	return total, nil
}

// LatencyPoint is one interval of a scenario's latency over time.
type LatencyPoint struct {
	// StartUnixMs is the interval's start, Unix milliseconds; it lasts the timeline's BucketMs.
	StartUnixMs int64
	// Calls counts the calls started in the interval.
	Calls int64
	// P50Ms, P90Ms and P99Ms are percentiles of their latency in ms: the middle of the bin
	// holding the ceil(q·calls)-th smallest value (within 6.25 %), at most MaxMs.
	P50Ms, P90Ms, P99Ms float64
	// MaxMs is their exact largest latency in ms.
	MaxMs float64
}

// Points returns the latency of every interval with calls, in time order (nil for nil).
func (t *LatencyTimeline) Points() []LatencyPoint {
	if t == nil {
		return nil
	}
	out := make([]LatencyPoint, 0, len(t.Intervals))
	for i, iv := range t.Intervals {
		if len(iv) < 3 {
			continue
		}
		var calls int64
		for _, n := range iv[2:] {
			calls += n
		}
		p := LatencyPoint{StartUnixMs: t.StartUnixMs + int64(i)*t.BucketMs, Calls: calls, MaxMs: float64(iv[0]) / 1000}
		p.P50Ms, p.P90Ms, p.P99Ms = intervalQuantile(iv, calls, 0.5), intervalQuantile(iv, calls, 0.9), intervalQuantile(iv, calls, 0.99)
		out = append(out, p)
	}
	return out
}

// intervalQuantile is the q-quantile in ms of an interval of calls values ([max, first,
// count, ...]): the middle of the bin holding the ceil(q·calls)-th smallest, at most the maximum.
func intervalQuantile(iv []int64, calls int64, q float64) float64 {
	rank := min(max(int64(math.Ceil(q*float64(calls))), 1), calls)
	var seen int64
	for k, n := range iv[2:] {
		if seen += n; seen >= rank {
			bin := int(iv[1]) + k
			lo, hi := LatencyBinValue(bin), int64(HistogramMaxValue)
			if bin+1 < latencyBinCount {
				hi = LatencyBinValue(bin+1) - 1
			}
			return min(float64(lo)+float64(hi-lo)/2, float64(iv[0])) / 1000
		}
	}
	return float64(iv[0]) / 1000
}

// UnmarshalJSON decodes a latency timeline allocating its intervals exactly: one slice of
// every number and one of the intervals' headers (empty intervals share nothing), counted
// before they are allocated; more than MaxLatencyIntervals intervals or
// 2+latencyBinCount numbers in one is an error. Numbers are JSON integers.
func (t *LatencyTimeline) UnmarshalJSON(b []byte) error {
	var raw struct {
		StartUnixMs int64           `json:"startUnixMs"`
		BucketMs    int64           `json:"bucketMs"`
		Intervals   json.RawMessage `json:"intervals"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	t.StartUnixMs, t.BucketMs, t.Intervals = raw.StartUnixMs, raw.BucketMs, nil
	c := bytes.TrimSpace(raw.Intervals)
	if len(c) == 0 || string(c) == "null" {
		return nil
	}
	n, nums, err := scanIntervals(c, nil, nil)
	if err != nil {
		return fmt.Errorf("intervals: %w", err)
	}
	t.Intervals = make([][]int64, 0, n)
	_, _, err = scanIntervals(c, make([]int64, 0, nums), &t.Intervals)
	return err
}

// scanIntervals walks the JSON text of an array of arrays of integers, counting the arrays and
// numbers; with out set it appends each array to *out as a piece of flat (which must have
// room for every number).
func scanIntervals(b []byte, flat []int64, out *[][]int64) (n, nums int, err error) {
	depth, start, in := 0, 0, 0
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			i++
		case c == '[':
			if depth++; depth > 2 {
				return 0, 0, errors.New("nested too deep")
			}
			if depth == 2 {
				if n++; n > MaxLatencyIntervals {
					return 0, 0, fmt.Errorf("more than %d intervals", MaxLatencyIntervals)
				}
				start, in = len(flat), 0
			}
			i++
		case c == ']':
			if depth == 2 && out != nil {
				*out = append(*out, flat[start:len(flat):len(flat)])
			}
			depth--
			i++
		case depth == 2 && (c == '-' || c >= '0' && c <= '9'):
			v, j, err := parseInteger(b, i)
			if err != nil {
				return 0, 0, err
			}
			if nums, in = nums+1, in+1; in > 2+latencyBinCount {
				return 0, 0, fmt.Errorf("interval %d: more than %d numbers", n-1, 2+latencyBinCount)
			}
			if out != nil {
				flat = append(flat, v)
			}
			i = j
		default:
			return 0, 0, fmt.Errorf("unexpected %q: want arrays of integers", c)
		}
	}
	return n, nums, nil
}

// parseInteger reads the JSON integer at b[i:] and returns it and the index after it.
func parseInteger(b []byte, i int) (int64, int, error) {
	neg := b[i] == '-'
	if neg {
		i++
	}
	j := i
	var v int64
	for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		d := int64(b[j] - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, 0, errors.New("integer out of range")
		}
		v = v*10 + d
	}
	if j == i {
		return 0, 0, errors.New("not an integer")
	}
	if neg {
		v = -v
	}
	return v, j, nil
}
