package results

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// latencyRec is a Recorder's latency timeline. The interval of the latest call start is dense
// (a count per bin, so recording a call is two stores); the others are stored compactly, one
// after the other in buf (appendDense): uvarints of max, first and the counts of the bins from
// first to the bin of max, a run of empty bins as 0 and the run's length. A VU's calls start
// in time order, so an interval is encoded once when its VU moves on; a start in an earlier
// interval (a call that started before one recorded already) decodes it back into the dense
// counts, and its next encoding is appended (buf is compacted when half of it is stale). At
// 1,000 calls/s of widely spread latencies an interval takes ~90 bytes instead of 8 per bin
// between its fastest and slowest call (~930), see BenchmarkLatencyTimelineMemory.
type latencyRec struct {
	startMs, bucketMs int64
	buf               []byte   // the intervals' encodings
	ivs               []ivSpan // per interval where its encoding is in buf (n 0: no calls)
	stale             int      // bytes of buf no interval refers to
	cur               int      // index in ivs of the dense interval [curLo, curHi) ns, -1 none
	curLo, curHi      int64
	dense             [latencyBinCount]int64 // interval cur's counts (ivs[cur] included)
	denseMax          int64
	full              bool // the timeline outgrew MaxLatencyIntervals: nothing more is kept
}

// ivSpan is where an interval's encoding is in latencyRec.buf.
type ivSpan struct{ off, n uint32 }

// enc is the encoding of interval i (empty without calls).
func (l *latencyRec) enc(i int) []byte {
	sp := l.ivs[i]
	return l.buf[sp.off : sp.off+sp.n : sp.off+sp.n]
}

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
	l.dense[LatencyBin(us)]++
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
			if l.ivs[l.cur].n > 0 {
				l.denseMax = addEncoded(&l.dense, l.enc(l.cur))
			}
			return
		}
		if l.bucketMs == last {
			l.full, l.ivs, l.buf = true, nil, nil
			l.curLo, l.curHi = math.MinInt64, math.MinInt64
			return
		}
		l.widen(nextWidth(l.bucketMs))
	}
}

// extend grows ivs to cover [lo, hi) ms.
func (l *latencyRec) extend(lo, hi int64) {
	if len(l.ivs) > 0 && lo < l.startMs {
		l.ivs = append(make([]ivSpan, (l.startMs-lo)/l.bucketMs, (l.startMs-lo)/l.bucketMs+int64(cap(l.ivs))), l.ivs...)
	}
	l.startMs = lo
	for int64(len(l.ivs)) < (hi-lo)/l.bucketMs {
		l.ivs = append(l.ivs, ivSpan{})
	}
}

// flush appends the dense interval's encoding to buf and clears it.
func (l *latencyRec) flush() {
	if l.cur < 0 {
		return
	}
	if l.denseMax > 0 {
		l.stale += int(l.ivs[l.cur].n)
		off := len(l.buf)
		l.buf = appendDense(l.buf, &l.dense, l.denseMax)
		l.ivs[l.cur] = ivSpan{uint32(off), uint32(len(l.buf) - off)}
		clear(l.dense[:])
		if l.stale > 4096 && 2*l.stale > len(l.buf) {
			l.compact()
		}
	}
	l.cur, l.denseMax, l.curLo, l.curHi = -1, 0, 0, 0
}

