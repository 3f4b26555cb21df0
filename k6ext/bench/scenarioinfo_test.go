package bench

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestRenderTemplateData: __data__ expands to dataSize bytes at known offsets, next to
// __rand_int__ holes, in the redis-benchmark/memtier custom command style.
func TestRenderTemplateData(t *testing.T) {
	b, holes, data := renderTemplateData([]string{"HSET", "key:__rand_int__", "f", "a__data__b__data__"}, true, 4)
	if len(holes) != 1 || len(data) != 2 {
		t.Fatalf("holes %v data %v", holes, data)
	}
	putDigits(b[holes[0]:holes[0]+12], 7)
	copy(b[data[0]:], "1234")
	copy(b[data[1]:], "5678")
	if want := "*4\r\n$4\r\nHSET\r\n$16\r\nkey:000000000007\r\n$1\r\nf\r\n$10\r\na1234b5678\r\n"; string(b) != want {
		t.Fatalf("got %q want %q", b, want)
	}
}

// TestTakeIsExact: VUs taking batches from a shared budget get exactly the budget in total.
func TestTakeIsExact(t *testing.T) {
	var b atomic.Int64
	b.Store(100003)
	var got atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				n := take(&b, 100)
				if n == 0 {
					return
				}
				got.Add(n)
			}
		})
	}
	wg.Wait()
	if got.Load() != 100003 || b.Load() != 0 {
		t.Fatalf("took %d, left %d", got.Load(), b.Load())
	}
}

// TestParseCommandStats reads INFO commandstats as Redis 7 writes it.
func TestParseCommandStats(t *testing.T) {
	m := parseCommandStats("# Commandstats\r\ncmdstat_get:calls=10,usec=5,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_client|list:calls=2,usec=1\r\ncmdstat_HSET:calls=3\r\nbogus\r\n")
	if len(m) != 3 || m["get"] != 10 || m["client|list"] != 2 || m["hset"] != 3 {
		t.Fatalf("%v", m)
	}
	if d := serverDelta(map[string]int64{"get": 4}, map[string]int64{"get": 10, "set": 0}); len(d) != 1 || d["get"] != 6 {
		t.Fatalf("delta %v", d)
	}
}
