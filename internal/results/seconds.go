package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// Per-second figures around faults (Scenario.FaultSeconds). A runner told when the run's faults
// are due (plan: BENCHRUN_FAULT_WINDOWS) records, for every wall-clock second of a window
// around each fault, the calls that completed in that second, how many failed and their latency
// histogram (2 significant figures). Only those seconds are kept, so the cost is bounded by the
// number of faults, not by the run's length: at most MaxFaultSeconds seconds per scenario.
// Seconds merge exactly across runners (matched by wall-clock second, counts added).

// FaultWindowBefore and FaultWindowAfter place a fault's recording window around its due
// time: [due - FaultWindowBefore, due + FaultWindowAfter). They are a second wider on each
// side than the 5 s before and 10 s after that status.faults shows, so a fault applied up
// to two seconds late, or runners whose clocks differ slightly, still have all its seconds.
const (
	FaultWindowBefore = 6 * time.Second
	FaultWindowAfter  = 12 * time.Second
)

// MaxFaultSeconds bounds Scenario.FaultSeconds: 16 faults (spec.faults' limit) of 19 seconds
// each (an 18 s window touches at most 19 wall-clock seconds), rounded up.
const MaxFaultSeconds = 320

// Second is what completed in one wall-clock second.
type Second struct {
	// StartUnixMs is the second's start in Unix milliseconds (a multiple of 1000).
	StartUnixMs int64 `json:"startUnixMs"`
	// Calls counts the calls that completed in the second, failed ones included.
	Calls int64 `json:"calls"`
	// Errors counts those that failed, <= Calls.
	Errors int64 `json:"errors"`
	// Latency is their latency histogram, 2 significant figures (1 once reduced by Fit).
	Latency Histogram `json:"latency"`
}

// Window is a wall-clock interval [From, To) in which a Recorder keeps per-second figures.
type Window struct {
	// From and To are Unix nanoseconds.
	From, To int64
}

// FaultWindows are the recording windows of faults due at the given offsets from a scenario
// that started at start.
func FaultWindows(start time.Time, offsets []time.Duration) []Window {
	out := make([]Window, 0, len(offsets))
	for _, o := range offsets {
		due := start.Add(o)
		out = append(out, Window{From: due.Add(-FaultWindowBefore).UnixNano(), To: due.Add(FaultWindowAfter).UnixNano()})
	}
	return out
}

// secondRec accumulates one second of a Recorder (sparse 2-figure buckets).
type secondRec struct {
	calls, errors, min, max, sum int64
	sumSquares                   float64
	buckets                      map[int64]int64 // lowest value of a 2-figure bucket -> count
}

// secondsRec is a Recorder's per-second figures within its windows.
type secondsRec struct {
	windows []Window
	lo, hi  int64 // the union's bounds, for a one-comparison test on the hot path
	secs    map[int64]*secondRec
	cur     *secondRec // the second of the last call, and its Unix second
	curSec  int64
}

// SetWindows makes r keep per-second figures of the calls that complete within windows (at
// most 16 are used); calls recorded before are not counted in them.
func (r *Recorder) SetWindows(windows []Window) {
	windows = windows[:min(len(windows), 16)]
	if len(windows) == 0 {
		r.secs = nil
		return
	}
	s := &secondsRec{windows: slices.Clone(windows), lo: windows[0].From, hi: windows[0].To, secs: map[int64]*secondRec{}}
	for _, w := range windows {
		s.lo, s.hi = min(s.lo, w.From), max(s.hi, w.To)
	}
	r.secs = s
}

