// Package progress is the small live-progress document a runner publishes while the load
// runs (k6ext/bench writes it to a file; the runner agent copies it into its state ConfigMap
// under Key; `benchrun run` reads the files), the manager's bounded decode and exact merge of
// it over runners, and the live evaluation of abortOnFail thresholds on the merged figures.
// Latencies are a coarse histogram over livemetrics.LatencyBounds (10 buckets per decade), so
// documents merge exactly and percentiles are approximate (within one bucket, 25 %). Pure: no I/O.
package progress

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	benchv1 "github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/livemetrics"
)

// Key is the state ConfigMap key a runner writes its progress under.
const Key = "progress.json"

// EnvFile names the file benchrun's k6 output rewrites the progress document in while the
// load runs; unset, it writes none.
const EnvFile = "BENCHRUN_PROGRESS_FILE"

// EnvInterval is how often the k6 output rewrites it (Go duration, default 2s, at least 100ms).
const EnvInterval = "BENCHRUN_PROGRESS_INTERVAL"

// MaxBytes caps a progress document; larger entries are refused before decoding.
const MaxBytes = 64 << 10

// MaxScenarios caps the scenarios one document may carry.
const MaxScenarios = 256

// maxCount bounds every count a document may carry, so sums over 1,024 runners cannot overflow.
const maxCount = 1 << 50

// maxElapsed bounds a scenario's elapsed seconds (about 115 days).
const maxElapsed = 1e7

// NumBuckets is the number of latency buckets: one per livemetrics.LatencyBounds plus overflow.
var NumBuckets = len(livemetrics.LatencyBounds) + 1

// Scenario is one scenario's live figures on one runner.
type Scenario struct {
	// Name is the scenario name.
	Name string `json:"name"`
	// Calls counted so far.
	Calls int64 `json:"calls"`
	// Errors counted so far.
	Errors int64 `json:"errors,omitempty"`
	// ElapsedSeconds is how long the scenario has made calls on this runner so far.
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	// SumMicros is the sum of the latencies in µs.
	SumMicros int64 `json:"sumMicros,omitempty"`
	// Buckets are call counts per latency bucket (livemetrics.LatencyBounds, then overflow);
	// trailing empty buckets may be left out.
	Buckets []int64 `json:"buckets,omitempty"`
}

// Doc is one runner's progress document.
type Doc struct {
	// Scenarios are the per scenario figures.
	Scenarios []Scenario `json:"scenarios"`
	// RemoteWrite is the live-metrics pusher's counts (absent without remote write).
	RemoteWrite *RemoteWrite `json:"remoteWrite,omitempty"`
}

// Encode marshals d, refusing a document over MaxBytes.
func Encode(d Doc) ([]byte, error) {
	for i := range d.Scenarios {
		b := d.Scenarios[i].Buckets
		for len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		d.Scenarios[i].Buckets = b
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("progress document is %d bytes, over the %d byte cap", len(b), MaxBytes)
	}
	return b, nil
}

// Decode reads a progress document defensively: size cap before decoding, bounded scenario
// and bucket counts, and non-finite, negative or absurd figures refused.
func Decode(s string) (Doc, error) {
	var d Doc
	if len(s) > MaxBytes {
		return d, fmt.Errorf("progress document is %d bytes, over the %d byte cap", len(s), MaxBytes)
	}
	// Each scenario is an object: counted before decoding, 64 KiB of "{}," cannot become
	// 20,000 decoded entries.
	if n := strings.Count(s, "{"); n > MaxScenarios+1 {
		return d, fmt.Errorf("progress document has %d objects, over %d scenarios", n, MaxScenarios)
	}
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return Doc{}, fmt.Errorf("progress document: %w", err)
	}
	if len(d.Scenarios) > MaxScenarios {
		return Doc{}, fmt.Errorf("progress document has %d scenarios, over %d", len(d.Scenarios), MaxScenarios)
	}
	for _, sc := range d.Scenarios {
		if err := checkScenario(sc); err != nil {
			return Doc{}, err
		}
	}
	if err := checkRemoteWrite(d.RemoteWrite); err != nil {
		return Doc{}, err
	}
	return d, nil
}

// checkScenario refuses an entry no honest runner writes.
func checkScenario(sc Scenario) error {
	if sc.Name == "" || len(sc.Name) > 253 || !count(sc.Calls) || !count(sc.Errors) || !count(sc.SumMicros) {
		return errors.New("progress document has an invalid scenario entry")
	}
	if math.IsNaN(sc.ElapsedSeconds) || sc.ElapsedSeconds < 0 || sc.ElapsedSeconds > maxElapsed {
		return errors.New("progress document has an invalid elapsed time")
	}
	if len(sc.Buckets) > NumBuckets {
		return fmt.Errorf("progress document has %d latency buckets, over %d", len(sc.Buckets), NumBuckets)
	}
	for _, n := range sc.Buckets {
		if !count(n) {
			return errors.New("progress document has an invalid latency bucket")
		}
	}
	return nil
}

