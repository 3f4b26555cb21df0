package bench

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/livemetrics"
)

// VUs record and publish snapshots while the pusher starts epochs and merges live documents
// (run with -race): live totals only grow, never exceed the final document, the VUs of the
// epoch are counted, and retiring a recorder loses nothing.
func TestLiveSnapshotsConcurrent(t *testing.T) {
	g := newRegistry()
	g.epoch.Store(1)
	const vus, calls = 8, 20_000
	var wg sync.WaitGroup
	for v := range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := g.add("get", "redis.get")
			var seen int64
			for i := range calls {
				if e := g.epoch.Load(); e != seen { // what VURecorders.Current does
					seen = e
					g.publish(r, e)
				}
				kind := ""
				if i%100 == v {
					kind = "timeout"
				}
				r.Record(time.Now(), time.Duration(10+i%500)*time.Microsecond, "OK", kind)
			}
			if v%2 == 0 {
				g.retire(r)
			} else {
				g.publish(r, g.epoch.Load()) // its last call came after one more epoch
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var last int64
	for pushes := 0; ; pushes++ {
		since := g.newEpoch()
		for g.unpublished(since+1) > 0 {
			select {
			case <-done:
			case <-time.After(time.Millisecond):
				continue
			}
			break
		}
		stats, _ := g.liveStatsByScenario(since)
		if st := stats["get"]; st != nil {
			if c := st.calls; c < last || c > vus*calls {
				t.Fatalf("live calls %d after %d (max %d)", c, last, vus*calls)
			} else {
				last = c
			}
		}
		select {
		case <-done:
			final, err := g.document("r-0")
			if err != nil || final.Scenarios[0].Calls != vus*calls || final.Scenarios[0].Errors != vus*calls/100 {
				t.Fatalf("final %+v %v", final.Scenarios, err)
			}
			// every recorder retired or published after its last call: the live figures are the document's
			stats, _ := g.liveStatsByScenario(0)
			for _, r := range final.Scenarios[:1] {
				want := statsOf(&r)
				if got := stats["get"]; got.calls != want.calls || got.errors != want.errors || got.sumMicros != want.sumMicros ||
					!slices.Equal(got.buckets, want.buckets) || got.kinds["timeout"] != want.kinds["timeout"] {
					t.Fatalf("live %+v, document %+v", got, want)
				}
			}
			series := liveSeries(livemetrics.Config{Run: "r"}, stats, map[string]int{"get": vus})
			if len(series) < 60 {
				t.Fatalf("%d series", len(series))
			}
			t.Logf("%d live pushes, last live total %d of %d", pushes, last, vus*calls)
			return
		default:
		}
	}
}

func TestErrorKindsBounded(t *testing.T) {
	m := map[string]int64{"": 3}
	for i := range 40 {
		m[string(rune('a'+i%26))+string(rune('a'+i/26))] = int64(i + 1)
	}
	got := errorKinds(m)
	var total int64
	for _, n := range got {
		total += n
	}
	if len(got) != livemetrics.MaxErrorKinds+1 || got["other"] == 0 || total != 3+40*41/2 {
		t.Fatalf("%d kinds, other %d, total %d", len(got), got["other"], total)
	}
}
