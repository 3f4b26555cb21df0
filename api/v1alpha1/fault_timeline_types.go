package v1alpha1

// FaultSecond is one second of a fault's per-second timeline: what completed in it across all
// runners (the merged results' fault seconds, README "Fault injection").
type FaultSecond struct {
	// Second is the second's position relative to the fault's second (0: the second the
	// fault was applied in; -5 the fifth before it).
	Second int32 `json:"second"`
	// Calls counts the calls that completed in the second, failed ones included.
	Calls int64 `json:"calls"`
	// Errors counts those that failed.
	Errors int64 `json:"errors"`
	// P99Micros is their 99th percentile latency in microseconds (0 without calls).
	P99Micros int64 `json:"p99Micros"`
	// MaxMicros is the slowest of them in microseconds (0 without calls): in a closed loop a
	// stall holds only the calls in flight, one per virtual user, too few to move the p99.
	MaxMicros int64 `json:"maxMicros"`
}
