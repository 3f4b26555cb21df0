package results

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Merge combines the documents of several runners into one. Scenarios are matched by name
// (a scenario may be missing from some documents); histograms, counters and timelines merge
// exactly (timelines of different bucket widths are rebucketed to the coarser, see
// commonWidth); return-value and error-kind maps are added and re-bounded to
// MaxDistinctValues. Runners are concatenated (sorted, duplicates removed: the names form a
// set) and so are partial reasons (sorted); Partial is OR-ed.
//
// The result does not depend on the order of docs nor on how merges are grouped, with two
// caveats: SumSquares is a float sum and may differ in its last bits, and once a value map
// overflows MaxDistinctValues which values end up folded into OtherValue can depend on the
// grouping (totals never do). Scenarios are ordered by first start (run order), scenarios
// without calls last, ties by name.
//
// Every input is validated first; the inputs are not modified. To merge documents one at a
// time without holding them all, use a Merger.
func Merge(docs ...*Document) (*Document, error) {
	m := NewMerger()
	for _, doc := range docs {
		if err := m.Add(doc); err != nil {
			return nil, err
		}
	}
	return m.Document()
}

// Merger merges documents one at a time (decode one, Add it, drop it), holding only the
// merged scenarios: memory is one merged document plus 8 bytes per document and scenario,
// whatever the number of documents. The outcome is Merge's.
type Merger struct {
	out        *Document
	byName     map[string]*Scenario
	sumSquares map[string][]float64
	n          int
}

// NewMerger returns an empty Merger.
func NewMerger() *Merger {
	return &Merger{
		out:        &Document{SchemaVersion: SchemaVersion, Runners: []string{}, Scenarios: []Scenario{}},
		byName:     make(map[string]*Scenario),
		sumSquares: make(map[string][]float64),
	}
}

// Add validates doc and merges it in; doc is not modified nor kept. Add is all or nothing:
// when doc cannot be merged (a scenario of another type, timelines without a common width, a
// counter that would overflow) the error says why and the Merger is unchanged, so the
// documents added before are kept.
func (m *Merger) Add(doc *Document) error {
	i := m.n
	m.n++
	if err := doc.Validate(); err != nil {
		return fmt.Errorf("results: merging document %d: %w", i, err)
	}
	merged := make(map[string]*Scenario, len(doc.Scenarios))
	for j := range doc.Scenarios {
		s := &doc.Scenarios[j]
		acc, ok := m.byName[s.Name]
		if !ok {
			if len(m.byName)+len(merged) >= MaxScenarios && merged[s.Name] == nil {
				return fmt.Errorf("results: merging document %d: scenario %q: more than %d scenarios in all", i, s.Name, MaxScenarios)
			}
			c := cloneScenario(*s)
			merged[s.Name] = &c
			continue
		}
		c := cloneScenario(*acc)
		if err := mergeScenario(&c, s); err != nil {
			return fmt.Errorf("results: merging document %d: scenario %q: %w", i, s.Name, err)
		}
		if err := c.validate(); err != nil { // a counter that overflowed, caught before it is kept
			return fmt.Errorf("results: merging document %d: scenario %q: the sum is invalid (counter overflow?): %w", i, s.Name, err)
		}
		merged[s.Name] = &c
	}
	for _, s := range doc.Scenarios {
		m.sumSquares[s.Name] = append(m.sumSquares[s.Name], s.Latency.SumSquares)
		m.byName[s.Name] = merged[s.Name]
	}
	m.out.Runners = append(m.out.Runners, doc.Runners...)
	m.out.Partial = m.out.Partial || doc.Partial
	m.out.PartialReasons = append(m.out.PartialReasons, doc.PartialReasons...)
	if m.n%64 == 0 { // so that duplicate runner names cannot pile up
		slices.Sort(m.out.Runners)
		m.out.Runners = slices.Compact(m.out.Runners)
	}
	return nil
}

// Document returns the merged document of every document added, validated. The Merger
// should not be used afterwards.
func (m *Merger) Document() (*Document, error) {
	out := m.out
	out.Scenarios = out.Scenarios[:0]
	for name, s := range m.byName {
		// Add in a fixed order so the float sum does not depend on the order of docs.
		sq := m.sumSquares[name]
		slices.Sort(sq)
		s.Latency.SumSquares = 0
		for _, v := range sq {
			s.Latency.SumSquares += v
		}
		out.Scenarios = append(out.Scenarios, *s)
	}
	slices.SortFunc(out.Scenarios, runOrder)
	slices.Sort(out.Runners)
	out.Runners = slices.Compact(out.Runners)
	slices.Sort(out.PartialReasons)
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("results: merged document is invalid (counter overflow?): %w", err)
	}
	return out, nil
}

