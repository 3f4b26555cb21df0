package livemetrics

import (
	"math"
	"slices"
	"strconv"

	prompb "buf.build/gen/go/prometheus/prometheus/protocolbuffers/go"
	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/proto"
)

// Metric names a runner pushes. Every series carries the labels benchmarkrun, namespace,
// runner and target; the per-scenario ones also scenario.
const (
	// MetricCalls counts finished calls per scenario.
	MetricCalls = "benchrun_calls_total"
	// MetricErrors counts failed calls per scenario.
	MetricErrors = "benchrun_errors_total"
	// MetricErrorsByKind counts failed calls per scenario and error kind (label kind).
	MetricErrorsByKind = "benchrun_errors_by_kind_total"
	// MetricLatency is the per-call latency, a classic histogram in seconds
	// (_bucket{le}, _sum, _count) with LatencyBounds: histogram_quantile over
	// sum by (le) (rate(...)) gives percentiles across runners.
	MetricLatency = "benchrun_latency_seconds"
	// MetricVUs is the number of VUs that made calls in the scenario during the last interval.
	MetricVUs = "benchrun_vus"
	// MetricRunnerCPU is the runner process's CPU time (user + system) in seconds.
	MetricRunnerCPU = "benchrun_runner_cpu_seconds_total"
	// MetricRunnerMemory is the runner process's resident memory in bytes.
	MetricRunnerMemory = "benchrun_runner_memory_bytes"
)

// MaxErrorKinds bounds the kind label values per scenario and push; the rest count as "other".
const MaxErrorKinds = 16

// maxLabelValue cuts label values a script can choose (scenario names, error kinds).
const maxLabelValue = 64

// LatencyBounds are the upper bounds (seconds) of the latency buckets: 10 per decade
// (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8) from 10 µs to 10 s, so a quantile is resolved to
// within 25 % (the bucket width), usually much better after interpolation.
var LatencyBounds = func() []float64 {
	mantissas := []float64{1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8}
	var b []float64
	for e := -5; e < 1; e++ {
		for _, m := range mantissas {
			b = append(b, m*math.Pow10(e))
		}
	}
	return append(b, 10)
}()

// latencyBoundsMicros are LatencyBounds in whole microseconds (rounded), for bucketing.
var latencyBoundsMicros = func() []int64 {
	b := make([]int64, len(LatencyBounds))
	for i, s := range LatencyBounds {
		b[i] = int64(math.Round(s * 1e6))
	}
	return b
}()

// Label is one name="value" pair.
type Label struct {
	// Name is the label name.
	Name string
	// Value is the label value; empty values are not sent.
	Value string
}

// Series is one sample of one series.
type Series struct {
	// Name is the metric name.
	Name string
	// Labels are the labels besides __name__.
	Labels []Label
	// Value is the sample value.
	Value float64
}

// LatencyHistogram is the latency histogram series of one scenario from HDR buckets
// ([value µs, count], ascending) and their sum (µs).
func LatencyHistogram(labels []Label, hdr [][2]int64, sumMicros int64) []Series {
	counts := NewBucketCounts()
	AddHDR(counts, hdr)
	return HistogramSeries(labels, counts, sumMicros)
}

// NewBucketCounts returns zero counts per latency bucket (len(LatencyBounds)+1, the last
// one above every bound), not cumulative.
func NewBucketCounts() []int64 { return make([]int64, len(latencyBoundsMicros)+1) }

// AddHDR adds HDR buckets ([value µs, count]) to counts from NewBucketCounts.
func AddHDR(counts []int64, hdr [][2]int64) {
	for _, b := range hdr {
		i, _ := slices.BinarySearch(latencyBoundsMicros, b[0])
		counts[i] += b[1]
	}
}

// HistogramSeries is the classic histogram (_bucket{le} cumulative, _sum in seconds, _count)
// of per-bucket counts from NewBucketCounts and their sum in µs.
func HistogramSeries(labels []Label, counts []int64, sumMicros int64) []Series {
	out := make([]Series, 0, len(counts)+2)
	var cum int64
	for i, n := range counts {
		cum += n
		le := "+Inf"
		if i < len(LatencyBounds) {
			le = strconv.FormatFloat(LatencyBounds[i], 'g', -1, 64)
		}
		out = append(out, Series{Name: MetricLatency + "_bucket", Labels: with(labels, "le", le), Value: float64(cum)})
	}
	return append(out,
		Series{Name: MetricLatency + "_sum", Labels: labels, Value: float64(sumMicros) / 1e6},
		Series{Name: MetricLatency + "_count", Labels: labels, Value: float64(cum)})
}

// with returns labels plus name=value (a new slice).
func with(labels []Label, name, value string) []Label {
	return append(slices.Clip(labels), Label{name, value})
}

// With returns labels plus name=value, the value cut to a bounded length.
func With(labels []Label, name, value string) []Label {
	return with(labels, name, cut(value))
}

// cut shortens a label value a script chose to maxLabelValue bytes (UTF-8 safe).
func cut(s string) string {
	if len(s) <= maxLabelValue {
		return s
	}
	i := maxLabelValue
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}

// Encode returns the snappy-compressed protobuf WriteRequest of series, all at timestamp
// tsMs (Unix ms). Labels are sorted by name and empty values dropped, as remote write wants.
func Encode(tsMs int64, series []Series) ([]byte, error) {
	req := &prompb.WriteRequest{Timeseries: make([]*prompb.TimeSeries, 0, len(series))}
	for _, s := range series {
		ls := make([]*prompb.Label, 0, len(s.Labels)+1)
		ls = append(ls, &prompb.Label{Name: "__name__", Value: s.Name})
		for _, l := range s.Labels {
			if l.Value != "" {
				ls = append(ls, &prompb.Label{Name: l.Name, Value: l.Value})
			}
		}
		slices.SortFunc(ls, func(a, b *prompb.Label) int {
			switch {
			case a.Name < b.Name:
				return -1
			case a.Name > b.Name:
				return 1
			}
			return 0
		})
		req.Timeseries = append(req.Timeseries, &prompb.TimeSeries{Labels: ls,
			Samples: []*prompb.Sample{{Value: s.Value, Timestamp: tsMs}}})
	}
	raw, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	return snappy.Encode(nil, raw), nil
}
