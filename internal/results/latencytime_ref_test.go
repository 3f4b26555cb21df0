package results

import (
	"math"
	"slices"
)

// The latency timeline recorder as it was before its intervals were stored compactly
// (int64 counts of every bin between an interval's fastest and slowest call), kept for the
// tests as the reference the compact recorder must equal (TestLatencyTimelineCompactEqualsDense)
// and as the baseline of its memory benchmark (BenchmarkLatencyTimelineMemory).

// refLatencyRec is a Recorder's latency timeline: closed intervals sparse, the current one dense.
type refLatencyRec struct {
	startMs, bucketMs int64
	ivs               [][]int64 // like LatencyTimeline.Intervals; nil entries are empty
	cur               int       // index in ivs of the dense interval [curLo, curHi) ns, -1 none
	curLo, curHi      int64
	dense             [latencyBinCount]int64
	denseMax          int64
	full              bool // the timeline outgrew MaxLatencyIntervals: nothing more is kept
}

// newRefLatencyRec returns an empty latency timeline at the finest width.
func newRefLatencyRec() *refLatencyRec {
	return &refLatencyRec{bucketMs: TimelineWidthsMs[0], cur: -1}
}

// record counts a call started at startNs that took us µs.
func (l *refLatencyRec) record(startNs, us int64) {
	if startNs < l.curLo || startNs >= l.curHi {
		l.move(startNs)
		if l.full {
			return
		}
	}
	l.dense[LatencyBin(us)]++
	l.denseMax = max(l.denseMax, us)
}

// move makes the interval holding startNs the dense one, widening the timeline when it would
// be longer than LatencyTimelineMaxBuckets.
func (l *refLatencyRec) move(startNs int64) {
	l.flush()
	if l.full {
		return
	}
	ms := floorDiv(startNs, 1e6)
	for {
		at := floorDiv(ms, l.bucketMs) * l.bucketMs
		if len(l.ivs) == 0 {
			l.startMs = at
		}
		lo, hi := min(l.startMs, at), max(l.startMs+int64(len(l.ivs))*l.bucketMs, at+l.bucketMs)
		n := (hi - lo) / l.bucketMs
		if n <= LatencyTimelineMaxBuckets || (l.bucketMs == TimelineWidthsMs[len(TimelineWidthsMs)-1] && n <= MaxLatencyIntervals) {
			l.extend(lo, hi)
			l.cur = int((at - l.startMs) / l.bucketMs)
			l.curLo, l.curHi = at*1e6, (at+l.bucketMs)*1e6
			return
		}
		if l.bucketMs == TimelineWidthsMs[len(TimelineWidthsMs)-1] {
			l.full, l.ivs = true, nil
			l.curLo, l.curHi = math.MinInt64, math.MinInt64
			return
		}
		t := widenLatency(LatencyTimeline{StartUnixMs: l.startMs, BucketMs: l.bucketMs, Intervals: l.ivs}, nextWidth(l.bucketMs))
		l.startMs, l.bucketMs, l.ivs = t.StartUnixMs, t.BucketMs, t.Intervals
	}
}

// extend grows ivs to cover [lo, hi) ms.
func (l *refLatencyRec) extend(lo, hi int64) {
	if len(l.ivs) > 0 && lo < l.startMs {
		l.ivs = append(make([][]int64, (l.startMs-lo)/l.bucketMs), l.ivs...)
	}
	l.startMs = lo
	for int64(len(l.ivs)) < (hi-lo)/l.bucketMs {
		l.ivs = append(l.ivs, nil)
	}
}

// flush adds the dense interval into ivs and clears it.
func (l *refLatencyRec) flush() {
	if l.cur < 0 {
		return
	}
	if iv := refDenseInterval(&l.dense, l.denseMax); len(iv) > 0 {
		l.ivs[l.cur] = addInterval(l.ivs[l.cur], iv)
	}
	clear(l.dense[:])
	l.cur, l.denseMax, l.curLo, l.curHi = -1, 0, 0, 0
}

// snapshot returns the timeline recorded so far (nil when empty or full).
func (l *refLatencyRec) snapshot() *LatencyTimeline {
	if l == nil || l.full {
		return nil
	}
	t := &LatencyTimeline{StartUnixMs: l.startMs, BucketMs: l.bucketMs, Intervals: make([][]int64, len(l.ivs))}
	for i, iv := range l.ivs {
		t.Intervals[i] = slices.Clone(iv)
	}
	if l.cur >= 0 && l.denseMax > 0 {
		t.Intervals[l.cur] = addInterval(t.Intervals[l.cur], refDenseInterval(&l.dense, l.denseMax))
	}
	return t.trim()
}

// refDenseInterval is the interval of the bin counts dense with maximum mx (nil when empty).
func refDenseInterval(dense *[latencyBinCount]int64, mx int64) []int64 {
	if mx == 0 {
		return nil
	}
	lo, hi := 0, LatencyBin(mx)
	for dense[lo] == 0 {
		lo++
	}
	iv := make([]int64, 0, hi-lo+3)
	return append(append(iv, mx, int64(lo)), dense[lo:hi+1]...)
}