// compact copies the intervals' encodings to a buf without stale bytes.
func (l *latencyRec) compact() {
	buf := make([]byte, 0, len(l.buf)-l.stale)
	for i, sp := range l.ivs {
		if sp.n > 0 {
			at := len(buf)
			buf = append(buf, l.enc(i)...)
			l.ivs[i].off = uint32(at)
		}
	}
	l.buf, l.stale = buf, 0
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
	n := int((l.startMs+int64(len(l.ivs)-1)*l.bucketMs-start)/w + 1)
	out := make([]ivSpan, n, max(n, LatencyTimelineMaxBuckets+1)) // room to grow to the bound
	buf := make([]byte, 0, len(l.buf)-l.stale)
	for k := range out {
		lo, hi := max(int64(k)*ratio-off, 0), min(int64(k+1)*ratio-off, int64(len(l.ivs)))
		at := len(buf)
		buf = l.sum(buf, int(lo), int(hi))
		out[k] = ivSpan{uint32(at), uint32(len(buf) - at)}
	}
	l.startMs, l.bucketMs, l.ivs, l.buf, l.stale = start, w, out, buf, 0
}

// sum appends to dst the encoding of the sum of intervals [lo, hi) (nothing when all are
// empty), added in the dense counts (which must be clear, and are left clear).
func (l *latencyRec) sum(dst []byte, lo, hi int) []byte {
	one, n := 0, 0
	for i := lo; i < hi; i++ {
		if l.ivs[i].n > 0 {
			one, n = i, n+1
		}
	}
	switch n {
	case 0:
		return dst
	case 1:
		return append(dst, l.enc(one)...)
	}
	var mx int64
	for i := lo; i < hi; i++ {
		if l.ivs[i].n > 0 {
			mx = max(mx, addEncoded(&l.dense, l.enc(i)))
		}
	}
	dst = appendDense(dst, &l.dense, mx)
	clear(l.dense[:])
	return dst
}

// snapshot returns the timeline recorded so far (nil when empty or full): one slice of every
// interval's numbers, counted first, and the intervals' headers.
func (l *latencyRec) snapshot() *LatencyTimeline {
	if l == nil || l.full {
		return nil
	}
	nums := 0
	for i := range l.ivs {
		if i == l.cur {
			nums += denseLen(&l.dense, l.denseMax)
		} else {
			nums += encodedLen(l.enc(i))
		}
	}
	flat := make([]int64, 0, nums)
	t := &LatencyTimeline{StartUnixMs: l.startMs, BucketMs: l.bucketMs, Intervals: make([][]int64, len(l.ivs))}
	for i := range l.ivs {
		at := len(flat)
		if i == l.cur {
			flat = appendDenseInts(flat, &l.dense, l.denseMax)
		} else {
			flat = appendDecoded(flat, l.enc(i))
		}
		t.Intervals[i] = flat[at:len(flat):len(flat)]
	}
	return t.trim()
}

// memBytes is the memory l holds: the struct, the intervals' spans and their encodings.
func (l *latencyRec) memBytes() int {
	return int(unsafe.Sizeof(*l)) + 8*cap(l.ivs) + cap(l.buf)
}

// appendDense appends the encoding of the interval of bin counts dense and maximum mx > 0.
func appendDense(dst []byte, dense *[latencyBinCount]int64, mx int64) []byte {
	lo, hi := firstBin(dense), LatencyBin(mx)
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
	return 3 + LatencyBin(mx) - int(first)
}

// denseLen is the length of the interval of bin counts dense and maximum mx as
// [max, first, count, ...] (0 when mx is 0: no calls).
func denseLen(dense *[latencyBinCount]int64, mx int64) int {
	if mx == 0 {
		return 0
	}
	return 3 + LatencyBin(mx) - firstBin(dense)
}

// appendDenseInts appends the interval of bin counts dense and maximum mx as
// [max, first, count, ...] (nothing when mx is 0).
func appendDenseInts(dst []int64, dense *[latencyBinCount]int64, mx int64) []int64 {
	if mx == 0 {
		return dst
	}
	lo, hi := firstBin(dense), LatencyBin(mx)
	return append(append(dst, mx, int64(lo)), dense[lo:hi+1]...)
}

// firstBin is the lowest bin of dense with calls (dense must have some).
func firstBin(dense *[latencyBinCount]int64) int {
	lo := 0
	for dense[lo] == 0 {
		lo++
	}
	return lo
}
