package results

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Open model (arrival-rate scenarios): calls are due at intended instants whatever the target
// answers, so a stalled target shows in the latency instead of silently slowing the load down
// (coordinated omission). Such a scenario records, per call, the corrected latency (intended
// start → reply) in Latency, the actual send in Starts, the service time (actually sent →
// reply) in ServiceTime, and counts the calls no virtual user could start in time in
// Dropped. A saturation search records each of its steps as an operation named StepName(i).

// openRecorder holds a Recorder's open-model figures.
type openRecorder struct {
	service    histRecorder
	dropped    int64
	targetRate float64
	stop       *SearchStop
}

// histRecorder is a dense HDR histogram (the layout of Recorder's latency).
type histRecorder struct {
	counts      []int64
	n, min, max int64
	sum         int64
	sumSquares  float64
}

// record adds one duration.
func (h *histRecorder) record(d time.Duration) {
	if h.counts == nil {
		h.counts = make([]int64, hdrCountsLen)
	}
	us := clampMicros(int64(max(d, 0)))
	h.counts[hdrIndex(us)]++
	if h.n == 0 {
		h.min = us
	}
	h.n++
	h.min, h.max = min(h.min, us), max(h.max, us)
	h.sum += us
	h.sumSquares += float64(us) * float64(us)
}

// histogram returns the sparse snapshot.
func (h *histRecorder) histogram() Histogram {
	out := Histogram{Unit: HistogramUnit, SignificantFigures: HistogramSigFigs, Buckets: [][2]int64{}}
	if h.n == 0 {
		return out
	}
	out.Min, out.Max, out.Sum, out.SumSquares = h.min, h.max, h.sum, h.sumSquares
	for i := hdrIndex(h.min); i <= hdrIndex(h.max); i++ {
		if n := h.counts[i]; n != 0 {
			out.Buckets = append(out.Buckets, [2]int64{hdrValue(i), n})
		}
	}
	return out
}

// openRec returns r's open-model figures, created on first use.
func (r *Recorder) openRec() *openRecorder {
	if r.open == nil {
		r.open = &openRecorder{}
	}
	return r.open
}

// RecordOpen records one call of an open-model scenario: due at intended, actually sent at
// sent, answered at end. Latency gets end − intended (coordinated-omission corrected),
// ServiceTime end − sent; the start timeline counts the actual send (so CPS is the achieved
// rate) and the scenario ends at end. returnValue and errKind are as in Record.
func (r *Recorder) RecordOpen(intended, sent, end time.Time, returnValue, errKind string) {
	first, lastEnd := r.calls == 0, r.lastEnd
	r.record(sent, max(end.Sub(intended), 0), end.UnixNano(), returnValue, errKind)
	if first {
		lastEnd = end.UnixNano()
	}
	r.lastEnd = max(lastEnd, end.UnixNano(), sent.UnixNano())
	r.openRec().service.record(end.Sub(sent))
}

// SearchStop tells that a saturation search ended early, after step AfterStep (1-based).
type SearchStop struct {
	// AfterStep is the last step that ran to its end: it (with the ones before it, when
	// several failures in a row were needed) broke the stop rule.
	AfterStep int `json:"afterStep"`
	// Reason is why, e.g. "step-04: p99 212 ms > 10ms".
	Reason string `json:"reason"`
}

// SetSearchStop records that r's saturation search stopped after step afterStep, and why.
func (r *Recorder) SetSearchStop(afterStep int, reason string) {
	r.openRec().stop = &SearchStop{AfterStep: afterStep, Reason: truncateValue(reason)}
}

// AddDropped counts n calls that were due but could not be started in time.
func (r *Recorder) AddDropped(n int64) { r.openRec().dropped += n }

// SetTargetRate marks r as an open-model scenario with the intended rate in calls per second.
// Record it in one Recorder per scenario and runner only: merges add the rates up.
func (r *Recorder) SetTargetRate(perSecond float64) { r.openRec().targetRate = perSecond }

