package progress

import (
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/livemetrics"
)

// bucketsAt puts n calls in the bucket holding latency ms.
func bucketsAt(ms float64, n int64) []int64 {
	b := livemetrics.NewBucketCounts()
	livemetrics.AddHDR(b, [][2]int64{{int64(ms * 1000), n}})
	return b
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	d := Doc{Scenarios: []Scenario{{Name: "get", Calls: 100, Errors: 2, ElapsedSeconds: 10, SumMicros: 100_000, Buckets: bucketsAt(1, 100)}}}
	b, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(string(b))
	if err != nil || len(got.Scenarios) != 1 || got.Scenarios[0].Calls != 100 || len(got.Scenarios[0].Buckets) >= NumBuckets {
		t.Fatalf("round trip (trailing empty buckets cut): %+v %v", got, err)
	}
	if len(b) > 400 {
		t.Errorf("one scenario takes %d bytes", len(b))
	}
}

func TestDecodeRefusesBadInput(t *testing.T) {
	for name, s := range map[string]string{
		"oversized":   `{"scenarios":[` + strings.Repeat(" ", MaxBytes) + `]}`,
		"garbage":     "\x00not json",
		"negative":    `{"scenarios":[{"name":"a","calls":-1,"elapsedSeconds":1}]}`,
		"noname":      `{"scenarios":[{"calls":1,"elapsedSeconds":1}]}`,
		"badbucket":   `{"scenarios":[{"name":"a","calls":1,"elapsedSeconds":1,"buckets":[-2]}]}`,
		"hugecount":   `{"scenarios":[{"name":"a","calls":9000000000000000000,"elapsedSeconds":1}]}`,
		"manybuckets": `{"scenarios":[{"name":"a","calls":1,"elapsedSeconds":1,"buckets":[` + strings.Repeat("0,", NumBuckets) + `0]}]}`,
		"elapsed":     `{"scenarios":[{"name":"a","calls":1,"elapsedSeconds":1e300}]}`,
		"scenarios":   `{"scenarios":[` + strings.Repeat(`{"name":"a","calls":1,"elapsedSeconds":1},`, MaxScenarios) + `{"name":"a","calls":1,"elapsedSeconds":1}]}`,
	} {
		if _, err := Decode(s); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func TestMergeIsExactOverRunners(t *testing.T) {
	a := Doc{Scenarios: []Scenario{{Name: "get", Calls: 100, ElapsedSeconds: 10, SumMicros: 100 * 1000, Buckets: bucketsAt(1, 100)}}}
	b := Doc{Scenarios: []Scenario{{Name: "get", Calls: 300, Errors: 3, ElapsedSeconds: 10, SumMicros: 300 * 2000, Buckets: bucketsAt(2, 300)},
		{Name: "set", Calls: 10, ElapsedSeconds: 5, SumMicros: 10 * 50_000, Buckets: bucketsAt(50, 10)}}}
	m := Merge([]Doc{a, b})
	if len(m) != 2 || m[0].Name != "get" || m[1].Name != "set" {
		t.Fatalf("merge: %+v", m)
	}
	r := m[0]
	if r.Calls != 400 || r.Errors != 3 || r.CPS != 40 || r.LatencyMs.Mean != 1.75 {
		t.Fatalf("merge: %+v", r)
	}
	// 25 % of the calls at 1 ms, 75 % at 2 ms: p50 and p99 in the 2 ms bucket (1.5, 2], the max its bound.
	if l := r.LatencyMs; l.P50 <= 1.5 || l.P50 > 2 || l.P99 <= 1.5 || l.P99 > 2 || l.Max != 2 {
		t.Fatalf("latency: %+v", l)
	}
	if l := m[1].LatencyMs; l.P99 <= 40 || l.P99 > 50 || m[1].CPS != 2 {
		t.Fatalf("set: %+v", m[1])
	}
}

func TestMergeOverflowBucket(t *testing.T) {
	m := Merge([]Doc{{Scenarios: []Scenario{{Name: "slow", Calls: 1, ElapsedSeconds: 1, Buckets: bucketsAt(60_000, 1)}}}})
	if p := m[0].LatencyMs.P99; p != 10_000 || math.IsNaN(p) {
		t.Fatalf("a call over the last bound counts at the last bound: %+v", m[0].LatencyMs)
	}
}

func TestBroken(t *testing.T) {
	live := []benchv1.ScenarioResult{{Name: "get", Calls: 1000, CPS: 500, LatencyMs: benchv1.LatencyMs{P99: 3}},
		{Name: "later"}} // not started: no calls
	d := &metav1.Duration{Duration: 5 * time.Second}
	for _, c := range []struct {
		name  string
		ths   []benchv1.Threshold
		base  []benchv1.ScenarioResult
		since time.Duration
		want  bool
	}{
		{"held", []benchv1.Threshold{{Expr: "p99 < 5", AbortOnFail: true}}, nil, time.Minute, false},
		{"broken", []benchv1.Threshold{{Expr: "p99 < 2", AbortOnFail: true}}, nil, time.Minute, true},
		{"not abortOnFail", []benchv1.Threshold{{Expr: "p99 < 2"}}, nil, time.Minute, false},
		{"delay not passed", []benchv1.Threshold{{Expr: "p99 < 2", AbortOnFail: true, DelayAbortEval: d}}, nil, 4 * time.Second, false},
		{"delay passed", []benchv1.Threshold{{Expr: "p99 < 2", AbortOnFail: true, DelayAbortEval: d}}, nil, 5 * time.Second, true},
		{"scenario not started", []benchv1.Threshold{{Scenario: "later", Expr: "cps > 1", AbortOnFail: true}}, nil, time.Minute, false},
		{"unknown scenario", []benchv1.Threshold{{Scenario: "nope", Expr: "cps > 1", AbortOnFail: true}}, nil, time.Minute, false},
		{"relative held", []benchv1.Threshold{{Expr: "cps >= -5%", AbortOnFail: true}}, []benchv1.ScenarioResult{{Name: "get", CPS: 510}}, time.Minute, false},
		{"relative broken", []benchv1.Threshold{{Expr: "cps >= -5%", AbortOnFail: true}}, []benchv1.ScenarioResult{{Name: "get", CPS: 1000}}, time.Minute, true},
		{"relative without baseline", []benchv1.Threshold{{Expr: "cps >= -5%", AbortOnFail: true}}, nil, time.Minute, false},
	} {
		tr, got := Broken(c.ths, live, c.base, c.since)
		if got != c.want {
			t.Errorf("%s: broken=%v %+v", c.name, got, tr)
		}
		if got && (tr.Scenario != "get" || !strings.Contains(AbortMessage(tr, c.since), "observed")) {
			t.Errorf("%s: %+v %s", c.name, tr, AbortMessage(tr, c.since))
		}
	}
}

func TestPublishInterval(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 5 * time.Second, 100: 5 * time.Second, 1024: 51200 * time.Millisecond} {
		if got := PublishInterval(n); got != want {
			t.Errorf("%d runners: %s, want %s", n, got, want)
		}
	}
}

func TestMergerAllowsOnlyKnownScenarios(t *testing.T) {
	m := NewMerger(map[string]bool{"get": true})
	m.Add(Doc{Scenarios: []Scenario{{Name: "get", Calls: 1, ElapsedSeconds: 1}, {Name: "forged", Calls: 1 << 40, ElapsedSeconds: 1}}})
	if r := m.Results(); len(r) != 1 || r[0].Name != "get" || m.Skipped != 1 {
		t.Fatalf("results %+v skipped %d", r, m.Skipped)
	}
}

// TestDecodeManyEmptyScenarios: a 64 KiB progress document of empty scenarios is refused
// before it is decoded (it would have been ~21,000 entries).
func TestDecodeManyEmptyScenarios(t *testing.T) {
	s := `{"scenarios":[` + strings.Repeat("{},", 21000) + "{}]}"
	if len(s) > MaxBytes {
		s = s[:0] + `{"scenarios":[` + strings.Repeat("{},", (MaxBytes-20)/3) + "{}]}"
	}
	if _, err := Decode(s); err == nil || !strings.Contains(err.Error(), "objects, over 256 scenarios") {
		t.Fatalf("err = %v", err)
	}
}
