package results

import (
	"bytes"
	"compress/gzip"
)

// StoredBudget is the gzip size a runner's document is fitted to before it is stored
// (Fit): well under the 900 KiB a runner may store in its state ConfigMap, whatever the
// spec (SCHEMA.md, "Size budget").
const StoredBudget = 512 << 10

// Coarsen makes doc one step smaller, exactly (counts are only added together): first every
// histogram (operations' included) is reduced to HistogramCoarseSigFigs, then the fault seconds' histograms to
// 1 significant figure, then every start timeline moves to the next
// width of TimelineWidthsMs, minute-wide buckets first (the calls per minute stay exact down
// to one-minute buckets). It reports false when nothing is left to coarsen.
func (doc *Document) Coarsen() bool {
	all := doc.allScenarios()
	for _, s := range all {
		if s.Latency.SignificantFigures > HistogramCoarseSigFigs ||
			(s.ServiceTime != nil && s.ServiceTime.SignificantFigures > HistogramCoarseSigFigs) {
			for _, t := range all {
				t.Latency = reducePrecision(t.Latency, HistogramCoarseSigFigs)
				if t.ServiceTime != nil {
					h := reducePrecision(*t.ServiceTime, HistogramCoarseSigFigs)
					t.ServiceTime = &h
				}
			}
			return true
		}
	}
	if doc.coarsenSeconds() {
		return true
	}
	finest := int64(0)
	for _, s := range all {
		if w := s.Starts.BucketMs; len(s.Starts.Counts) > 1 && (finest == 0 || w < finest) {
			finest = w
		}
	}
	if finest == 0 {
		return false
	}
	next := int64(0)
	for _, w := range TimelineWidthsMs {
		if w > finest && w%finest == 0 {
			next = w
			break
		}
	}
	if next == 0 {
		return false
	}
	for _, s := range all {
		if s.Starts.BucketMs == finest {
			s.Starts = rebucket(s.Starts, next)
		}
	}
	return true
}

// allScenarios lists the document's scenarios and their per-operation scenarios, so that
// Coarsen treats an operation's histogram and timeline like its scenario's.
func (doc *Document) allScenarios() []*Scenario {
	var all []*Scenario
	for i := range doc.Scenarios {
		s := &doc.Scenarios[i]
		all = append(all, s)
		for j := range s.Operations {
			all = append(all, &s.Operations[j])
		}
	}
	return all
}

// Fit coarsens doc until its gzip'd encoding is at most budget bytes or nothing is left to
// coarsen, and returns the encoding (uncompressed, as Encode writes it) and its gzip size. A
// document already within budget (with latency timelines: within LatencyShareEighths eighths
// of it) is returned unchanged. The latency timelines give way first and may only bring the
// document up to LatencyShareEighths eighths of the budget, the rest staying headroom: they
// are widened (down to latencyTimelineMinBuckets intervals); when that is not enough, the rest
// of the document is fitted to budget without them (Coarsen, as if they did not exist) and
// then they are put back, the largest dropped one at a time until the document is within its
// share: they never cost the rest of the document any precision.
func Fit(doc *Document, budget int) ([]byte, int, error) {
	withLatency := budget / 8 * LatencyShareEighths
	raw, n, err := encodeGzip(doc)
	for err == nil && n > withLatency && doc.widenLatencyTimelines() {
		raw, n, err = encodeGzip(doc)
	}
	saved := doc.takeLatencyTimelines()
	if err != nil || n <= withLatency || (n <= budget && len(saved) == 0) {
		doc.putLatencyTimelines(saved)
		return raw, n, err
	}
	for {
		if raw, n, err = encodeGzip(doc); err != nil || n <= budget || !doc.Coarsen() {
			break
		}
	}
	if err != nil || len(saved) == 0 {
		return raw, n, err
	}
	doc.putLatencyTimelines(saved)
	for {
		if raw, n, err = encodeGzip(doc); err != nil || n <= withLatency || !doc.dropLatencyTimeline() {
			return raw, n, err
		}
	}
}

// LatencyShareEighths is how many eighths of Fit's budget a document with latency timelines
// may take (7: 448 KiB of StoredBudget), so they never bring a runner's document over half
// of what it may store; without them a document may take the whole budget.
const LatencyShareEighths = 7

// encodeGzip encodes doc and returns the encoding and its gzip size.
func encodeGzip(doc *Document) ([]byte, int, error) {
	var raw bytes.Buffer
	if err := Encode(&raw, doc); err != nil {
		return nil, 0, err
	}
	var gz countWriter
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(raw.Bytes())
	_ = zw.Close()
	return raw.Bytes(), gz.n, nil
}

// widenLatencyTimelines moves the finest latency timelines of doc to the next width of
// TimelineWidthsMs, exactly, unless that would leave them fewer than
// latencyTimelineMinBuckets intervals; it reports false when none was widened.
func (doc *Document) widenLatencyTimelines() bool {
	widens := func(t *LatencyTimeline) bool {
		w := nextWidth(t.BucketMs)
		if w == t.BucketMs {
			return false
		}
		last := t.StartUnixMs + int64(len(t.Intervals)-1)*t.BucketMs
		return floorDiv(last, w)-floorDiv(t.StartUnixMs, w)+1 >= latencyTimelineMinBuckets
	}
	finest := int64(0)
	for i := range doc.Scenarios {
		if t := doc.Scenarios[i].LatencyTimeline; t != nil && widens(t) && (finest == 0 || t.BucketMs < finest) {
			finest = t.BucketMs
		}
	}
	if finest == 0 {
		return false
	}
	for i := range doc.Scenarios {
		s := &doc.Scenarios[i]
		if t := s.LatencyTimeline; t != nil && t.BucketMs == finest && widens(t) {
			w := widenLatency(*t, nextWidth(t.BucketMs))
			s.LatencyTimeline = &w
		}
	}
	return true
}

// takeLatencyTimelines removes the latency timelines of doc and returns them by index in
// allScenarios (nil when there were none).
func (doc *Document) takeLatencyTimelines() []*LatencyTimeline {
	all := doc.allScenarios()
	var out []*LatencyTimeline
	for i, s := range all {
		if s.LatencyTimeline != nil {
			if out == nil {
				out = make([]*LatencyTimeline, len(all))
			}
			out[i], s.LatencyTimeline = s.LatencyTimeline, nil
		}
	}
	return out
}

// putLatencyTimelines gives the scenarios of doc back the latency timelines
// takeLatencyTimelines took.
func (doc *Document) putLatencyTimelines(saved []*LatencyTimeline) {
	all := doc.allScenarios()
	for i, t := range saved {
		if t != nil {
			all[i].LatencyTimeline = t
		}
	}
}

// dropLatencyTimeline removes the largest latency timeline of doc (the most numbers, ties:
// the later scenario); it reports false when there was none.
func (doc *Document) dropLatencyTimeline() bool {
	best, size := -1, 0
	for i := range doc.Scenarios {
		if t := doc.Scenarios[i].LatencyTimeline; t != nil {
			n := len(t.Intervals)
			for _, iv := range t.Intervals {
				n += len(iv)
			}
			if n >= size {
				best, size = i, n
			}
		}
	}
	if best < 0 {
		return false
	}
	doc.Scenarios[best].LatencyTimeline = nil
	return true
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int }

// Write implements io.Writer.
func (c *countWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}
