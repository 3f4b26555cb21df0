package results

import (
	"encoding/binary"
	"math"
)

// latencyRec is a Recorder's latency timeline. The interval of the latest call start is dense
// (a count per bin, so recording a call is two stores); the others are stored compactly, each
// as its own byte slice (appendDense): uvarints of max, first and the counts of the bins from
// first to the bin of max, a run of empty bins as 0 and the run's length. A VU's calls start
// in time order, so an interval is encoded once when its VU moves on; a start in an earlier
// interval (a call that started before one recorded already) decodes it back into the dense
// counts. At 1,000 calls/s of widely spread latencies an interval takes ~60–90 bytes instead of
// 8 per bin between its fastest and slowest call (~900), see BenchmarkLatencyTimelineMemory.
type latencyRec struct {
	startMs, bucketMs int64
	ivs               [][]byte // per interval its encoding; nil for an interval without calls
	cur               int      // index in ivs of the dense interval [curLo, curHi) ns, -1 none
	curLo, curHi      int64
	dense             [latencyBinCount]int64 // interval cur's counts (ivs[cur] included)
	denseMax          int64
	full              bool // the timeline outgrew MaxLatencyIntervals: nothing more is kept
}

// maxIntervalBytes bounds an interval's encoding: max and first, then at most a uvarint per bin.
const maxIntervalBytes = (2 + latencyBinCount) * binary.MaxVarintLen64

// newLatencyRec returns an empty latency timeline at the finest width.
func newLatencyRec() *latencyRec {
	return &latencyRec{bucketMs: TimelineWidthsMs[0], cur: -1}
}

// record counts a call started at startNs that took us µs.
func (l *latencyRec) record(startNs, us int64) {
	if startNs < l.curLo || startNs >= l.curHi {
		l.move(startNs)
		if l.full {
			return
		}
	}
	l.dense[latencyBin(us)]++
	l.denseMax = max(l.denseMax, us)
}

// move makes the interval holding startNs the dense one, widening the timeline when it would
// be longer than LatencyTimelineMaxBuckets.
func (l *latencyRec) move(startNs int64) {
	l.flush()
	if l.full {
		return
	}
	ms := floorDiv(startNs, 1e6)
	last := TimelineWidthsMs[len(TimelineWidthsMs)-1]
	for {
		at := floorDiv(ms, l.bucketMs) * l.bucketMs
		if len(l.ivs) == 0 {
			l.startMs = at
		}
		lo, hi := min(l.startMs, at), max(l.startMs+int64(len(l.ivs))*l.bucketMs, at+l.bucketMs)
		n := (hi - lo) / l.bucketMs
		if n <= LatencyTimelineMaxBuckets || (l.bucketMs == last && n <= MaxLatencyIntervals) {
			l.extend(lo, hi)
			l.cur = int((at - l.startMs) / l.bucketMs)
			l.curLo, l.curHi = at*1e6, (at+l.bucketMs)*1e6
			if b := l.ivs[l.cur]; b != nil {
				l.denseMax = addEncoded(&l.dense, b)
			}
			return
		}
		if l.bucketMs == last {
			l.full, l.ivs = true, nil
			l.curLo, l.curHi = math.MinInt64, math.MinInt64
			return
		}
		l.widen(nextWidth(l.bucketMs))
	}
}

// extend grows ivs to cover [lo, hi) ms.
func (l *latencyRec) extend(lo, hi int64) {
	if len(l.ivs) > 0 && lo < l.startMs {
		l.ivs = append(make([][]byte, (l.startMs-lo)/l.bucketMs), l.ivs...)
	}
	l.startMs = lo
	for int64(len(l.ivs)) < (hi-lo)/l.bucketMs {
		l.ivs = append(l.ivs, nil)
	}
}

// flush encodes the dense interval into ivs (reusing its previous encoding's room) and clears it.
func (l *latencyRec) flush() {
	if l.cur < 0 {
		return
	}
	if l.denseMax > 0 {
		var buf [maxIntervalBytes]byte
		b := appendDense(buf[:0], &l.dense, l.denseMax)
		if old := l.ivs[l.cur]; cap(old) >= len(b) {
			l.ivs[l.cur] = append(old[:0], b...)
		} else {
			l.ivs[l.cur] = append([]byte(nil), b...)
		}
		clear(l.dense[:])
	}
	l.cur, l.denseMax, l.curLo, l.curHi = -1, 0, 0, 0
}

// widen moves the timeline to intervals of width w, a multiple of bucketMs (both start at
// multiples of their width, so each interval lies in exactly one wider one), adding the counts
// exactly like widenLatency. The dense interval must be flushed.
func (l *latencyRec) widen(w int64) {
	start := floorDiv(l.startMs, w) * w
	if len(l.ivs) == 0 {
		l.startMs, l.bucketMs = start, w
		return
	}
	ratio, off := w/l.bucketMs, (l.startMs-start)/l.bucketMs
	out := make([][]byte, (l.startMs+int64(len(l.ivs)-1)*l.bucketMs-start)/w+1)
	for k := range out {
		lo, hi := max(int64(k)*ratio-off, 0), min(int64(k+1)*ratio-off, int64(len(l.ivs)))
		out[k] = l.sum(l.ivs[lo:hi])
	}
	l.startMs, l.bucketMs, l.ivs = start, w, out
}

