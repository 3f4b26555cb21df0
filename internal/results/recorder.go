package results

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// timelineBucketMs is the width of the start timeline buckets a Recorder writes.
const timelineBucketMs = 1000

// Recorder accumulates the calls of one scenario in bounded memory (about 190 KiB of
// histogram counts, plus 8 bytes per wall-clock second of run time). It is not safe for
// concurrent use: give each VU or goroutine its own Recorder and combine the snapshots with
// NewDocument or Merge. Record does not allocate once the values it sees have been seen
// before (and within the timeline capacity, 10 minutes at first, amortized afterwards).
type Recorder struct {
	name, scenarioType string

	calls, errors        int64
	bytesSent, bytesRecv int64
	firstStart, lastEnd  int64 // Unix ns
	min, max, sum        int64
	sumSquares           float64
	counts               []int64 // dense HDR counts, hdrCountsLen long
	startMs              int64   // wall-clock ms of starts[0]
	starts               []int64 // call starts per timelineBucketMs
	curIdx               int     // index in starts of the bucket [curLo, curHi) ns
	curLo, curHi         int64
	values, errKinds     boundedCounter
	ops                  []*Recorder // per-operation recorders (Op), in creation order
}

// Op returns the recorder of operation name within this scenario (e.g. YCSB "read"),
// created on first use: record each call both in it and in r. Beyond MaxOperations
// operations, further names share one recorder named OtherValue. Not for the hot path's
// lookups: keep the returned recorder.
func (r *Recorder) Op(name string) *Recorder {
	name = truncateValue(name)
	for _, op := range r.ops {
		if op.name == name {
			return op
		}
	}
	if len(r.ops) >= MaxOperations-1 && name != OtherValue {
		return r.Op(OtherValue)
	}
	op := NewRecorder(strings.Clone(name), "")
	r.ops = append(r.ops, op)
	return op
}

// boundedCounter counts strings, keeping at most MaxDistinctValues distinct keys; the rest
// are counted in other. A few recently counted keys are looked up before the map.
type boundedCounter struct {
	m      map[string]*int64
	other  int64
	recent [4]struct {
		key string
		n   *int64
	}
	next int
}

// add counts one occurrence of s (cut to MaxValueLength).
func (c *boundedCounter) add(s string) {
	for i := range c.recent {
		if e := &c.recent[i]; e.n != nil && e.key == s {
			*e.n++
			return
		}
	}
	s = truncateValue(s)
	p, ok := c.m[s]
	switch {
	case ok:
		*p++
	case len(c.m) >= MaxDistinctValues:
		c.other++
		return
	default:
		if c.m == nil {
			c.m = make(map[string]*int64)
		}
		s = strings.Clone(s)
		p = new(int64)
		*p = 1
		c.m[s] = p
	}
	c.recent[c.next].key, c.recent[c.next].n = s, p
	c.next = (c.next + 1) % len(c.recent)
}

// snapshot returns the counts as a bounded map (nil when empty).
func (c *boundedCounter) snapshot() map[string]int64 {
	if len(c.m) == 0 && c.other == 0 {
		return nil
	}
	m := make(map[string]int64, len(c.m)+1)
	for k, p := range c.m {
		m[k] += *p
	}
	if c.other > 0 {
		m[OtherValue] += c.other
	}
	return boundMap(m)
}

// NewRecorder returns an empty Recorder for the scenario with the given name and type.
func NewRecorder(name, scenarioType string) *Recorder {
	return &Recorder{
		name:         name,
		scenarioType: scenarioType,
		counts:       make([]int64, hdrCountsLen),
		starts:       make([]int64, 0, 600),
	}
}

// Record counts one finished call that started at start and took d. returnValue is the
// call's result as a string (counted for successful calls only); errKind is "" for a success,
// else a short error kind. Failed calls count in the latency histogram too, as ya does.
// Durations are rounded to the microsecond and clamped to [1 µs, 1 h].
func (r *Recorder) Record(start time.Time, d time.Duration, returnValue string, errKind string) {
	d = max(d, 0)
	us := clampMicros(int64(d))
	r.counts[hdrIndex(us)]++
	startNs := start.UnixNano()
	if r.calls == 0 {
		r.min, r.firstStart, r.lastEnd = us, startNs, startNs
	}
	r.min = min(r.min, us)
	r.max = max(r.max, us)
	r.sum += us
	r.sumSquares += float64(us) * float64(us)
	r.firstStart = min(r.firstStart, startNs)
	r.lastEnd = max(r.lastEnd, startNs+int64(d))
	r.calls++
	if startNs >= r.curLo && startNs < r.curHi {
		r.starts[r.curIdx]++
	} else {
		r.addStart(startNs)
	}

	if errKind != "" {
		r.errors++
		r.errKinds.add(errKind)
		return
	}
	r.values.add(returnValue)
}