// record counts a call that ended at endNs and took us µs, when endNs is in a window.
func (s *secondsRec) record(endNs, us int64, failed bool) {
	in := false
	for _, w := range s.windows {
		if endNs >= w.From && endNs < w.To {
			in = true
			break
		}
	}
	if !in {
		return
	}
	sec := floorDiv(endNs, 1e9)
	c := s.cur
	if c == nil || sec != s.curSec {
		if c = s.secs[sec]; c == nil {
			c = &secondRec{min: us, max: us, buckets: map[int64]int64{}}
			s.secs[sec] = c
		}
		s.cur, s.curSec = c, sec
	}
	c.calls++
	if failed {
		c.errors++
	}
	c.min, c.max = min(c.min, us), max(c.max, us)
	c.sum += us
	c.sumSquares += float64(us) * float64(us)
	c.buckets[hdrLowestSF(us, HistogramCoarseSigFigs)]++
}

// snapshot returns the seconds in time order (nil when there are none).
func (s *secondsRec) snapshot() []Second {
	if s == nil || len(s.secs) == 0 {
		return nil
	}
	out := make([]Second, 0, len(s.secs))
	for _, sec := range slices.Sorted(maps.Keys(s.secs)) {
		c := s.secs[sec]
		h := Histogram{Unit: HistogramUnit, SignificantFigures: HistogramCoarseSigFigs, Min: c.min, Max: c.max,
			Sum: c.sum, SumSquares: c.sumSquares, Buckets: make([][2]int64, 0, len(c.buckets))}
		for _, v := range slices.Sorted(maps.Keys(c.buckets)) {
			h.Buckets = append(h.Buckets, [2]int64{v, c.buckets[v]})
		}
		out = append(out, Second{StartUnixMs: sec * 1000, Calls: c.calls, Errors: c.errors, Latency: h})
	}
	return out
}

// validateSeconds checks Scenario.FaultSeconds; errors start with the field name.
func validateSeconds(secs []Second) error {
	if len(secs) > MaxFaultSeconds {
		return fmt.Errorf("faultSeconds: %d entries, more than %d", len(secs), MaxFaultSeconds)
	}
	for i := range secs {
		s := &secs[i]
		switch {
		case s.StartUnixMs%1000 != 0 || s.StartUnixMs < 0 || s.StartUnixMs >= maxTime.UnixMilli():
			return fmt.Errorf("faultSeconds[%d].startUnixMs: %d is not a whole second in [1970, 2262)", i, s.StartUnixMs)
		case i > 0 && s.StartUnixMs <= secs[i-1].StartUnixMs:
			return fmt.Errorf("faultSeconds[%d].startUnixMs: %d not ascending", i, s.StartUnixMs)
		case s.Calls <= 0:
			return fmt.Errorf("faultSeconds[%d].calls: %d is not positive", i, s.Calls)
		case s.Errors < 0 || s.Errors > s.Calls:
			return fmt.Errorf("faultSeconds[%d].errors: %d outside [0, calls %d]", i, s.Errors, s.Calls)
		case s.Latency.SignificantFigures != HistogramCoarseSigFigs && s.Latency.SignificantFigures != secondsCoarseSigFigs:
			return fmt.Errorf("faultSeconds[%d].latency.sigFigs: %d, want %d (or %d once reduced)", i, s.Latency.SignificantFigures, HistogramCoarseSigFigs, secondsCoarseSigFigs)
		}
		if err := s.Latency.validateBuckets(s.Calls); err != nil {
			return fmt.Errorf("faultSeconds[%d].latency.%w", i, err)
		}
	}
	return nil
}

// mergeSeconds adds two time-ordered second lists, matching seconds by start.
func mergeSeconds(a, b []Second) ([]Second, error) {
	if len(b) == 0 {
		return a, nil
	}
	out := make([]Second, 0, max(len(a), len(b)))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0].StartUnixMs < b[0].StartUnixMs:
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0].StartUnixMs < a[0].StartUnixMs:
			out, b = append(out, cloneSecond(b[0])), b[1:]
		default:
			out = append(out, addSecond(a[0], b[0]))
			a, b = a[1:], b[1:]
		}
	}
	if len(out) > MaxFaultSeconds {
		return nil, errors.New("merged faultSeconds: more seconds than " + fmt.Sprint(MaxFaultSeconds))
	}
	return out, nil
}

