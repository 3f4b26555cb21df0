// Package results holds benchrun's result documents: what one load runner records
// (Document), how documents from many runners merge exactly, and how a merged
// document becomes the tables users publish (Summary and the renderers).
//
// The flow: each runner keeps one Recorder per scenario and VU (Record once per call),
// snapshots them with Recorder.Scenario into a Document, writes it with Encode; the operator
// or the CLI reads documents with Decode (strictly validated), combines them with Merge,
// computes the published statistics with Summarize and writes them with RenderMarkdown (the
// seed tables), RenderJSON, RenderCSV or RenderComparison; the Redis-side seed shapes (the
// Pegasus YCSB table and the packetd protocol table) are in render_ycsb.go. SCHEMA.md in this directory
// documents the document format (schema version 2, reads 1), its units, bounds and merge rules.
//
// The package is pure: no Kubernetes imports, no I/O beyond io.Reader/io.Writer.
package results

import "time"

// SchemaVersion is the version of the result document format written by this package.
// Decoders accept documents from MinSchemaVersion to this version; bump it on any
// incompatible change. Version 2 adds histograms of 2 significant figures (documents fitted
// to a size budget); a version 1 document is a version 2 document with 3-figure histograms.
const SchemaVersion = 2

// MinSchemaVersion is the oldest document version this package reads.
const MinSchemaVersion = 1

