package results

import (
	"maps"
	"math"
	"slices"
	"time"
)

// Summary is what a merged document reports: one line of statistics per scenario. It goes
// into the BenchmarkRun status and the report; its JSON keys are part of that API.
type Summary struct {
	// Partial is true when some data is missing (see PartialReasons).
	Partial bool `json:"partial,omitempty"`
	// PartialReasons says why the results are partial, one line per cause.
	PartialReasons []string `json:"partialReasons,omitempty"`
	// Scenarios are in the order of the document (run order).
	Scenarios []ScenarioSummary `json:"scenarios"`
}

// ScenarioSummary holds the published statistics of one scenario.
type ScenarioSummary struct {
	// Name is the scenario name.
	Name string `json:"name"`
	// Type is the scenario type.
	Type string `json:"type,omitempty"`
	// Calls counts all calls, failed ones included (ya's Count).
	Calls int64 `json:"calls"`
	// Errors counts failed calls.
	Errors int64 `json:"errors"`
	// CPS is calls per second after trimming (see Options).
	CPS float64 `json:"cps"`
	// LatencyMs holds the latency statistics over all calls, in milliseconds.
	LatencyMs Latency `json:"latencyMs"`
	// ReturnValues are the most frequent return values of successful calls.
	ReturnValues []ValueCount `json:"returnValues,omitempty"`
	// ErrorKinds are the most frequent error kinds, percent of all errors.
	ErrorKinds []ValueCount `json:"errorKinds,omitempty"`
	// CallsPerMinute counts call starts per minute from the first start truncated to the
	// second (to the timeline's bucket width when that is wider); the first and last minutes
	// are partial. Empty when the timeline's buckets are wider than a minute.
	CallsPerMinute []int64 `json:"callsPerMinute,omitempty"`
	// CallsPerInterval counts call starts per IntervalSeconds from the start of the timeline's
	// first bucket, for scenarios whose timeline is coarser than a minute (CallsPerMinute is
	// then empty).
	CallsPerInterval []int64 `json:"callsPerInterval,omitempty"`
	// IntervalSeconds is the width of a CallsPerInterval entry.
	IntervalSeconds int64 `json:"intervalSeconds,omitempty"`
	// Start is the wall-clock start of the first call.
	Start time.Time `json:"start"`
	// End is the wall-clock end of the last call.
	End time.Time `json:"end"`
	// DurationSeconds is End - Start in seconds.
	DurationSeconds float64 `json:"durationSeconds"`
	// Echo is the echo-server shape of a tcp.echo scenario (render_echo.go).
	Echo *EchoStats `json:"echo,omitempty"`
	// BytesSent and BytesReceived are the payload bytes written to and read from the target.
	BytesSent     int64 `json:"bytesSent,omitempty"`
	BytesReceived int64 `json:"bytesReceived,omitempty"`
	// VUs lists the virtual users of each runner that ran the scenario (see Scenario.VUs).
	VUs []int64 `json:"vus,omitempty"`
	// Command is the target command(s) the scenario sends (see Scenario.Command).
	Command string `json:"command,omitempty"`
	// BodySize is the configured payload size in bytes.
	BodySize int64 `json:"bodySize,omitempty"`
	// Operations are the per-operation statistics (e.g. YCSB read, update, insert), by name.
	Operations []OperationSummary `json:"operations,omitempty"`
	// ServerCalls are the target's own counts by command over the scenario (see Scenario.ServerCalls).
	ServerCalls map[string]int64 `json:"serverCalls,omitempty"`
	// Reads and Writes group the operations as the YCSB tables do (R-* and W-* columns):
	// reads are "read" and "scan", writes "update", "insert" and "read-modify-write". Set
	// only when the scenario has operations.
	Reads  *OperationSummary `json:"reads,omitempty"`
	Writes *OperationSummary `json:"writes,omitempty"`
	// Open holds the open-model figures of an arrival-rate scenario (open.go); nil for a
	// closed-model one, whose summary is unchanged.
	Open *OpenSummary `json:"open,omitempty"`
}

// ReadOperations and WriteOperations name the operations of the YCSB R-* and W-* columns.
var (
	ReadOperations  = []string{"read", "scan"}
	WriteOperations = []string{"update", "insert", "read-modify-write"}
)

// OperationSummary holds the statistics of one operation (or group of operations) of a
// scenario, latencies in whole microseconds as the YCSB tables publish them.
type OperationSummary struct {
	// Name is the operation (read, update, insert) or group (reads, writes).
	Name string `json:"name"`
	// Calls counts all calls of the operation, failed ones included.
	Calls int64 `json:"calls"`
	// Errors counts failed calls.
	Errors int64 `json:"errors"`
	// CPS is calls per second after trimming, as the scenario's CPS.
	CPS float64 `json:"cps"`
	// LatencyUs holds the latency statistics in microseconds.
	LatencyUs LatencyUs `json:"latencyUs"`
}