// count tells whether n is a count a document may carry.
func count(n int64) bool { return n >= 0 && n <= maxCount }

// Merge sums calls, errors and latency buckets per scenario over runners (exact); CPS is the
// sum of each runner's calls/elapsed; mean and percentiles come from the merged buckets
// (percentiles interpolated within a bucket, max the upper bound of the highest non-empty
// bucket). Results are sorted by name.
func Merge(docs []Doc) []benchv1.ScenarioResult {
	m := NewMerger(nil)
	for _, d := range docs {
		m.Add(d)
	}
	return m.Results()
}

// Merger merges runner documents one at a time, keeping one accumulator per scenario: memory
// is bounded by the scenarios, whatever the number of runners.
type Merger struct {
	allowed map[string]bool
	by      map[string]*acc
	// Skipped counts scenario entries dropped because their name is not allowed.
	Skipped int
}

// acc accumulates one scenario.
type acc struct {
	r       benchv1.ScenarioResult
	sum     int64
	buckets []int64
}

// NewMerger returns a merger accepting only the scenario names in allowed (any name, up to
// MaxScenarios, when allowed is nil).
func NewMerger(allowed map[string]bool) *Merger {
	return &Merger{allowed: allowed, by: map[string]*acc{}}
}

// Add merges one runner's document.
func (m *Merger) Add(d Doc) {
	for _, sc := range d.Scenarios {
		a := m.by[sc.Name]
		if a == nil {
			if (m.allowed != nil && !m.allowed[sc.Name]) || (m.allowed == nil && len(m.by) >= MaxScenarios) {
				m.Skipped++
				continue
			}
			a = &acc{r: benchv1.ScenarioResult{Name: sc.Name}, buckets: make([]int64, NumBuckets)}
			m.by[sc.Name] = a
		}
		if sc.ElapsedSeconds > 0 {
			a.r.CPS += float64(sc.Calls) / sc.ElapsedSeconds
		}
		a.r.Calls += sc.Calls
		a.r.Errors += sc.Errors
		a.sum += sc.SumMicros
		for i, n := range sc.Buckets[:min(len(sc.Buckets), NumBuckets)] {
			a.buckets[i] += n
		}
	}
}

// Results are the merged figures per scenario, sorted by name.
func (m *Merger) Results() []benchv1.ScenarioResult {
	out := make([]benchv1.ScenarioResult, 0, len(m.by))
	for _, a := range m.by {
		r := a.r
		r.LatencyMs = latency(a.buckets, a.sum)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// latency computes the figures of merged buckets (ms).
func latency(buckets []int64, sumMicros int64) benchv1.LatencyMs {
	var total int64
	for _, n := range buckets {
		total += n
	}
	if total == 0 {
		return benchv1.LatencyMs{}
	}
	l := benchv1.LatencyMs{Mean: float64(sumMicros) / float64(total) / 1000,
		P50: quantile(buckets, total, 0.5), P90: quantile(buckets, total, 0.9), P99: quantile(buckets, total, 0.99),
		P999: quantile(buckets, total, 0.999)}
	for i := len(buckets) - 1; i >= 0; i-- {
		if buckets[i] > 0 {
			_, hi := bounds(i)
			l.Max = hi
			break
		}
	}
	l.Median = l.P50
	return l
}

// bounds are bucket i's lower and upper bounds in ms (the overflow bucket: both the last bound).
func bounds(i int) (float64, float64) {
	lb := livemetrics.LatencyBounds
	lo := 0.0
	if i > 0 {
		lo = lb[min(i-1, len(lb)-1)] * 1000
	}
	if i >= len(lb) {
		return lo, lo
	}
	return lo, lb[i] * 1000
}

// quantile interpolates the q-quantile (ms) linearly within its bucket.
func quantile(buckets []int64, total int64, q float64) float64 {
	rank := q * float64(total)
	var cum float64
	for i, n := range buckets {
		if n == 0 {
			continue
		}
		if cum+float64(n) >= rank {
			lo, hi := bounds(i)
			return lo + (hi-lo)*(rank-cum)/float64(n)
		}
		cum += float64(n)
	}
	_, hi := bounds(len(buckets) - 1)
	return hi
}
