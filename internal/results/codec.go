package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"time"
)

// Bounds on times and timelines, so that a hostile document can neither make arithmetic on
// them overflow nor make Merge or Summarize allocate without bound.
const (
	maxTimelineBucketMs = 24 * 60 * 60 * 1000
	maxTimelineSpanMs   = 366 * maxTimelineBucketMs // a run lasts at most a year
	maxTimelineBuckets  = 1 << 25                   // 388 days of 1 s buckets
)

// Calls must happen between minTime and maxTime, where Unix nanoseconds fit an int64.
var (
	minTime = time.Unix(0, 0)
	maxTime = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Decode reads one JSON result document from r and checks it with Validate. Unknown fields,
// trailing data and any inconsistency are errors naming the offending field. The structure
// is bounded before anything is decoded (see DecodeBytes).
func Decode(r io.Reader) (*Document, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("results: decoding document: %w", err)
	}
	return DecodeBytes(b)
}

// DecodeBytes decodes one JSON result document and checks it with Validate. Before
// anything is allocated its structure is checked in one pass over the text: known keys
// only, each once, at most MaxScenarios scenarios, MaxOperations operations, 64 map keys,
// bounded histograms, timelines, fault seconds and strings (bounds.go), so a hostile
// document costs memory in proportion to what an honest one may hold, not to how well it
// compresses.
func DecodeBytes(b []byte) (*Document, error) {
	if err := checkStructure(b); err != nil {
		if errors.Is(err, errSyntax) { // encoding/json names the error, refusing before decoding
			if jerr := json.Unmarshal(b, &struct{}{}); jerr != nil {
				return nil, fmt.Errorf("results: decoding document: %w", jerr)
			}
		}
		return nil, fmt.Errorf("results: invalid document: %w", err)
	}
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("results: decoding document: %w", err)
	}
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	return &doc, nil
}

// DecodeFile decodes the result document in the file at path; errors name the file.
func DecodeFile(path string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	doc, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// Encode validates doc and writes it to w as indented JSON followed by a newline. Arrays of
// numbers (histogram buckets, timeline counts) are kept on one line each.
func Encode(w io.Writer, doc *Document) error {
	if err := doc.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("results: encoding document: %w", err)
	}
	b = append(compactNumberArrays(b), '\n')
	_, err = w.Write(b)
	return err
}