// addStart counts a call start at wall-clock Unix ns in the timeline and makes its bucket
// the current one.
func (r *Recorder) addStart(ns int64) {
	bucketMs := floorDiv(ns, 1e6*timelineBucketMs) * timelineBucketMs
	if len(r.starts) == 0 {
		r.startMs = bucketMs
		r.starts = append(r.starts, 0)
	}
	i := (bucketMs - r.startMs) / timelineBucketMs
	switch {
	case i >= int64(len(r.starts)):
		for int64(len(r.starts)) <= i {
			r.starts = append(r.starts, 0)
		}
	case i < 0: // a start before the first one seen: rare, grow at the front
		r.starts = append(make([]int64, -i, -i+int64(len(r.starts))), r.starts...)
		r.startMs = bucketMs
		i = 0
	}
	r.starts[i]++
	r.curIdx = int(i)
	r.curLo = bucketMs * 1e6
	r.curHi = r.curLo + timelineBucketMs*1e6
}

// AddBytes adds payload bytes written to (sent) and read from (recv) the target.
func (r *Recorder) AddBytes(sent, recv int64) {
	r.bytesSent += sent
	r.bytesRecv += recv
}

// Scenario returns a snapshot of everything recorded so far; the Recorder can go on recording.
func (r *Recorder) Scenario() Scenario {
	s := Scenario{
		Name:          r.name,
		Type:          r.scenarioType,
		Calls:         r.calls,
		Errors:        r.errors,
		ErrorKinds:    r.errKinds.snapshot(),
		ReturnValues:  r.values.snapshot(),
		BytesSent:     r.bytesSent,
		BytesReceived: r.bytesRecv,
		Latency: Histogram{
			Unit:               HistogramUnit,
			SignificantFigures: HistogramSigFigs,
			Buckets:            [][2]int64{},
		},
		Starts: Timeline{BucketMs: timelineBucketMs, Counts: []int64{}},
	}
	if r.calls == 0 {
		return s
	}
	s.FirstStart, s.LastEnd = time.Unix(0, r.firstStart).UTC(), time.Unix(0, r.lastEnd).UTC()
	s.Latency.Min, s.Latency.Max, s.Latency.Sum = r.min, r.max, r.sum
	s.Latency.SumSquares = r.sumSquares
	for i := hdrIndex(r.min); i <= hdrIndex(r.max); i++ {
		if n := r.counts[i]; n != 0 {
			s.Latency.Buckets = append(s.Latency.Buckets, [2]int64{hdrValue(i), n})
		}
	}
	s.Starts.StartUnixMs = r.startMs
	s.Starts.Counts = slices.Clone(r.starts)
	for _, op := range r.ops {
		if op.calls > 0 {
			s.Operations = append(s.Operations, op.Scenario())
		}
	}
	slices.SortFunc(s.Operations, func(a, b Scenario) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// truncateValue cuts s to at most MaxValueLength bytes without splitting a UTF-8 sequence.
func truncateValue(s string) string {
	if len(s) <= MaxValueLength {
		return s
	}
	n := MaxValueLength
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// floorDiv divides rounding towards negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// boundMap folds m to at most MaxDistinctValues keys: the largest counts are kept (ties by
// key) and the rest, OtherValue included, are summed under OtherValue. m is returned as is
// when it is small enough.
func boundMap(m map[string]int64) map[string]int64 {
	if len(m) <= MaxDistinctValues {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != OtherValue {
			keys = append(keys, k)
		}
	}
	sortByCount(keys, m)
	out := make(map[string]int64, MaxDistinctValues)
	for _, k := range keys[:MaxDistinctValues-1] {
		out[k] = m[k]
	}
	other := m[OtherValue]
	for _, k := range keys[MaxDistinctValues-1:] {
		other += m[k]
	}
	out[OtherValue] = other
	return out
}

// sortByCount sorts keys by descending count in m, ties by ascending key.
func sortByCount(keys []string, m map[string]int64) {
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			if m[a] > m[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
}