// NewDocument builds the document of one runner from Recorder snapshots; snapshots of the
// same scenario (one Recorder per VU) are merged.
func NewDocument(runner string, scenarios ...Scenario) (*Document, error) {
	docs := make([]*Document, len(scenarios))
	for i, s := range scenarios {
		docs[i] = &Document{SchemaVersion: SchemaVersion, Scenarios: []Scenario{s}}
	}
	doc, err := Merge(docs...)
	if err != nil {
		return nil, err
	}
	doc.Runners = []string{runner}
	return doc, nil
}

// runOrder orders scenarios by first start, scenarios without calls last, ties by name.
func runOrder(a, b Scenario) int {
	aEmpty, bEmpty := a.Calls == 0, b.Calls == 0
	if aEmpty != bEmpty {
		if aEmpty {
			return 1
		}
		return -1
	}
	if !aEmpty {
		if c := a.FirstStart.Compare(b.FirstStart); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Name, b.Name)
}

// cloneScenario returns a copy of s sharing no slices or maps with it.
func cloneScenario(s Scenario) Scenario {
	s.ErrorKinds = maps.Clone(s.ErrorKinds)
	s.ReturnValues = maps.Clone(s.ReturnValues)
	s.Latency.Buckets = slices.Clone(s.Latency.Buckets)
	s.Starts.Counts = slices.Clone(s.Starts.Counts)
	if s.Latency.Buckets == nil {
		s.Latency.Buckets = [][2]int64{}
	}
	if s.Starts.Counts == nil {
		s.Starts.Counts = []int64{}
	}
	s.VUs = slices.Clone(s.VUs)
	s.ServerCalls = maps.Clone(s.ServerCalls)
	s.FaultSeconds = cloneSeconds(s.FaultSeconds)
	s.LatencyTimeline = s.LatencyTimeline.clone()
	if s.ServiceTime != nil {
		h := *s.ServiceTime
		h.Buckets = slices.Clone(h.Buckets)
		s.ServiceTime = &h
	}
	if s.SearchStop != nil {
		st := *s.SearchStop
		s.SearchStop = &st
	}
	if s.Operations != nil {
		ops := make([]Scenario, len(s.Operations))
		for i, op := range s.Operations {
			ops[i] = cloneScenario(op)
		}
		s.Operations = ops
	}
	return s
}

// mergeExtras adds the optional per-operation, server-side and load-shape fields of s into acc.
func mergeExtras(acc, s *Scenario) error {
	if len(s.VUs) > 0 {
		acc.VUs = append(acc.VUs, s.VUs...)
		slices.Sort(acc.VUs)
	}
	if acc.Command == "" || (s.Command != "" && s.Command < acc.Command) {
		acc.Command = s.Command // the same in every runner; the smaller one keeps merges order-free
	}
	acc.BodySize = max(acc.BodySize, s.BodySize)
	acc.ServerCalls = addMaps(acc.ServerCalls, s.ServerCalls)
	secs, err := mergeSeconds(acc.FaultSeconds, s.FaultSeconds)
	if err != nil {
		return err
	}
	acc.FaultSeconds = secs
	for _, op := range s.Operations {
		i := slices.IndexFunc(acc.Operations, func(o Scenario) bool { return o.Name == op.Name })
		if i < 0 {
			acc.Operations = append(acc.Operations, cloneScenario(op))
			continue
		}
		if err := mergeScenario(&acc.Operations[i], &op); err != nil {
			return fmt.Errorf("operation %q: %w", op.Name, err)
		}
	}
	slices.SortFunc(acc.Operations, func(a, b Scenario) int { return cmp.Compare(a.Name, b.Name) })
	return nil
}