// sum is the encoding of the sum of the encoded intervals parts (nil when all are empty),
// added in the dense counts (which must be clear, and are left clear).
func (l *latencyRec) sum(parts [][]byte) []byte {
	var one []byte
	n := 0
	for _, b := range parts {
		if b != nil {
			one, n = b, n+1
		}
	}
	if n <= 1 {
		return one
	}
	var mx int64
	for _, b := range parts {
		if b != nil {
			mx = max(mx, addEncoded(&l.dense, b))
		}
	}
	var buf [maxIntervalBytes]byte
	out := append([]byte(nil), appendDense(buf[:0], &l.dense, mx)...)
	clear(l.dense[:])
	return out
}

// snapshot returns the timeline recorded so far (nil when empty or full): one slice of every
// interval's numbers, counted first, and the intervals' headers.
func (l *latencyRec) snapshot() *LatencyTimeline {
	if l == nil || l.full {
		return nil
	}
	nums := 0
	for i, b := range l.ivs {
		if i == l.cur {
			nums += denseLen(&l.dense, l.denseMax)
		} else {
			nums += encodedLen(b)
		}
	}
	flat := make([]int64, 0, nums)
	t := &LatencyTimeline{StartUnixMs: l.startMs, BucketMs: l.bucketMs, Intervals: make([][]int64, len(l.ivs))}
	for i, b := range l.ivs {
		at := len(flat)
		if i == l.cur {
			flat = appendDenseInts(flat, &l.dense, l.denseMax)
		} else {
			flat = appendDecoded(flat, b)
		}
		t.Intervals[i] = flat[at:len(flat):len(flat)]
	}
	return t.trim()
}

// memBytes is the memory l holds: the struct, the intervals' headers and their encodings.
func (l *latencyRec) memBytes() int {
	n := 8*latencyBinCount + 80 + 24*cap(l.ivs)
	for _, b := range l.ivs {
		n += cap(b)
	}
	return n
}

// appendDense appends the encoding of the interval of bin counts dense and maximum mx > 0.
func appendDense(dst []byte, dense *[latencyBinCount]int64, mx int64) []byte {
	lo, hi := 0, latencyBin(mx)
	for dense[lo] == 0 {
		lo++
	}
	dst = binary.AppendUvarint(binary.AppendUvarint(dst, uint64(mx)), uint64(lo))
	for i := lo; i <= hi; {
		if n := dense[i]; n != 0 {
			dst = binary.AppendUvarint(dst, uint64(n))
			i++
			continue
		}
		j := i + 1
		for dense[j] == 0 { // the bin of mx is not empty
			j++
		}
		dst = binary.AppendUvarint(append(dst, 0), uint64(j-i))
		i = j
	}
	return dst
}

// uvarint reads the uvarint at b[*i:] (an encoding of appendDense) and moves *i past it.
func uvarint(b []byte, i *int) int64 {
	v, n := binary.Uvarint(b[*i:])
	*i += n
	return int64(v)
}

// addEncoded adds the encoded interval b into dense and returns its max.
func addEncoded(dense *[latencyBinCount]int64, b []byte) int64 {
	i := 0
	mx, bin := uvarint(b, &i), uvarint(b, &i)
	for i < len(b) {
		if n := uvarint(b, &i); n != 0 {
			dense[bin] += n
			bin++
		} else {
			bin += uvarint(b, &i)
		}
	}
	return mx
}

// appendDecoded appends the encoded interval b as [max, first, count, ...] (nothing for nil).
func appendDecoded(dst []int64, b []byte) []int64 {
	if len(b) == 0 {
		return dst
	}
	i := 0
	dst = append(dst, uvarint(b, &i), uvarint(b, &i))
	for i < len(b) {
		if n := uvarint(b, &i); n != 0 {
			dst = append(dst, n)
		} else {
			for z := uvarint(b, &i); z > 0; z-- {
				dst = append(dst, 0)
			}
		}
	}
	return dst
}

// encodedLen is the length of the encoded interval b as [max, first, count, ...].
func encodedLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	i := 0
	mx, first := uvarint(b, &i), uvarint(b, &i)
	return 3 + latencyBin(mx) - int(first)
}

// denseLen is the length of the interval of bin counts dense and maximum mx as
// [max, first, count, ...] (0 when mx is 0: no calls).
func denseLen(dense *[latencyBinCount]int64, mx int64) int {
	if mx == 0 {
		return 0
	}
	lo := 0
	for dense[lo] == 0 {
		lo++
	}
	return 3 + latencyBin(mx) - lo
}

// appendDenseInts appends the interval of bin counts dense and maximum mx as
// [max, first, count, ...] (nothing when mx is 0).
func appendDenseInts(dst []int64, dense *[latencyBinCount]int64, mx int64) []int64 {
	if mx == 0 {
		return dst
	}
	lo, hi := 0, latencyBin(mx)
	for dense[lo] == 0 {
		lo++
	}
	return append(append(dst, mx, int64(lo)), dense[lo:hi+1]...)
}
