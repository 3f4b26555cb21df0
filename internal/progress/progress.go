// Package progress is the small live-progress document a runner publishes in its state ConfigMap
// (key progress.json) while the load runs, and the manager's bounded decode and merge of it, so
// abortOnFail thresholds can be judged approximately before collection. Pure: no I/O.
package progress

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	benchv1 "github.com/benchrun/benchrun/api/v1alpha1"
)

// Key is the state ConfigMap key a runner writes its progress under.
const Key = "progress.json"

// MaxBytes caps a progress document; larger entries are refused before decoding.
const MaxBytes = 64 << 10

// MaxScenarios caps the scenarios one document may carry.
const MaxScenarios = 256

// Scenario is one scenario's live figures on one runner.
type Scenario struct {
	// Name is the scenario name.
	Name string `json:"name"`
	// Calls counted so far.
	Calls int64 `json:"calls"`
	// Errors counted so far.
	Errors int64 `json:"errors,omitempty"`
	// ElapsedSeconds since this runner's load started.
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	// LatencyMs holds approximate latency figures so far.
	LatencyMs benchv1.LatencyMs `json:"latencyMs"`
}

// Doc is one runner's progress document.
type Doc struct {
	// Scenarios are the per scenario figures.
	Scenarios []Scenario `json:"scenarios"`
}

// Encode marshals d, refusing a document over MaxBytes.
func Encode(d Doc) ([]byte, error) {
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
// count, and non-finite or negative figures refused.
func Decode(s string) (Doc, error) {
	var d Doc
	if len(s) > MaxBytes {
		return d, fmt.Errorf("progress document is %d bytes, over the %d byte cap", len(s), MaxBytes)
	}
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return Doc{}, fmt.Errorf("progress document: %w", err)
	}
	if len(d.Scenarios) > MaxScenarios {
		return Doc{}, fmt.Errorf("progress document has %d scenarios, over %d", len(d.Scenarios), MaxScenarios)
	}
	for _, sc := range d.Scenarios {
		if sc.Name == "" || sc.Calls < 0 || sc.Errors < 0 || !finite(sc.ElapsedSeconds) || sc.ElapsedSeconds < 0 {
			return Doc{}, errors.New("progress document has an invalid scenario entry")
		}
		l := sc.LatencyMs
		for _, v := range []float64{l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max} {
			if !finite(v) || v < 0 {
				return Doc{}, errors.New("progress document has an invalid latency figure")
			}
		}
	}
	return d, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Merge sums calls and errors per scenario over runners; CPS is summed per runner
// (calls/elapsed); mean is call-weighted; percentiles and max take the largest runner figure
// (an upper bound, conservative for latency thresholds). Results are sorted by name.
func Merge(docs []Doc) []benchv1.ScenarioResult {
	by := map[string]*benchv1.ScenarioResult{}
	for _, d := range docs {
		for _, sc := range d.Scenarios {
			r := by[sc.Name]
			if r == nil {
				r = &benchv1.ScenarioResult{Name: sc.Name}
				by[sc.Name] = r
			}
			if sc.ElapsedSeconds > 0 {
				r.CPS += float64(sc.Calls) / sc.ElapsedSeconds
			}
			if tot := r.Calls + sc.Calls; tot > 0 {
				r.LatencyMs.Mean = (r.LatencyMs.Mean*float64(r.Calls) + sc.LatencyMs.Mean*float64(sc.Calls)) / float64(tot)
			}
			r.Calls += sc.Calls
			r.Errors += sc.Errors
			r.LatencyMs.P50 = math.Max(r.LatencyMs.P50, sc.LatencyMs.P50)
			r.LatencyMs.P90 = math.Max(r.LatencyMs.P90, sc.LatencyMs.P90)
			r.LatencyMs.P99 = math.Max(r.LatencyMs.P99, sc.LatencyMs.P99)
			r.LatencyMs.P999 = math.Max(r.LatencyMs.P999, sc.LatencyMs.P999)
			r.LatencyMs.Max = math.Max(r.LatencyMs.Max, sc.LatencyMs.Max)
		}
	}
	out := make([]benchv1.ScenarioResult, 0, len(by))
	for _, r := range by {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
