package bench

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/results"
)

// TestRetiredSnapshotsCompacted: 300 VUs retire recorders of two scenarios (each call with its
// latency timeline): the registry keeps a few merged snapshots per scenario instead of one per
// VU, and the runner document is the one merging every snapshot gives (SumSquares, a float
// sum, to its last bits' rounding).
func TestRetiredSnapshotsCompacted(t *testing.T) {
	g := newRegistry()
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Unix(1_800_000_000, 0)
	var all []results.Scenario
	for vu := range 300 {
		name := []string{"get", "set"}[vu%2]
		r := g.add(name, "redis."+name)
		for i := range 200 + rng.IntN(200) {
			kind := ""
			if rng.IntN(50) == 0 {
				kind = "timeout"
			}
			start := t0.Add(time.Duration(vu)*time.Millisecond + time.Duration(i)*time.Duration(1+rng.IntN(300))*time.Millisecond)
			r.Record(start, time.Duration(20+rng.ExpFloat64()*400)*time.Microsecond, "OK", kind)
		}
		all = append(all, r.Scenario())
		g.retire(r)
	}
	got, err := g.document("r-0")
	if err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	kept := len(g.done["get"]) + len(g.done["set"])
	g.mu.Unlock()
	if kept > 2*compactAt {
		t.Errorf("%d snapshots kept for 300 retired VUs", kept)
	}
	want, err := mergeScenarios("r-0", all)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Scenarios) != 2 || got.Scenarios[0].LatencyTimeline == nil {
		t.Fatalf("scenarios %d, latency timeline %v", len(got.Scenarios), got.Scenarios[0].LatencyTimeline != nil)
	}
	for i := range want.Scenarios {
		g, w := got.Scenarios[i].Latency.SumSquares, want.Scenarios[i].Latency.SumSquares
		if math.Abs(g-w) > 1e-9*math.Abs(w) {
			t.Errorf("%s: sumSquares %v, want %v", want.Scenarios[i].Name, g, w)
		}
		got.Scenarios[i].Latency.SumSquares = w
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("the compacted document differs from merging every snapshot:\n%.2000s\nwant\n%.2000s", gb, wb)
	}
	var each int
	for _, s := range all {
		b, _ := json.Marshal(s)
		each += len(b)
	}
	t.Logf("%d snapshots kept for 300 retired VUs (%d bytes of JSON for all 300); document %d bytes", kept, each, len(gb))
}