// mergeScenario adds s into acc; both are valid scenarios with the same name.
func mergeScenario(acc, s *Scenario) error {
	accCalls := acc.Calls
	if acc.Type == "" {
		acc.Type = s.Type
	} else if s.Type != "" && s.Type != acc.Type {
		return fmt.Errorf("type %q differs from %q", s.Type, acc.Type)
	}
	if acc.Latency.Unit != s.Latency.Unit {
		return fmt.Errorf("latency histograms have different units (%s and %s)", acc.Latency.Unit, s.Latency.Unit)
	}
	latency := s.Latency
	if sf := min(acc.Latency.SignificantFigures, latency.SignificantFigures); sf != latency.SignificantFigures ||
		sf != acc.Latency.SignificantFigures { // the finer one is reduced, exactly
		acc.Latency, latency = reducePrecision(acc.Latency, sf), reducePrecision(latency, sf)
	}
	starts := s.Starts
	if acc.Starts.BucketMs != starts.BucketMs {
		w, err := commonWidth(acc.Starts.BucketMs, starts.BucketMs)
		if err != nil {
			return err
		}
		acc.Starts, starts = rebucket(acc.Starts, w), rebucket(starts, w)
	}
	if len(acc.Starts.Counts) > 0 && len(starts.Counts) > 0 {
		start := min(acc.Starts.StartUnixMs, starts.StartUnixMs)
		end := max(acc.Starts.StartUnixMs+int64(len(acc.Starts.Counts))*acc.Starts.BucketMs,
			starts.StartUnixMs+int64(len(starts.Counts))*starts.BucketMs)
		if err := checkSpan(int((end-start)/starts.BucketMs), starts.BucketMs); err != nil {
			return fmt.Errorf("merged starts timeline: %w", err)
		}
	}
	if s.Calls > 0 {
		if acc.Calls == 0 {
			acc.FirstStart, acc.LastEnd = s.FirstStart, s.LastEnd
			acc.Latency.Min, acc.Latency.Max = s.Latency.Min, s.Latency.Max
		} else {
			if s.FirstStart.Before(acc.FirstStart) {
				acc.FirstStart = s.FirstStart
			}
			if s.LastEnd.After(acc.LastEnd) {
				acc.LastEnd = s.LastEnd
			}
			acc.Latency.Min = min(acc.Latency.Min, s.Latency.Min)
			acc.Latency.Max = max(acc.Latency.Max, s.Latency.Max)
		}
	}
	acc.Calls += s.Calls
	acc.Errors += s.Errors
	acc.BytesSent += s.BytesSent
	acc.BytesReceived += s.BytesReceived
	acc.Latency.Sum += s.Latency.Sum
	acc.Latency.Buckets = mergeBuckets(acc.Latency.Buckets, latency.Buckets)
	acc.Starts = mergeTimelines(acc.Starts, starts)
	acc.ErrorKinds = addMaps(acc.ErrorKinds, s.ErrorKinds)
	acc.ReturnValues = addMaps(acc.ReturnValues, s.ReturnValues)
	acc.Latency.SumSquares += s.Latency.SumSquares // Merge re-adds a scenario's in a fixed order
	acc.LatencyTimeline = mergedLatency(acc.LatencyTimeline, s, accCalls)
	if err := mergeOpen(acc, s, accCalls); err != nil {
		return err
	}
	return mergeExtras(acc, s)
}

// mergeBuckets adds two ascending sparse bucket lists.
func mergeBuckets(a, b [][2]int64) [][2]int64 {
	out := make([][2]int64, 0, max(len(a), len(b)))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0][0] < b[0][0]:
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0][0] < a[0][0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out = append(out, [2]int64{a[0][0], a[0][1] + b[0][1]})
			a, b = a[1:], b[1:]
		}
	}
	return out
}

// commonWidth is the bucket width two timelines of widths a and b merge at: their least
// common multiple (the coarser one for the widths of TimelineWidthsMs), so both rebucket
// exactly. It is an error when that is wider than a day.
func commonWidth(a, b int64) (int64, error) {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	if a/x <= maxTimelineBucketMs/b {
		return a / x * b, nil
	}
	return 0, fmt.Errorf("starts timelines of bucketMs %d and %d have no common width of at most a day", a, b)
}

// rebucket returns t with buckets of width w, a multiple of t.BucketMs: each bucket of t lies
// in exactly one bucket of w (both start at multiples of their width), so counts stay exact.
// The first and last buckets stay non-zero when they were. t is not modified.
func rebucket(t Timeline, w int64) Timeline {
	if w == t.BucketMs {
		return t
	}
	if len(t.Counts) == 0 {
		return Timeline{BucketMs: w, Counts: []int64{}}
	}
	start := floorDiv(t.StartUnixMs, w) * w
	last := t.StartUnixMs + int64(len(t.Counts)-1)*t.BucketMs
	out := Timeline{StartUnixMs: start, BucketMs: w, Counts: make([]int64, (last-start)/w+1)}
	for i, n := range t.Counts {
		out.Counts[(t.StartUnixMs+int64(i)*t.BucketMs-start)/w] += n
	}
	return out
}

// mergeTimelines adds two timelines with the same BucketMs, aligned on wall-clock time.
func mergeTimelines(a, b Timeline) Timeline {
	if len(b.Counts) == 0 {
		return a
	}
	if len(a.Counts) == 0 {
		b.Counts = slices.Clone(b.Counts)
		return b
	}
	start := min(a.StartUnixMs, b.StartUnixMs)
	end := max(a.StartUnixMs+int64(len(a.Counts))*a.BucketMs, b.StartUnixMs+int64(len(b.Counts))*b.BucketMs)
	out := Timeline{StartUnixMs: start, BucketMs: a.BucketMs, Counts: make([]int64, (end-start)/a.BucketMs)}
	for _, t := range []Timeline{a, b} {
		off := (t.StartUnixMs - start) / t.BucketMs
		for i, n := range t.Counts {
			out.Counts[off+int64(i)] += n
		}
	}
	return out
}

// addMaps returns a+b bounded to MaxDistinctValues keys; a may be modified.
func addMaps(a, b map[string]int64) map[string]int64 {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make(map[string]int64, len(b))
	}
	for k, n := range b {
		a[k] += n
	}
	return boundMap(a)
}
