package charts

import (
	"fmt"
	"math"
)

// AxisKind is how an axis maps values to positions.
type AxisKind int

// The axis kinds.
const (
	// Linear maps values linearly from 0 (or the smallest value when negative).
	Linear AxisKind = iota
	// Log maps values logarithmically (base 10); values <= 0 are left out.
	Log
	// Elapsed is a linear axis of seconds labelled as elapsed time (45s, 2m30s, 1h30m).
	Elapsed
	// Percentile is the HDR percentile axis: values are percentiles in [0, 100), placed at
	// -log10(1 - p/100), so 90, 99, 99.9, 99.99 and 99.999 % are evenly spaced.
	Percentile
)

// MaxPercentile is where a Percentile axis ends; larger percentiles (100 % is the maximum)
// are drawn at its end.
const MaxPercentile = 99.999

// Axis describes one axis of a chart.
type Axis struct {
	// Title is written beside the axis, e.g. "latency (ms)".
	Title string
	// Kind is the scale.
	Kind AxisKind
}

// tick is one labelled position on an axis.
type tick struct {
	v     float64
	label string
}

// scale maps data values to pixels.
type scale struct {
	kind     AxisKind
	lo, hi   float64 // domain, transformed for Log and Percentile
	from, to float64 // pixel range
	ticks    []tick
}

// transform is v in the scale's linearised domain.
func (s *scale) transform(v float64) float64 {
	switch s.kind {
	case Log:
		return math.Log10(v)
	case Percentile:
		return -math.Log10(1 - min(max(v, 0), MaxPercentile)/100)
	}
	return v
}

// valid tells whether v can be drawn on the scale.
func (s *scale) valid(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	return s.kind != Log || v > 0
}

// px is the pixel position of v.
func (s *scale) px(v float64) float64 {
	t := s.transform(v)
	if s.hi == s.lo {
		return s.from
	}
	return s.from + (t-s.lo)/(s.hi-s.lo)*(s.to-s.from)
}

// newScale fits a scale of kind to the values lo..hi (data extent) over pixels from..to.
func newScale(kind AxisKind, lo, hi, from, to float64) *scale {
	s := &scale{kind: kind, from: from, to: to}
	switch kind {
	case Log:
		s.logTicks(lo, hi)
	case Percentile:
		s.lo, s.hi = 0, 5
		for i, l := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
			s.ticks = append(s.ticks, tick{float64(i), l})
		}
		return s
	case Elapsed:
		s.timeTicks(lo, hi)
	default:
		s.linearTicks(lo, hi)
	}
	return s
}

// linearTicks sets a domain from 0 (or lo when negative) to hi rounded up, ticks at 1, 2 or 5
// times a power of ten.
func (s *scale) linearTicks(lo, hi float64) {
	lo = min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	s.lo, s.hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	for v := s.lo; v <= s.hi+step/2; v += step {
		s.ticks = append(s.ticks, tick{v, FormatValue(v)})
	}
}

// logTicks sets a domain of whole decades around lo..hi (lo > 0), ticks at each power of ten,
// plus 2 and 5 times it over at most two decades.
func (s *scale) logTicks(lo, hi float64) {
	if lo <= 0 || math.IsInf(lo, 0) {
		lo = 1
	}
	hi = max(hi, lo)
	a, b := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if b == a {
		b++
	}
	s.lo, s.hi = a, b
	for e := a; e <= b; e++ {
		p := math.Pow(10, e)
		s.ticks = append(s.ticks, tick{e, FormatValue(p)})
		if b-a <= 2 && e < b {
			s.ticks = append(s.ticks, tick{math.Log10(2 * p), FormatValue(2 * p)}, tick{math.Log10(5 * p), FormatValue(5 * p)})
		}
	}
}

// timeSteps are the tick steps of an Elapsed axis, in seconds.
var timeSteps = []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}

// timeTicks sets a domain from 0 (or lo) to hi seconds with about 6 ticks at round times.
func (s *scale) timeTicks(lo, hi float64) {
	lo = min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	step := timeSteps[len(timeSteps)-1]
	for _, st := range timeSteps {
		if (hi-lo)/st <= 7 {
			step = st
			break
		}
	}
	s.lo, s.hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	for v := s.lo; v <= s.hi+step/2; v += step {
		s.ticks = append(s.ticks, tick{v, FormatElapsed(v)})
	}
}

// FormatElapsed formats seconds as elapsed time: 45s, 2m30s, 1h30m, 2h.
func FormatElapsed(sec float64) string {
	n := int64(math.Round(sec))
	neg := ""
	if n < 0 {
		neg, n = "-", -n
	}
	h, m, s := n/3600, n/60%60, n%60
	switch {
	case h > 0 && m > 0:
		return fmt.Sprintf("%s%dh%dm", neg, h, m)
	case h > 0:
		return fmt.Sprintf("%s%dh", neg, h)
	case m > 0 && s > 0:
		return fmt.Sprintf("%s%dm%ds", neg, m, s)
	case m > 0:
		return fmt.Sprintf("%s%dm", neg, m)
	}
	return fmt.Sprintf("%s%ds", neg, s)
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten (1 for v <= 0).
func niceStep(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p*1.0000001 {
			return m * p
		}
	}
	return 10 * p
}