// LatencyUs holds latency statistics in whole microseconds (mean and min/max exact,
// percentiles within the histogram precision).
type LatencyUs struct {
	// Mean is the arithmetic mean, rounded.
	Mean int64 `json:"mean"`
	// P50 is the median.
	P50 int64 `json:"p50"`
	// P99 is the 99th percentile.
	P99 int64 `json:"p99"`
	// P999 is the 99.9th percentile.
	P999 int64 `json:"p999"`
	// Min is the smallest latency.
	Min int64 `json:"min"`
	// Max is the largest latency.
	Max int64 `json:"max"`
}

// Latency holds latency statistics in milliseconds rounded to 2 decimals. Mean, Min and Max
// are exact; percentiles are within the histogram precision (< 0.1 %).
type Latency struct {
	// Mean is the arithmetic mean.
	Mean float64 `json:"mean"`
	// P50 is the 50th percentile (ya's k50).
	P50 float64 `json:"p50"`
	// P90 is the 90th percentile (ya's k90).
	P90 float64 `json:"p90"`
	// P99 is the 99th percentile (ya's k99).
	P99 float64 `json:"p99"`
	// P999 is the 99.9th percentile.
	P999 float64 `json:"p999"`
	// Min is the smallest latency.
	Min float64 `json:"min"`
	// Max is the largest latency.
	Max float64 `json:"max"`
	// Median equals P50 (ya publishes both).
	Median float64 `json:"median"`
	// StdDev is the sample standard deviation.
	StdDev float64 `json:"stddev"`
}

// ValueCount is one entry of a value distribution.
type ValueCount struct {
	// Value is the value as a string.
	Value string `json:"value"`
	// Count is how many times it occurred.
	Count int64 `json:"count"`
	// Percent is Count as a percentage of the distribution's total, rounded to 2 decimals.
	Percent float64 `json:"percent"`
}

// Options tune Summarize. Use DefaultOptions for ya's rules.
type Options struct {
	// TrimFraction is the fraction of calls (by start time) dropped at each end of the run
	// before computing CPS; ya uses 0.1. Values outside [0, 0.5) are clamped.
	TrimFraction float64
	// WarmUp and CoolDown, when either is positive, replace TrimFraction: CPS counts the calls
	// started within [first start + WarmUp, last end - CoolDown].
	WarmUp, CoolDown time.Duration
	// TopValues is how many return values and error kinds to list per scenario; 0 or less
	// lists them all.
	TopValues int
	// Search is the stop rule of each saturation-search scenario, by scenario name.
	Search map[string]SearchRule
	// Ramps names the open-model scenarios whose rate changes (arrival.stages): no overall
	// achieved ratio (OpenSummary.AchievedRatio), which is defined for a constant rate only.
	Ramps map[string]bool
}

// DefaultOptions returns ya's rules: 10 % trimmed at each end for CPS, top 5 return values.
func DefaultOptions() Options {
	return Options{TrimFraction: 0.1, TopValues: 5}
}

// Summarize computes the published statistics of every scenario in doc, in document order.
// doc should be valid (as returned by Decode, Merge or NewDocument); an invalid one gives
// meaningless numbers but no panic.
func Summarize(doc *Document, opts Options) Summary {
	sum := Summary{
		Partial:        doc.Partial,
		PartialReasons: slices.Clone(doc.PartialReasons),
		Scenarios:      make([]ScenarioSummary, 0, len(doc.Scenarios)),
	}
	for i := range doc.Scenarios {
		sum.Scenarios = append(sum.Scenarios, summarizeScenario(&doc.Scenarios[i], opts))
	}
	return sum
}

// summarizeScenario computes the statistics of one scenario.
func summarizeScenario(s *Scenario, opts Options) ScenarioSummary {
	out := ScenarioSummary{
		Name:           s.Name,
		Type:           s.Type,
		Calls:          s.Calls,
		Errors:         s.Errors,
		CPS:            round2(cps(s, opts)),
		LatencyMs:      latency(&s.Latency, s.Calls),
		ReturnValues:   topValues(s.ReturnValues, s.Calls-s.Errors, opts.TopValues),
		ErrorKinds:     topValues(s.ErrorKinds, s.Errors, opts.TopValues),
		CallsPerMinute: callsPerMinute(s),
		Echo:           echoStats(s),
		BytesSent:      s.BytesSent,
		BytesReceived:  s.BytesReceived,
		VUs:            slices.Clone(s.VUs),
		Command:        s.Command,
		BodySize:       s.BodySize,
		ServerCalls:    maps.Clone(s.ServerCalls),
	}
	for i := range s.Operations {
		out.Operations = append(out.Operations, summarizeOperation(&s.Operations[i], opts))
	}
	out.Open = openSummary(s, opts)
	if len(s.Operations) > 0 && s.ServiceTime == nil {
		out.Reads = groupOperations(s, "reads", ReadOperations, opts)
		out.Writes = groupOperations(s, "writes", WriteOperations, opts)
	}
	if s.Calls > 0 && !minuteExact(s.Starts.BucketMs) {
		out.CallsPerInterval = slices.Clone(s.Starts.Counts)
		out.IntervalSeconds = s.Starts.BucketMs / 1000
	}
	if s.Calls > 0 {
		out.Start, out.End = s.FirstStart, s.LastEnd
		out.DurationSeconds = round2(s.LastEnd.Sub(s.FirstStart).Seconds())
	}
	return out
}

