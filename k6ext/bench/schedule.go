package bench

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Segment is one piece of an open-model schedule: the rate goes linearly from From to To calls
// per second over Duration (From == To: a constant rate). Step > 0 marks step Step of a
// saturation search: its calls are recorded in that step and a call not started before the
// step ends is dropped.
type Segment struct {
	From, To float64
	Duration time.Duration
	Step     int
}

// Schedule is when each call of an open-model scenario is due: call i (0-based) is due at the
// instant t where the expected number of calls ∫rate reaches i, as k6's arrival-rate
// executors do. It is pure arithmetic, so the workers need no queue: they take call numbers
// from a counter and wait until each is due.
type Schedule struct {
	segs  []Segment
	cum   []float64       // expected calls before segment k (len(segs)+1 entries)
	start []time.Duration // offset of segment k (len(segs)+1 entries)
}

// MaxScheduleCalls bounds the calls of one schedule (one runner's scenario): 10^12.
const MaxScheduleCalls = 1e12

// NewSchedule checks the segments and returns their schedule.
func NewSchedule(segs []Segment) (*Schedule, error) {
	if len(segs) == 0 {
		return nil, errors.New("open model: no segment")
	}
	s := &Schedule{segs: segs, cum: []float64{0}, start: []time.Duration{0}}
	for i, g := range segs {
		switch {
		case g.Duration <= 0:
			return nil, fmt.Errorf("open model: segment %d has no duration", i)
		case !(g.From >= 0 && g.To >= 0) || math.IsInf(g.From, 0) || math.IsInf(g.To, 0):
			return nil, fmt.Errorf("open model: segment %d has a negative or invalid rate (%v → %v)", i, g.From, g.To)
		}
		n := s.cum[i] + (g.From+g.To)/2*g.Duration.Seconds()
		if n > MaxScheduleCalls {
			return nil, fmt.Errorf("open model: more than %g calls planned", float64(MaxScheduleCalls))
		}
		s.cum = append(s.cum, n)
		s.start = append(s.start, s.start[i]+g.Duration)
	}
	return s, nil
}

// Total is the number of calls due over the whole schedule.
func (s *Schedule) Total() int64 { return ceilCount(s.cum[len(s.segs)]) }

// Duration is the schedule's length.
func (s *Schedule) Duration() time.Duration { return s.start[len(s.segs)] }

// Segments returns the segments.
func (s *Schedule) Segments() []Segment { return s.segs }

// SegmentEnd is the offset at which segment k ends.
func (s *Schedule) SegmentEnd(k int) time.Duration { return s.start[k+1] }

// ceilCount is the number of integers i >= 0 with i < x.
func ceilCount(x float64) int64 { return int64(math.Ceil(x - 1e-9)) }

// At returns when call i is due (offset from the schedule's start) and its segment; ok is
// false when the schedule ends before it.
func (s *Schedule) At(i int64) (off time.Duration, seg int, ok bool) {
	if i < 0 || i >= s.Total() {
		return 0, 0, false
	}
	n := float64(i)
	k := 0
	for k < len(s.segs)-1 && n >= s.cum[k+1]-1e-9 {
		k++
	}
	g := s.segs[k]
	n -= s.cum[k]
	d := g.Duration.Seconds()
	var t float64
	if slope := (g.To - g.From) / d; math.Abs(slope) < 1e-12 {
		t = n / g.From
	} else {
		// n = From·t + slope·t²/2
		t = (-g.From + math.Sqrt(max(g.From*g.From+2*slope*n, 0))) / slope
	}
	t = min(max(t, 0), d)
	return s.start[k] + time.Duration(t*float64(time.Second)), k, true
}

// DueBefore counts the calls of segment k due before offset off (all of them when off is at
// or past the segment's end).
func (s *Schedule) DueBefore(k int, off time.Duration) int64 {
	g := s.segs[k]
	first := ceilCount(s.cum[k])
	if off >= s.start[k+1] {
		return ceilCount(s.cum[k+1]) - first
	}
	t := (off - s.start[k]).Seconds()
	if t <= 0 {
		return 0
	}
	slope := (g.To - g.From) / g.Duration.Seconds()
	return max(ceilCount(s.cum[k]+g.From*t+slope*t*t/2)-first, 0)
}

// MeanRate is the mean rate of segments k in calls per second.
func (s *Schedule) MeanRate() float64 {
	return s.cum[len(s.segs)] / s.Duration().Seconds()
}
