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