// latency computes the latency statistics of a histogram of n values.
func latency(h *Histogram, n int64) Latency {
	if n == 0 {
		return Latency{}
	}
	const ms = 1000.0 // µs per ms
	mean := float64(h.Sum) / float64(n)
	var std float64
	if n > 1 {
		v := (h.SumSquares - float64(h.Sum)*mean) / float64(n-1)
		std = math.Sqrt(max(v, 0))
	}
	p50 := round2(quantile(h, n, 0.5) / ms)
	return Latency{
		Mean:   round2(mean / ms),
		P50:    p50,
		P90:    round2(quantile(h, n, 0.9) / ms),
		P99:    round2(quantile(h, n, 0.99) / ms),
		P999:   round2(quantile(h, n, 0.999) / ms),
		Min:    round2(float64(h.Min) / ms),
		Max:    round2(float64(h.Max) / ms),
		Median: p50,
		StdDev: round2(std / ms),
	}
}

// quantile returns the value (µs) at quantile q of a histogram of n values: the middle of
// the bucket holding the ceil(q*n)-th smallest value, kept within [Min, Max].
func quantile(h *Histogram, n int64, q float64) float64 {
	rank := int64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var seen int64
	for _, b := range h.Buckets {
		seen += b[1]
		if seen >= rank {
			mid := float64(b[0]) + float64(hdrWidthSF(b[0], h.SignificantFigures)-1)/2
			return min(max(mid, float64(h.Min)), float64(h.Max))
		}
	}
	return float64(h.Max)
}

// topValues returns the n most frequent entries of m (all when n <= 0), ties by value, with
// percentages of total.
func topValues(m map[string]int64, total int64, n int) []ValueCount {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortByCount(keys, m)
	if n > 0 && len(keys) > n {
		keys = keys[:n]
	}
	out := make([]ValueCount, len(keys))
	for i, k := range keys {
		out[i] = ValueCount{Value: k, Count: m[k]}
		if total > 0 {
			out[i].Percent = round2(float64(m[k]) * 100 / float64(total))
		}
	}
	return out
}

// minuteExact tells whether a timeline of buckets of bucketMs gives exact counts per minute:
// its width divides a minute (every width of TimelineWidthsMs up to 60 s does).
func minuteExact(bucketMs int64) bool {
	return bucketMs > 0 && 60_000%bucketMs == 0
}

// callsPerMinute counts starts per minute i, [t0+i·60s, t0+(i+1)·60s), where t0 is the first
// start truncated to the second, or to the bucket width when buckets are wider (the least
// common multiple of both, which divides a minute): every minute is then a whole number of
// buckets, so the counts are exact. Nil when buckets are wider than a minute (or do not divide
// it).
func callsPerMinute(s *Scenario) []int64 {
	if s.Calls == 0 || !minuteExact(s.Starts.BucketMs) {
		return nil
	}
	unit, _ := commonWidth(1000, s.Starts.BucketMs) // divides 60 000: both do
	t0 := floorDiv(s.FirstStart.UnixMilli(), unit) * unit
	var out []int64
	for i, n := range s.Starts.Counts {
		if n == 0 {
			continue
		}
		minute := max(floorDiv(s.Starts.StartUnixMs+int64(i)*s.Starts.BucketMs-t0, 60_000), 0)
		if minute > maxTimelineSpanMs/60_000 { // only in an invalid document
			break
		}
		for int64(len(out)) <= minute {
			out = append(out, 0)
		}
		out[minute] += n
	}
	return out
}

