package results

import "math/bits"

// The latency histogram uses the HdrHistogram layout (the same bucket boundaries as
// github.com/HdrHistogram/hdrhistogram-go with lowest discernible value 1, highest trackable
// value HistogramMaxValue and 3 significant figures): values below 2048 µs are exact, and
// above that every power-of-two range is split into 1024 equal sub-buckets, so a bucket is at
// most 1/1024 (< 0.1 %) of its value wide.
const (
	// HistogramUnit is the unit of every histogram value.
	HistogramUnit = "us"
	// HistogramSigFigs is the HDR precision of every histogram.
	HistogramSigFigs = 3
	// HistogramMinValue is the smallest recordable duration in µs; shorter calls count as 1 µs.
	HistogramMinValue = 1
	// HistogramMaxValue is the largest recordable duration in µs (1 h); longer calls count as 1 h.
	HistogramMaxValue = 3_600_000_000
)

const (
	subBucketHalfCountMagnitude = 10                               // log2(1024)
	subBucketHalfCount          = 1 << subBucketHalfCountMagnitude // 1024
	subBucketMask               = 2*subBucketHalfCount - 1         // 2047
	hdrBucketCount              = 22                               // 2048 << 21 > HistogramMaxValue
	hdrCountsLen                = (hdrBucketCount + 1) * subBucketHalfCount
)

// hdrIndex returns the counts index of v, which must be in [0, HistogramMaxValue].
func hdrIndex(v int64) int {
	bucket := 64 - bits.LeadingZeros64(uint64(v)|subBucketMask) - (subBucketHalfCountMagnitude + 1)
	sub := int(v >> uint(bucket))
	return (bucket+1)<<subBucketHalfCountMagnitude + sub - subBucketHalfCount
}

// hdrValue returns the lowest value of the bucket at counts index i.
func hdrValue(i int) int64 {
	bucket := i>>subBucketHalfCountMagnitude - 1
	sub := int64(i&(subBucketHalfCount-1)) + subBucketHalfCount
	if bucket < 0 {
		sub -= subBucketHalfCount
		bucket = 0
	}
	return sub << uint(bucket)
}

// hdrWidth returns how many distinct values share the bucket of v.
func hdrWidth(v int64) int64 {
	bucket := 64 - bits.LeadingZeros64(uint64(v)|subBucketMask) - (subBucketHalfCountMagnitude + 1)
	return 1 << uint(bucket)
}

// hdrLowest returns the lowest value of the bucket holding v.
func hdrLowest(v int64) int64 {
	return v &^ (hdrWidth(v) - 1)
}

// HistogramCoarseSigFigs is the precision a histogram is reduced to when a document must
// shrink to fit its storage (see Document.Coarsen): values below 256 µs exact, then 128
// sub-buckets per power of two (a bucket < 0.8 % of its value wide). Its buckets are unions of
// whole 3-figure buckets, so the reduction is exact.
const HistogramCoarseSigFigs = 2

// hdrMagnitude is log2 of the half sub-bucket count for sf significant figures: 10 for 3
// (1024 sub-buckets per power of two), 7 for 2 (128).
func hdrMagnitude(sf int) int {
	switch sf {
	case HistogramCoarseSigFigs:
		return 7
	case secondsCoarseSigFigs: // fault seconds only (seconds.go)
		return 4
	}
	return subBucketHalfCountMagnitude
}

// hdrWidthSF returns how many distinct values share the bucket of v at sf significant figures.
func hdrWidthSF(v int64, sf int) int64 {
	m := hdrMagnitude(sf)
	bucket := 64 - bits.LeadingZeros64(uint64(v)|(1<<(m+1)-1)) - (m + 1)
	return 1 << uint(bucket)
}

// hdrLowestSF returns the lowest value of the bucket holding v at sf significant figures.
func hdrLowestSF(v int64, sf int) int64 {
	return v &^ (hdrWidthSF(v, sf) - 1)
}

// reducePrecision returns h with sf significant figures (sf <= h's): each bucket is added
// into the coarser bucket holding it. Min, Max, Sum and SumSquares are unchanged. h is not
// modified.
func reducePrecision(h Histogram, sf int) Histogram {
	if sf >= h.SignificantFigures {
		return h
	}
	out := h
	out.SignificantFigures = sf
	out.Buckets = make([][2]int64, 0, len(h.Buckets)/4+1)
	for _, b := range h.Buckets {
		v := hdrLowestSF(b[0], sf)
		if n := len(out.Buckets); n > 0 && out.Buckets[n-1][0] == v {
			out.Buckets[n-1][1] += b[1]
			continue
		}
		out.Buckets = append(out.Buckets, [2]int64{v, b[1]})
	}
	return out
}

// clampMicros converts a duration in nanoseconds to whole microseconds (rounded to nearest)
// within the trackable range.
func clampMicros(ns int64) int64 {
	us := (ns + 500) / 1000
	if us < HistogramMinValue {
		return HistogramMinValue
	}
	if us > HistogramMaxValue {
		return HistogramMaxValue
	}
	return us
}
