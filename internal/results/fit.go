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

// Fit coarsens doc (Coarsen) until its gzip'd encoding is at most budget bytes or nothing is
// left to coarsen, and returns the encoding (uncompressed, as Encode writes it) and its gzip
// size. A document already within budget is returned unchanged.
func Fit(doc *Document, budget int) ([]byte, int, error) {
	for {
		var raw bytes.Buffer
		if err := Encode(&raw, doc); err != nil {
			return nil, 0, err
		}
		var gz countWriter
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write(raw.Bytes())
		_ = zw.Close()
		if gz.n <= budget || !doc.Coarsen() {
			return raw.Bytes(), gz.n, nil
		}
	}
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int }

// Write implements io.Writer.
func (c *countWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}