// Document is the result of one runner process for a whole run: every scenario it ran,
// in bounded size (histograms and counters, never raw samples). Documents from any number
// of runners merge exactly with Merge.
type Document struct {
	// SchemaVersion is SchemaVersion for documents produced by this code; documents of
	// MinSchemaVersion and later are read.
	SchemaVersion int `json:"schemaVersion"`
	// Runners names the runner processes whose data this document holds
	// (one entry for a runner's own document, several after a merge).
	Runners []string `json:"runners"`
	// Partial is true when at least one runner stopped before its scenarios ended
	// (interrupted, failed, evicted). Partial data is kept and reported as partial.
	Partial bool `json:"partial,omitempty"`
	// PartialReasons says why the document is partial, one line per cause.
	PartialReasons []string `json:"partialReasons,omitempty"`
	// Scenarios are in run order.
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario holds everything recorded for one scenario by one or more runners.
type Scenario struct {
	// Name is the scenario name from the BenchmarkRun (e.g. "hello_world").
	Name string `json:"name"`
	// Type is the scenario type (e.g. "hetu.hello_world", "redis.get").
	Type string `json:"type,omitempty"`
	// Calls counts every finished call, successful or not.
	Calls int64 `json:"calls"`
	// Errors counts calls that failed (transport error, server rejection, script error).
	Errors int64 `json:"errors"`
	// ErrorKinds counts errors by a short kind string, bounded to MaxDistinctValues entries
	// (the rest go to OtherValue).
	ErrorKinds map[string]int64 `json:"errorKinds,omitempty"`
	// FirstStart is the wall-clock start of the first call.
	FirstStart time.Time `json:"firstStart"`
	// LastEnd is the wall-clock end of the last call.
	LastEnd time.Time `json:"lastEnd"`
	// Latency is the histogram of call durations of all calls (errors included, as ya does).
	Latency Histogram `json:"latency"`
	// ReturnValues counts str(return value) per successful call (so the counts add up to
	// Calls - Errors), bounded to MaxDistinctValues entries; values beyond that are counted
	// under OtherValue.
	ReturnValues map[string]int64 `json:"returnValues,omitempty"`
	// Starts counts call starts per BucketMs interval of wall-clock time. It is what the seeds'
	// CPS trimming (drop the first and last 10 % of samples by start time) and the per-minute
	// counts are computed from, in memory proportional to the run length, not the call count.
	Starts Timeline `json:"starts"`
	// BytesSent counts payload bytes written to the target.
	BytesSent int64 `json:"bytesSent,omitempty"`
	// BytesReceived counts payload bytes read from the target.
	BytesReceived int64 `json:"bytesReceived,omitempty"`
	// VUs lists, for each runner that ran the scenario, how many virtual users recorded calls
	// in it (one entry in a runner's document; a merge concatenates them, sorted).
	VUs []int64 `json:"vus,omitempty"`
	// Command names the target command(s) the scenario sends, lower case, comma-separated
	// (e.g. "get", "hgetall,hset"): what ServerCalls is compared with.
	Command string `json:"command,omitempty"`
	// BodySize is the payload size in bytes the scenario was configured with (0: none or unknown).
	BodySize int64 `json:"bodySize,omitempty"`
	// ServiceTime is, for an open-model scenario (an arrival rate instead of a closed loop),
	// the histogram of each call's service time (actually sent → reply); Latency then holds
	// the coordinated-omission corrected latency (intended start → reply), while Starts counts
	// the actual sends. Absent (nil) for closed-model scenarios. See open.go.
	ServiceTime *Histogram `json:"serviceTime,omitempty"`
	// Dropped counts the calls an open-model scenario was due to make that no virtual user
	// could start before the scenario (or its search step) ended.
	Dropped int64 `json:"dropped,omitempty"`
	// TargetRate is an open-model scenario's intended rate in calls per second (summed over
	// runners; the mean rate of a ramping scenario).
	TargetRate float64 `json:"targetRate,omitempty"`
	// SearchStop says a saturation search ended early: the first search step after which a
	// runner stopped because its steps broke the stop rule (merged: the earliest runner's), and why.
	SearchStop *SearchStop `json:"searchStop,omitempty"`
	// Operations break the calls down by operation (e.g. YCSB read, update, insert): each is
	// a scenario of its own (Name is the operation) without Operations, ServerCalls, VUs,
	// Command or BodySize. Every call in an operation is also counted in the scenario.
	Operations []Scenario `json:"operations,omitempty"`
	// ServerCalls counts, by lower-case command name, the calls the target itself reported
	// between the scenario's start and end (Redis INFO commandstats delta), bounded to
	// MaxDistinctValues entries like ReturnValues.
	ServerCalls map[string]int64 `json:"serverCalls,omitempty"`
	// FaultSeconds are per-second figures of the calls that completed in the seconds around
	// the run's faults (only those seconds, see seconds.go), in time order; absent without faults.
	FaultSeconds []Second `json:"faultSeconds,omitempty"`
	// LatencyTimeline is the latency per wall-clock interval of call starts (see
	// latencytime.go); absent from operations, from documents of older runners and when Fit
	// dropped it to keep the document within budget.
	LatencyTimeline *LatencyTimeline `json:"latencyTimeline,omitempty"`
}

// MaxOperations bounds Scenario.Operations.
const MaxOperations = 16

// MaxVUEntries bounds Scenario.VUs (one entry per runner).
const MaxVUEntries = 4096

// Histogram is a sparse HDR histogram of durations in microseconds, 3 significant digits,
// trackable range [1 µs, 1 h]. Buckets holds [value, count] pairs in ascending value order,
// where value is the lowest value equivalent to the bucket; only non-zero buckets are listed.
// Histograms with the same parameters merge exactly by adding counts.
type Histogram struct {
	// Unit is always "us".
	Unit string `json:"unit"`
	// SignificantFigures is the HDR precision: 3, or 2 once reduced to fit a size budget (Fit).
	SignificantFigures int `json:"sigFigs"`
	// Min is the exact smallest value recorded (µs), not a bucket bound.
	Min int64 `json:"min"`
	// Max is the exact largest value recorded (µs), not a bucket bound.
	Max int64 `json:"max"`
	// Sum is the exact sum of recorded values (µs), for an exact mean.
	Sum int64 `json:"sum"`
	// SumSquares is the sum of squared values (µs²) as a float, for the standard deviation.
	SumSquares float64 `json:"sumSquares"`
	// Buckets are the non-zero [value, count] pairs.
	Buckets [][2]int64 `json:"buckets"`
}

// Timeline counts events per fixed wall-clock interval.
type Timeline struct {
	// StartUnixMs is the wall-clock start of bucket 0, a multiple of BucketMs.
	StartUnixMs int64 `json:"startUnixMs"`
	// BucketMs is the bucket width in milliseconds (1000 unless stated otherwise).
	BucketMs int64 `json:"bucketMs"`
	// Counts are the events per bucket.
	Counts []int64 `json:"counts"`
}

// MaxDistinctValues bounds ReturnValues and ErrorKinds so a document stays small whatever
// the scenario returns.
const MaxDistinctValues = 64

// OtherValue is the key under which values beyond MaxDistinctValues are counted.
const OtherValue = "(other)"

// MaxValueLength bounds the length in bytes of a return value or error kind key; the Recorder
// cuts longer strings (on a UTF-8 boundary) before counting them.
const MaxValueLength = 128
