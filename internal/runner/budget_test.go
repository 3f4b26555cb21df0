package runner

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/results/resultstest"
)

// TestResultBudget measures the stored (gzip) size of one runner's document for the largest
// specs the CRD accepts (32 scenarios) at several scenario durations, and checks that the
// largest stays well under what a runner may store (maxResultBytes): at most half of it, and
// under MaxResultBytes once decompressed. The worst case is a duration just below a
// coarsening step (48 h: 2,880 one-minute buckets per scenario). The figures are the budget
// written in internal/results/SCHEMA.md.
func TestResultBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds documents of 32 scenarios × up to a week (a few seconds)")
	}
	for _, d := range []time.Duration{time.Hour, 24 * time.Hour, 48 * time.Hour, 168 * time.Hour} {
		spec := resultstest.Spec{Runner: "r", Scenarios: 32, Duration: d,
			CallsPerMinute: 600_000, Samples: 200_000, Seed: 1, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), LatencyTimelines: true}
		doc, err := resultstest.Document(spec)
		if err != nil {
			t.Fatal(err)
		}
		var raw bytes.Buffer
		if err := results.Encode(&raw, doc); err != nil {
			t.Fatal(err)
		}
		full, err := EncodeResult(raw.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		orig, err := results.Decode(bytes.NewReader(raw.Bytes())) // Fit coarsens doc in place
		if err != nil {
			t.Fatal(err)
		}
		fitted, _, err := results.Fit(doc, results.StoredBudget)
		if err != nil {
			t.Fatal(err)
		}
		gz, err := EncodeResult(fitted)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeResult(&corev1.ConfigMap{BinaryData: map[string][]byte{KeyResult: gz}})
		if err != nil {
			t.Fatal(err)
		}
		s := back.Scenarios[0]
		kept, width, intervals := 0, int64(0), 0
		for _, sc := range back.Scenarios {
			if lt := sc.LatencyTimeline; lt != nil {
				kept, width, intervals = kept+1, lt.BucketMs, len(lt.Intervals)
			}
		}
		lt0 := orig.Scenarios[0].LatencyTimeline
		t.Logf("32 scenarios × %v: latency timelines of %d × %v; stored: %d of 32 kept (%d × %v)", d, len(lt0.Intervals),
			time.Duration(lt0.BucketMs)*time.Millisecond, kept, intervals, time.Duration(width)*time.Millisecond)
		t.Logf("32 scenarios × %v: %s gzip at full precision (%d histogram buckets, timeline of %d × %v); stored %s "+
			"(%.0f B per scenario-hour: sigFigs %d, timeline of %d × %v), %s JSON", d, kib(len(full)), len(orig.Scenarios[0].Latency.Buckets),
			len(orig.Scenarios[0].Starts.Counts), time.Duration(orig.Scenarios[0].Starts.BucketMs)*time.Millisecond,
			kib(len(gz)), float64(len(gz))/32/d.Hours(), s.Latency.SignificantFigures, len(s.Starts.Counts),
			time.Duration(s.Starts.BucketMs)*time.Millisecond, kib(len(fitted)))
		if len(gz) > results.StoredBudget || len(gz) > maxResultBytes/2 || len(fitted) > MaxResultBytes {
			t.Errorf("32 × %v: %s gzip, %s JSON: want at most %s gzip and %s JSON", d, kib(len(gz)), kib(len(fitted)),
				kib(min(results.StoredBudget, maxResultBytes/2)), kib(MaxResultBytes))
		}
		for i := range orig.Scenarios {
			if a, b := orig.Scenarios[i], back.Scenarios[i]; a.Calls != b.Calls || a.Latency.Sum != b.Latency.Sum ||
				a.Starts.BucketMs != b.Starts.BucketMs {
				t.Errorf("32 × %v: scenario %d changed by fitting: calls %d → %d, timeline %d → %d ms", d, i, a.Calls, b.Calls,
					a.Starts.BucketMs, b.Starts.BucketMs)
			}
		}
	}
}

// kib formats a byte count in KiB.
func kib(n int) string { return fmt.Sprintf("%d KiB", n>>10) }