// addSecond is the sum of two figures of the same second.
func addSecond(a, b Second) Second {
	ha, hb := a.Latency, b.Latency
	if sf := min(ha.SignificantFigures, hb.SignificantFigures); sf != ha.SignificantFigures || sf != hb.SignificantFigures {
		ha, hb = reducePrecision(ha, sf), reducePrecision(hb, sf)
	}
	h := ha
	h.Min, h.Max = min(ha.Min, hb.Min), max(ha.Max, hb.Max)
	h.Sum += hb.Sum
	h.SumSquares += hb.SumSquares
	h.Buckets = mergeBuckets(ha.Buckets, hb.Buckets)
	return Second{StartUnixMs: a.StartUnixMs, Calls: a.Calls + b.Calls, Errors: a.Errors + b.Errors, Latency: h}
}

// cloneSecond returns a copy of s sharing no slice with it.
func cloneSecond(s Second) Second {
	s.Latency.Buckets = slices.Clone(s.Latency.Buckets)
	return s
}

// cloneSeconds returns a copy of secs sharing no slice with it.
func cloneSeconds(secs []Second) []Second {
	if secs == nil {
		return nil
	}
	out := make([]Second, len(secs))
	for i, s := range secs {
		out[i] = cloneSecond(s)
	}
	return out
}

// coarsenSeconds reduces every fault second's histogram of doc to 1 significant figure
// (16 sub-buckets per power of two, a bucket < 6.25 % of its value wide), exactly; it reports
// false when there was nothing to reduce.
func (doc *Document) coarsenSeconds() bool {
	done := false
	for i := range doc.Scenarios {
		for j := range doc.Scenarios[i].FaultSeconds {
			h := &doc.Scenarios[i].FaultSeconds[j].Latency
			if h.SignificantFigures > secondsCoarseSigFigs {
				*h = reducePrecision(*h, secondsCoarseSigFigs)
				done = true
			}
		}
	}
	return done
}

// secondsCoarseSigFigs is the precision fault seconds' histograms are reduced to by Fit.
const secondsCoarseSigFigs = 1

// SecondAt is the figures of the wall-clock second starting at unixMs (a multiple of 1000)
// in secs, or a zero Second with that start when no call completed in it.
func SecondAt(secs []Second, unixMs int64) Second {
	i, ok := slices.BinarySearchFunc(secs, unixMs, func(s Second, t int64) int { return int(max(min(s.StartUnixMs-t, 1), -1)) })
	if !ok {
		return Second{StartUnixMs: unixMs}
	}
	return secs[i]
}

// P99Micros is the second's 99th percentile latency in µs (the middle of its bucket, within
// [min, max]), 0 without calls.
func (s Second) P99Micros() int64 {
	if s.Calls == 0 {
		return 0
	}
	return int64(math.Round(quantile(&s.Latency, s.Calls, 0.99)))
}

// FaultWindowsEnv is the runner environment variable giving the faults' offsets from their
// scenario's start, JSON {scenario: [offset ms, ...]} (set by the plan, read by k6's output).
const FaultWindowsEnv = "BENCHRUN_FAULT_WINDOWS"

// ParseFaultOffsets reads FaultWindowsEnv's value: at most 16 non-negative offsets per scenario
// are kept; an empty value is no faults.
func ParseFaultOffsets(v string) (map[string][]time.Duration, error) {
	if v == "" {
		return nil, nil
	}
	var m map[string][]int64
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, fmt.Errorf("%s: %w", FaultWindowsEnv, err)
	}
	out := make(map[string][]time.Duration, len(m))
	for name, offs := range m {
		for _, ms := range offs[:min(len(offs), 16)] {
			if ms >= 0 && ms < math.MaxInt64/int64(time.Millisecond) {
				out[name] = append(out[name], time.Duration(ms)*time.Millisecond)
			}
		}
	}
	return out, nil
}