// cps returns calls per second after trimming.
//
// The document keeps call starts per timeline bucket (1 s for scenarios up to 68 min, coarser
// for longer ones), not each start time, so the trimming is
// approximated: within a bucket, starts are taken as spread evenly (the first bucket from
// FirstStart, the last bucket up to LastEnd when that is earlier than its end). With fraction
// trimming the instants t10 and t90 where the cumulative start count reaches 10 % and 90 % of
// the calls are interpolated that way and CPS = 0.8·calls / (t90 − t10), which for any load
// that is steady within a second equals ya's count of kept samples over their time span.
// With WarmUp/CoolDown the starts inside the window are counted the same way and divided by
// the window's length. Runs of fewer than 2 calls, or whose window is empty, give 0.
func cps(s *Scenario, opts Options) float64 {
	if s.Calls < 2 || len(s.Starts.Counts) == 0 {
		return 0
	}
	tl := newProfile(s)
	if opts.WarmUp > 0 || opts.CoolDown > 0 {
		from := float64(s.FirstStart.UnixNano())/1e6 + float64(opts.WarmUp)/1e6
		to := float64(s.LastEnd.UnixNano())/1e6 - float64(opts.CoolDown)/1e6
		if to <= from {
			return 0
		}
		return (tl.countAt(to) - tl.countAt(from)) / ((to - from) / 1000)
	}
	f := min(max(opts.TrimFraction, 0), 0.49)
	n := float64(s.Calls)
	lo, hi := f*n, (1-f)*n
	span := tl.timeAt(hi) - tl.timeAt(lo)
	if span <= 0 {
		return 0
	}
	return (hi - lo) / (span / 1000)
}

// profile is a start timeline as segments of evenly spread starts, times in Unix ms.
type profile struct {
	from, to []float64
	counts   []int64
}

// newProfile builds the profile of a scenario with calls.
func newProfile(s *Scenario) profile {
	t := s.Starts
	p := profile{counts: t.Counts}
	first := float64(s.FirstStart.UnixNano()) / 1e6
	last := float64(s.LastEnd.UnixNano()) / 1e6
	for i := range t.Counts {
		a := float64(t.StartUnixMs + int64(i)*t.BucketMs)
		b := a + float64(t.BucketMs)
		if i == 0 {
			a = max(a, first)
		}
		if i == len(t.Counts)-1 {
			b = max(min(b, last), a)
		}
		p.from = append(p.from, a)
		p.to = append(p.to, b)
	}
	return p
}

// timeAt returns the instant the cumulative start count reaches c.
func (p profile) timeAt(c float64) float64 {
	var seen float64
	for i, n := range p.counts {
		if n > 0 && seen+float64(n) >= c {
			return p.from[i] + (c-seen)/float64(n)*(p.to[i]-p.from[i])
		}
		seen += float64(n)
	}
	return p.to[len(p.to)-1]
}

// countAt returns the cumulative start count at instant t.
func (p profile) countAt(t float64) float64 {
	var seen float64
	for i, n := range p.counts {
		switch {
		case t <= p.from[i]:
			return seen
		case t < p.to[i]:
			return seen + float64(n)*(t-p.from[i])/(p.to[i]-p.from[i])
		}
		seen += float64(n)
	}
	return seen
}

// round2 rounds to 2 decimals (half away from zero); NaN and infinities become 0.
func round2(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*100) / 100
}

// summarizeOperation computes the statistics of one operation (a scenario without extras).
func summarizeOperation(s *Scenario, opts Options) OperationSummary {
	out := OperationSummary{Name: s.Name, Calls: s.Calls, Errors: s.Errors, CPS: round2(cps(s, opts))}
	if s.Calls == 0 {
		return out
	}
	h := &s.Latency
	out.LatencyUs = LatencyUs{
		Mean: int64(math.Round(float64(h.Sum) / float64(s.Calls))),
		P50:  int64(math.Round(quantile(h, s.Calls, 0.5))),
		P99:  int64(math.Round(quantile(h, s.Calls, 0.99))),
		P999: int64(math.Round(quantile(h, s.Calls, 0.999))),
		Min:  h.Min,
		Max:  h.Max,
	}
	return out
}

// groupOperations summarizes the operations of s named in names as one (their histograms
// and timelines merged exactly).
func groupOperations(s *Scenario, group string, names []string, opts Options) *OperationSummary {
	acc := Scenario{Name: group, Latency: Histogram{Unit: HistogramUnit, SignificantFigures: HistogramSigFigs, Buckets: [][2]int64{}},
		Starts: Timeline{BucketMs: TimelineWidthsMs[0], Counts: []int64{}}}
	for i := range s.Operations {
		op := s.Operations[i]
		if !slices.Contains(names, op.Name) {
			continue
		}
		if acc.Calls == 0 && op.Starts.BucketMs != 0 {
			acc.Starts.BucketMs = op.Starts.BucketMs
		}
		if err := mergeScenario(&acc, &op); err != nil {
			return nil // operations with different timeline widths: no group figure
		}
	}
	o := summarizeOperation(&acc, opts)
	return &o
}
