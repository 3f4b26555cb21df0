package results

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// TimelineWidthsMs are the start timeline bucket widths a Recorder uses, finest first. Each
// divides the next, so a timeline coarsens exactly; the widths up to a minute divide a minute,
// so the calls-per-minute table stays exact while a scenario's timeline is at most a minute
// wide per bucket.
var TimelineWidthsMs = []int64{1000, 2000, 10_000, 20_000, 60_000, 300_000, 900_000, 3_600_000}

// TimelineMaxBuckets is how many buckets a Recorder's timeline holds before it coarsens to
// the next width of TimelineWidthsMs: 1 s buckets for scenarios up to 48 min, 2 s up to 96 min,
// 10 s up to 8 h, 20 s up to 16 h, 1 min up to 48 h, 5 min up to 240 h (a week fits), 15 min
// up to 30 days, then 1 h: a scenario's timeline stays at most 2,880 counts whatever its
// duration (up to 120 days; the longest runs grow past it in 1 h buckets).
const TimelineMaxBuckets = 2880

// Recorder accumulates the calls of one scenario in bounded memory (about 190 KiB of
// histogram counts, plus at most 8·TimelineMaxBuckets bytes of start timeline: the timeline
// coarsens as the scenario grows, see TimelineWidthsMs; plus the latency timeline: 2 KiB for
// the current interval and at most LatencyTimelineMaxBuckets intervals stored compactly, about
// 6 KiB for narrow and 26 KiB for widely spread latencies at 1,000 calls/s, see latencyrec.go).
// It is not safe for concurrent use: give each VU or goroutine its own Recorder and combine the
// snapshots with NewDocument or Merge. Record does not allocate once the values it sees have
// been seen before (and within the timeline capacity, 10 minutes at first, amortized afterwards).
type Recorder struct {
	name, scenarioType string

	calls, errors        int64
	bytesSent, bytesRecv int64
	firstStart, lastEnd  int64 // Unix ns
	min, max, sum        int64
	sumSquares           float64
	counts               []int64 // dense HDR counts, hdrCountsLen long
	startMs              int64   // wall-clock ms of starts[0]
	bucketMs             int64   // width of a starts bucket, one of TimelineWidthsMs
	starts               []int64 // call starts per bucketMs
	curIdx               int     // index in starts of the bucket [curLo, curHi) ns
	curLo, curHi         int64
	values, errKinds     boundedCounter
	ops                  []*Recorder   // per-operation recorders (Op), in creation order
	open                 *openRecorder // open-model figures (RecordOpen), nil for a closed model
	secs                 *secondsRec   // per-second figures around faults (SetWindows), nil without
	lat                  *latencyRec   // latency per interval (latencytime.go), nil for operations
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
	op.lat = nil // operations have no latency timeline
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
		bucketMs:     TimelineWidthsMs[0],
		starts:       make([]int64, 0, 600),
		lat:          newLatencyRec(),
	}
}

// Record counts one finished call that started at start and took d. returnValue is the
// call's result as a string (counted for successful calls only); errKind is "" for a success,
// else a short error kind. Failed calls count in the latency histogram too, as ya does.
// Durations are rounded to the microsecond and clamped to [1 µs, 1 h].
func (r *Recorder) Record(start time.Time, d time.Duration, returnValue string, errKind string) {
	d = max(d, 0)
	r.record(start, d, start.UnixNano()+int64(d), returnValue, errKind)
}

// record is Record of a call that completed at endNs (Unix ns).
func (r *Recorder) record(start time.Time, d time.Duration, endNs int64, returnValue string, errKind string) {
	us := clampMicros(int64(d))
	if s := r.secs; s != nil && endNs >= s.lo && endNs < s.hi {
		s.record(endNs, us, errKind != "")
	}
	r.counts[hdrIndex(us)]++
	startNs := start.UnixNano()
	if r.lat != nil {
		r.lat.record(startNs, us)
	}
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
// the current one. A start that would make the timeline longer than TimelineMaxBuckets
// coarsens it first.
func (r *Recorder) addStart(ns int64) {
	ms := floorDiv(ns, 1e6)
	if len(r.starts) > 0 {
		lo := min(r.startMs, floorDiv(ms, r.bucketMs)*r.bucketMs)
		hi := max(r.startMs+int64(len(r.starts))*r.bucketMs, (floorDiv(ms, r.bucketMs)+1)*r.bucketMs)
		for (hi-lo)/r.bucketMs > TimelineMaxBuckets && r.bucketMs < TimelineWidthsMs[len(TimelineWidthsMs)-1] {
			r.coarsen()
			lo = min(r.startMs, floorDiv(ms, r.bucketMs)*r.bucketMs)
			hi = max(r.startMs+int64(len(r.starts))*r.bucketMs, (floorDiv(ms, r.bucketMs)+1)*r.bucketMs)
		}
	}
	bucketMs := floorDiv(ms, r.bucketMs) * r.bucketMs
	if len(r.starts) == 0 {
		r.startMs = bucketMs
		r.starts = append(r.starts, 0)
	}
	i := (bucketMs - r.startMs) / r.bucketMs
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
	r.curHi = r.curLo + r.bucketMs*1e6
}

// coarsen moves the timeline to the next width of TimelineWidthsMs, adding counts exactly
// (each width divides the next). The current bucket is forgotten.
func (r *Recorder) coarsen() {
	t := rebucket(Timeline{StartUnixMs: r.startMs, BucketMs: r.bucketMs, Counts: r.starts}, nextWidth(r.bucketMs))
	r.startMs, r.bucketMs, r.starts = t.StartUnixMs, t.BucketMs, t.Counts
	r.curLo, r.curHi = 0, 0
}

// AddBytes adds payload bytes written to (sent) and read from (recv) the target.
func (r *Recorder) AddBytes(sent, recv int64) {
	r.bytesSent += sent
	r.bytesRecv += recv
}

// Scenario returns a snapshot of everything recorded so far; the Recorder can go on recording.
func (r *Recorder) Scenario() Scenario {
	s := r.LiveScenario()
	if s.Calls > 0 {
		s.LatencyTimeline = r.lat.snapshot()
	}
	return s
}

// LiveScenario is Scenario without the latency timeline, the cheaper snapshot live metrics
// take from a VU's hot path (the timeline's intervals are not copied).
func (r *Recorder) LiveScenario() Scenario {
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
		Starts: Timeline{BucketMs: r.bucketMs, Counts: []int64{}},
	}
	r.openScenario(&s)
	s.FaultSeconds = r.secs.snapshot()
	if r.calls == 0 {
		if r.open != nil {
			r.openOps(&s)
		}
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
		if op.calls > 0 || op.open != nil {
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