// compactNumberArrays rewrites indented JSON so that arrays holding only numbers take one
// line: "[\n  1,\n  2\n]" becomes "[1, 2]". Strings are left alone.
func compactNumberArrays(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[':
			end := bytes.IndexByte(b[i:], ']')
			if end > 0 && len(bytes.Trim(b[i+1:i+end], "0123456789+-.eE, \n")) == 0 {
				out = append(out, '[')
				out = append(out, bytes.Join(bytes.Fields(bytes.ReplaceAll(b[i+1:i+end], []byte(","), []byte(" "))), []byte(", "))...)
				out = append(out, ']')
				i += end
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// Validate checks that doc is a consistent document of a schema version this package reads: counts
// are non-negative and add up, histogram buckets are ascending, in range and on bucket
// boundaries, timelines agree with the call counts and maps are bounded.
func (doc *Document) Validate() error {
	if doc == nil {
		return errors.New("results: nil document")
	}
	if doc.SchemaVersion < MinSchemaVersion || doc.SchemaVersion > SchemaVersion {
		return fmt.Errorf("results: schemaVersion: unsupported version %d (this build reads %d to %d)", doc.SchemaVersion, MinSchemaVersion, SchemaVersion)
	}
	if !doc.Partial && len(doc.PartialReasons) > 0 {
		return errors.New("results: partialReasons: set but partial is false")
	}
	if err := doc.validateText(); err != nil {
		return err
	}
	seen := make(map[string]bool, len(doc.Scenarios))
	for i := range doc.Scenarios {
		s := &doc.Scenarios[i]
		if s.Name == "" || len(s.Name) > MaxNameLength || len(s.Type) > MaxNameLength {
			return fmt.Errorf("results: scenarios[%d].name: empty, or name or type longer than %d bytes", i, MaxNameLength)
		}
		if seen[s.Name] {
			return fmt.Errorf("results: scenarios[%d].name: duplicate scenario %q", i, s.Name)
		}
		seen[s.Name] = true
		if doc.SchemaVersion == 1 && s.Latency.SignificantFigures != HistogramSigFigs {
			return fmt.Errorf("results: scenarios[%d] (%q).latency.sigFigs: %d needs schemaVersion 2", i, s.Name, s.Latency.SignificantFigures)
		}
		if err := s.validate(); err != nil {
			return fmt.Errorf("results: scenarios[%d] (%q).%w", i, s.Name, err)
		}
	}
	return nil
}

// validateText checks the lengths of the document's runner names and partial reasons.
func (doc *Document) validateText() error {
	for i, r := range doc.Runners {
		if len(r) > MaxNameLength {
			return fmt.Errorf("results: runners[%d]: longer than %d bytes", i, MaxNameLength)
		}
	}
	for i, r := range doc.PartialReasons {
		if len(r) > MaxReasonLength {
			return fmt.Errorf("results: partialReasons[%d]: longer than %d bytes", i, MaxReasonLength)
		}
	}
	return nil
}

// validate checks one scenario; errors start with the field name.
func (s *Scenario) validate() error {
	switch {
	case s.Calls < 0:
		return fmt.Errorf("calls: negative (%d)", s.Calls)
	case s.Errors < 0:
		return fmt.Errorf("errors: negative (%d)", s.Errors)
	case s.Errors > s.Calls:
		return fmt.Errorf("errors: %d is more than calls (%d)", s.Errors, s.Calls)
	case s.BytesSent < 0:
		return fmt.Errorf("bytesSent: negative (%d)", s.BytesSent)
	case s.BytesReceived < 0:
		return fmt.Errorf("bytesReceived: negative (%d)", s.BytesReceived)
	}
	if err := validateCounts(s.ErrorKinds, s.Errors); err != nil {
		return fmt.Errorf("errorKinds: %w (errors is %d)", err, s.Errors)
	}
	if err := validateCounts(s.ReturnValues, s.Calls-s.Errors); err != nil {
		return fmt.Errorf("returnValues: %w (calls-errors is %d)", err, s.Calls-s.Errors)
	}
	if s.Calls == 0 {
		if !s.FirstStart.IsZero() || !s.LastEnd.IsZero() {
			return errors.New("firstStart: set although calls is 0")
		}
	} else {
		if s.FirstStart.Before(minTime) || !s.FirstStart.Before(maxTime) {
			return fmt.Errorf("firstStart: %s missing or outside [1970, 2262)", s.FirstStart.Format(time.RFC3339Nano))
		}
		if !s.LastEnd.Before(maxTime) {
			return fmt.Errorf("lastEnd: %s outside [1970, 2262)", s.LastEnd.Format(time.RFC3339Nano))
		}
		if s.LastEnd.Before(s.FirstStart) {
			return fmt.Errorf("lastEnd: %s is before firstStart %s", s.LastEnd.Format(time.RFC3339Nano), s.FirstStart.Format(time.RFC3339Nano))
		}
	}
	if err := s.Latency.validate(s.Calls); err != nil {
		return fmt.Errorf("latency.%w", err)
	}
	if err := s.Starts.validate(s.Calls, s.FirstStart, s.LastEnd); err != nil {
		return fmt.Errorf("starts.%w", err)
	}
	if err := s.validateOpen(); err != nil {
		return err
	}
	if err := validateSeconds(s.FaultSeconds); err != nil {
		return err
	}
	if err := s.validateLatencyTimeline(); err != nil {
		return err
	}
	return s.validateExtras()
}

// validateExtras checks the optional per-operation, server-side and load-shape fields.
func (s *Scenario) validateExtras() error {
	if len(s.VUs) > MaxVUEntries {
		return fmt.Errorf("vus: %d entries, more than %d", len(s.VUs), MaxVUEntries)
	}
	for i, n := range s.VUs {
		if n <= 0 {
			return fmt.Errorf("vus[%d]: %d is not positive", i, n)
		}
	}
	if len(s.Command) > MaxValueLength {
		return fmt.Errorf("command: longer than %d bytes", MaxValueLength)
	}
	if s.BodySize < 0 {
		return fmt.Errorf("bodySize: negative (%d)", s.BodySize)
	}
	if err := validateServerCalls(s.ServerCalls); err != nil {
		return fmt.Errorf("serverCalls: %w", err)
	}
	if len(s.Operations) > MaxOperations {
		return fmt.Errorf("operations: %d entries, more than %d", len(s.Operations), MaxOperations)
	}
	seen := make(map[string]bool, len(s.Operations))
	var calls, errs int64
	for i := range s.Operations {
		op := &s.Operations[i]
		switch {
		case op.Name == "" || len(op.Name) > MaxValueLength:
			return fmt.Errorf("operations[%d].name: empty or longer than %d bytes", i, MaxValueLength)
		case seen[op.Name]:
			return fmt.Errorf("operations[%d].name: duplicate operation %q", i, op.Name)
		case len(op.Operations) > 0 || len(op.ServerCalls) > 0 || len(op.VUs) > 0 || op.Command != "" || op.BodySize != 0 || op.LatencyTimeline != nil:
			return fmt.Errorf("operations[%d] (%q): operations, serverCalls, vus, command, bodySize and latencyTimeline belong to the scenario", i, op.Name)
		case op.Type != "" && op.Type != s.Type:
			return fmt.Errorf("operations[%d] (%q).type: %q differs from the scenario's %q", i, op.Name, op.Type, s.Type)
		}
		seen[op.Name] = true
		if err := op.validate(); err != nil {
			return fmt.Errorf("operations[%d] (%q).%w", i, op.Name, err)
		}
		calls += op.Calls
		errs += op.Errors
		if calls > s.Calls || errs > s.Errors {
			return fmt.Errorf("operations: calls or errors add up to more than the scenario's (%d, %d)", s.Calls, s.Errors)
		}
	}
	return nil
}

// validateServerCalls checks a server-side command count map: bounded, non-empty keys,
// positive counts.
func validateServerCalls(m map[string]int64) error {
	_, err := sumCounts(m, true)
	return err
}

// validateCounts checks a bounded count map against its expected total.
func validateCounts(m map[string]int64, total int64) error {
	sum, err := sumCounts(m, false)
	if err != nil {
		return err
	}
	if len(m) > 0 && sum != total {
		return fmt.Errorf("counts add up to %d", sum)
	}
	if len(m) == 0 && total != 0 {
		return errors.New("empty")
	}
	return nil
}

// sumCounts checks a count map (at most MaxDistinctValues keys of at most MaxValueLength
// bytes, non-empty if keyRequired, positive counts whose sum fits in an int64) and sums it.
func sumCounts(m map[string]int64, keyRequired bool) (int64, error) {
	if len(m) > MaxDistinctValues {
		return 0, fmt.Errorf("%d entries, more than %d", len(m), MaxDistinctValues)
	}
	var sum int64
	for k, n := range m {
		if keyRequired && (k == "" || len(k) > MaxValueLength) {
			return 0, fmt.Errorf("key %.20q: empty or longer than %d bytes", k, MaxValueLength)
		}
		if len(k) > MaxValueLength {
			return 0, fmt.Errorf("key %.20q...: longer than %d bytes", k, MaxValueLength)
		}
		if n <= 0 {
			return 0, fmt.Errorf("[%q]: count %d is not positive", k, n)
		}
		if sum > math.MaxInt64-n {
			return 0, fmt.Errorf("[%q]: counts overflow", k)
		}
		sum += n
	}
	return sum, nil
}

// validate checks a histogram holding calls values; errors start with the field name.
func (h *Histogram) validate(calls int64) error {
	if h.SignificantFigures != HistogramSigFigs && h.SignificantFigures != HistogramCoarseSigFigs {
		return fmt.Errorf("sigFigs: %d, want %d (or %d once reduced)", h.SignificantFigures, HistogramSigFigs, HistogramCoarseSigFigs)
	}
	return h.validateBuckets(calls)
}

// validateBuckets checks a histogram of calls values whatever its sigFigs (checked by the
// caller); errors start with the field name.
func (h *Histogram) validateBuckets(calls int64) error {
	if h.Unit != HistogramUnit {
		return fmt.Errorf("unit: %q, want %q", h.Unit, HistogramUnit)
	}
	if math.IsNaN(h.SumSquares) || math.IsInf(h.SumSquares, 0) || h.SumSquares < 0 {
		return fmt.Errorf("sumSquares: %v is not a finite non-negative number", h.SumSquares)
	}
	if calls == 0 {
		if h.Min != 0 || h.Max != 0 || h.Sum != 0 || h.SumSquares != 0 || len(h.Buckets) != 0 {
			return errors.New("buckets: histogram not empty although calls is 0")
		}
		return nil
	}
	if h.Min < HistogramMinValue || h.Min > HistogramMaxValue {
		return fmt.Errorf("min: %d outside [%d, %d]", h.Min, HistogramMinValue, HistogramMaxValue)
	}
	if h.Max < h.Min || h.Max > HistogramMaxValue {
		return fmt.Errorf("max: %d outside [min %d, %d]", h.Max, h.Min, HistogramMaxValue)
	}
	var total int64
	for i, b := range h.Buckets {
		v, n := b[0], b[1]
		if v < HistogramMinValue || v > HistogramMaxValue {
			return fmt.Errorf("buckets[%d]: value %d outside [%d, %d]", i, v, HistogramMinValue, HistogramMaxValue)
		}
		if lo := hdrLowestSF(v, h.SignificantFigures); lo != v {
			return fmt.Errorf("buckets[%d]: value %d is not a bucket boundary (want %d)", i, v, lo)
		}
		if i > 0 && v <= h.Buckets[i-1][0] {
			return fmt.Errorf("buckets[%d]: value %d not ascending (previous %d)", i, v, h.Buckets[i-1][0])
		}
		if n <= 0 {
			return fmt.Errorf("buckets[%d]: count %d is not positive", i, n)
		}
		if total > math.MaxInt64-n {
			return fmt.Errorf("buckets[%d]: counts overflow", i)
		}
		total += n
	}
	if total != calls {
		return fmt.Errorf("buckets: counts add up to %d, calls is %d", total, calls)
	}
	if first := h.Buckets[0][0]; hdrLowestSF(h.Min, h.SignificantFigures) != first {
		return fmt.Errorf("min: %d is not in the first bucket (%d)", h.Min, first)
	}
	if last := h.Buckets[len(h.Buckets)-1][0]; hdrLowestSF(h.Max, h.SignificantFigures) != last {
		return fmt.Errorf("max: %d is not in the last bucket (%d)", h.Max, last)
	}
	lo, okLo := mulInt64(h.Min, calls)
	hi, okHi := mulInt64(h.Max, calls)
	if !okLo || h.Sum < lo || (okHi && h.Sum > hi) {
		return fmt.Errorf("sum: %d is not between min*calls and max*calls", h.Sum)
	}
	return nil
}

// UnmarshalJSON decodes a timeline, counting its buckets before allocating them: a document
// may not make the decoder allocate more than maxTimelineBuckets counts per timeline, and the
// counts are allocated once at their exact size.
func (t *Timeline) UnmarshalJSON(b []byte) error {
	var raw struct {
		StartUnixMs int64           `json:"startUnixMs"`
		BucketMs    int64           `json:"bucketMs"`
		Counts      json.RawMessage `json:"counts"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	t.StartUnixMs, t.BucketMs, t.Counts = raw.StartUnixMs, raw.BucketMs, nil
	c := bytes.TrimSpace(raw.Counts)
	if len(c) == 0 || string(c) == "null" {
		return nil
	}
	n := 0
	if len(c) > 2 {
		n = bytes.Count(c, []byte{','}) + 1
	}
	if n > maxTimelineBuckets {
		return fmt.Errorf("counts: %d buckets, more than %d", n, maxTimelineBuckets)
	}
	t.Counts = make([]int64, 0, n)
	return json.Unmarshal(c, &t.Counts)
}

// checkSpan checks that a timeline of n buckets of bucketMs is within bounds; bucketMs is
// positive and at most maxTimelineBucketMs.
func checkSpan(n int, bucketMs int64) error {
	if n > maxTimelineBuckets || int64(n)*bucketMs > maxTimelineSpanMs {
		return fmt.Errorf("%d buckets of %d ms: more than %d buckets or longer than %d days",
			n, bucketMs, maxTimelineBuckets, maxTimelineSpanMs/maxTimelineBucketMs)
	}
	return nil
}

// mulInt64 returns a*b for non-negative a and b, and whether it fits in an int64.
func mulInt64(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// validate checks a start timeline against the scenario it belongs to; errors start with the
// field name.
func (t *Timeline) validate(calls int64, firstStart, lastEnd time.Time) error {
	if t.BucketMs <= 0 || t.BucketMs > maxTimelineBucketMs {
		return fmt.Errorf("bucketMs: %d outside [1, %d]", t.BucketMs, maxTimelineBucketMs)
	}
	if t.StartUnixMs%t.BucketMs != 0 {
		return fmt.Errorf("startUnixMs: %d is not a multiple of bucketMs %d", t.StartUnixMs, t.BucketMs)
	}
	if t.StartUnixMs < minTime.UnixMilli() || t.StartUnixMs >= maxTime.UnixMilli() {
		return fmt.Errorf("startUnixMs: %d outside [1970, 2262)", t.StartUnixMs)
	}
	if err := checkSpan(len(t.Counts), t.BucketMs); err != nil {
		return fmt.Errorf("counts: %w", err)
	}
	var total int64
	for i, n := range t.Counts {
		if n < 0 {
			return fmt.Errorf("counts[%d]: negative (%d)", i, n)
		}
		if total > math.MaxInt64-n {
			return fmt.Errorf("counts[%d]: counts overflow", i)
		}
		total += n
	}
	if total != calls {
		return fmt.Errorf("counts: add up to %d, calls is %d", total, calls)
	}
	if calls == 0 {
		if len(t.Counts) != 0 {
			return errors.New("counts: zero buckets listed although calls is 0")
		}
		return nil
	}
	if t.Counts[0] == 0 || t.Counts[len(t.Counts)-1] == 0 {
		return errors.New("counts: first and last buckets must not be zero")
	}
	if ms := firstStart.UnixMilli(); ms < t.StartUnixMs || ms >= t.StartUnixMs+t.BucketMs {
		return fmt.Errorf("startUnixMs: first bucket [%d, %d) does not hold firstStart (%d ms)", t.StartUnixMs, t.StartUnixMs+t.BucketMs, ms)
	}
	lastBucket := t.StartUnixMs + int64(len(t.Counts)-1)*t.BucketMs
	if ms := lastEnd.UnixMilli(); ms < lastBucket {
		return fmt.Errorf("counts: last bucket starts at %d ms, after lastEnd (%d ms)", lastBucket, ms)
	}
	return nil
}
