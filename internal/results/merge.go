package results

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Merge combines the documents of several runners into one. Scenarios are matched by name
// (a scenario may be missing from some documents); histograms, counters and timelines merge
// exactly; return-value and error-kind maps are added and re-bounded to MaxDistinctValues.
// Runners are concatenated (sorted, duplicates removed: the names form a set) and so are
// partial reasons (sorted); Partial is OR-ed.
//
// The result does not depend on the order of docs nor on how merges are grouped, with two
// caveats: SumSquares is a float sum and may differ in its last bits, and once a value map
// overflows MaxDistinctValues which values end up folded into OtherValue can depend on the
// grouping (totals never do). Scenarios are ordered by first start (run order), scenarios
// without calls last, ties by name.
//
// Every input is validated first; the inputs are not modified.
func Merge(docs ...*Document) (*Document, error) {
	out := &Document{SchemaVersion: SchemaVersion, Runners: []string{}, Scenarios: []Scenario{}}
	byName := make(map[string]*Scenario)
	sumSquares := make(map[string][]float64)
	for i, doc := range docs {
		if err := doc.Validate(); err != nil {
			return nil, fmt.Errorf("results: merging document %d: %w", i, err)
		}
		out.Runners = append(out.Runners, doc.Runners...)
		out.Partial = out.Partial || doc.Partial
		out.PartialReasons = append(out.PartialReasons, doc.PartialReasons...)
		for _, s := range doc.Scenarios {
			sumSquares[s.Name] = append(sumSquares[s.Name], s.Latency.SumSquares)
			acc, ok := byName[s.Name]
			if !ok {
				c := cloneScenario(s)
				byName[s.Name] = &c
				continue
			}
			if err := mergeScenario(acc, &s); err != nil {
				return nil, fmt.Errorf("results: merging document %d: scenario %q: %w", i, s.Name, err)
			}
		}
	}
	for name, s := range byName {
		// Add in a fixed order so the float sum does not depend on the order of docs.
		sq := sumSquares[name]
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
	if acc.Type == "" {
		acc.Type = s.Type
	} else if s.Type != "" && s.Type != acc.Type {
		return fmt.Errorf("type %q differs from %q", s.Type, acc.Type)
	}
	if acc.Latency.Unit != s.Latency.Unit || acc.Latency.SignificantFigures != s.Latency.SignificantFigures {
		return fmt.Errorf("latency histograms have different parameters (%s/%d and %s/%d)",
			acc.Latency.Unit, acc.Latency.SignificantFigures, s.Latency.Unit, s.Latency.SignificantFigures)
	}
	if acc.Starts.BucketMs != s.Starts.BucketMs {
		return fmt.Errorf("starts timelines have different bucketMs (%d and %d)", acc.Starts.BucketMs, s.Starts.BucketMs)
	}
	if len(acc.Starts.Counts) > 0 && len(s.Starts.Counts) > 0 {
		start := min(acc.Starts.StartUnixMs, s.Starts.StartUnixMs)
		end := max(acc.Starts.StartUnixMs+int64(len(acc.Starts.Counts))*acc.Starts.BucketMs,
			s.Starts.StartUnixMs+int64(len(s.Starts.Counts))*s.Starts.BucketMs)
		if err := checkSpan(int((end-start)/s.Starts.BucketMs), s.Starts.BucketMs); err != nil {
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
	acc.Latency.Buckets = mergeBuckets(acc.Latency.Buckets, s.Latency.Buckets)
	acc.Starts = mergeTimelines(acc.Starts, s.Starts)
	acc.ErrorKinds = addMaps(acc.ErrorKinds, s.ErrorKinds)
	acc.ReturnValues = addMaps(acc.ReturnValues, s.ReturnValues)
	acc.Latency.SumSquares += s.Latency.SumSquares // Merge re-adds a scenario's in a fixed order
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