// openScenario adds r's open-model figures to its snapshot s.
func (r *Recorder) openScenario(s *Scenario) {
	if r.open == nil {
		return
	}
	h := r.open.service.histogram()
	s.ServiceTime = &h
	s.Dropped, s.TargetRate = r.open.dropped, r.open.targetRate
	if r.open.stop != nil {
		c := *r.open.stop
		s.SearchStop = &c
	}
}

// openOps adds the operations of a recorder without calls that carry open-model figures.
func (r *Recorder) openOps(s *Scenario) {
	for _, op := range r.ops {
		if op.calls > 0 || op.open != nil {
			s.Operations = append(s.Operations, op.Scenario())
		}
	}
	slices.SortFunc(s.Operations, func(a, b Scenario) int { return strings.Compare(a.Name, b.Name) })
}

// StepName is the operation name of step i (1-based) of a saturation search: "step-01".
func StepName(i int) string { return fmt.Sprintf("step-%02d", i) }

// validateOpen checks a scenario's open-model fields.
func (s *Scenario) validateOpen() error {
	if s.Dropped < 0 {
		return fmt.Errorf("dropped: negative (%d)", s.Dropped)
	}
	if math.IsNaN(s.TargetRate) || math.IsInf(s.TargetRate, 0) || s.TargetRate < 0 {
		return fmt.Errorf("targetRate: %v is not a finite non-negative number", s.TargetRate)
	}
	if st := s.SearchStop; st != nil && (st.AfterStep < 1 || len(st.Reason) > MaxValueLength) {
		return fmt.Errorf("searchStop: afterStep %d must be at least 1 and the reason at most %d bytes", st.AfterStep, MaxValueLength)
	}
	if s.ServiceTime == nil {
		if s.Dropped != 0 || s.TargetRate != 0 || s.SearchStop != nil {
			return errors.New("serviceTime: missing although dropped or targetRate is set (an open-model scenario)")
		}
		return nil
	}
	if err := s.ServiceTime.validate(s.Calls); err != nil {
		return fmt.Errorf("serviceTime.%w", err)
	}
	return nil
}

// mergeOpen adds the open-model fields of s into acc (after their calls were added: calls
// counts both). A closed-model part merged with an open-model one is an error.
func mergeOpen(acc, s *Scenario, accCalls int64) error {
	if acc.ServiceTime == nil && s.ServiceTime == nil {
		return nil
	}
	if (acc.ServiceTime == nil && accCalls > 0) || (s.ServiceTime == nil && s.Calls > 0) {
		return errors.New("an open-model scenario (serviceTime) merged with a closed-model one")
	}
	a, b := emptyHistogram(), emptyHistogram()
	if acc.ServiceTime != nil {
		a = *acc.ServiceTime
	}
	if s.ServiceTime != nil {
		b = *s.ServiceTime
	}
	if sf := min(a.SignificantFigures, b.SignificantFigures); sf != a.SignificantFigures || sf != b.SignificantFigures {
		a, b = reducePrecision(a, sf), reducePrecision(b, sf)
	}
	out := Histogram{Unit: HistogramUnit, SignificantFigures: a.SignificantFigures,
		Sum: a.Sum + b.Sum, SumSquares: a.SumSquares + b.SumSquares, Buckets: mergeBuckets(a.Buckets, b.Buckets)}
	switch {
	case len(a.Buckets) == 0:
		out.Min, out.Max = b.Min, b.Max
	case len(b.Buckets) == 0:
		out.Min, out.Max = a.Min, a.Max
	default:
		out.Min, out.Max = min(a.Min, b.Min), max(a.Max, b.Max)
	}
	if out.Buckets == nil {
		out.Buckets = [][2]int64{}
	}
	acc.ServiceTime = &out
	if st := s.SearchStop; st != nil && (acc.SearchStop == nil || st.AfterStep < acc.SearchStop.AfterStep) {
		c := *st
		acc.SearchStop = &c
	}
	acc.Dropped += s.Dropped
	acc.TargetRate += s.TargetRate
	return nil
}

// emptyHistogram is a histogram of no calls.
func emptyHistogram() Histogram {
	return Histogram{Unit: HistogramUnit, SignificantFigures: HistogramSigFigs, Buckets: [][2]int64{}}
}
