package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
)

// TestProgress draws the live line from two fake k6 REST APIs whose benchrun_calls grow by
// 1000 per poll each.
func TestProgress(t *testing.T) {
	var polls atomic.Int64
	api := func() *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := polls.Add(1)
			if !strings.HasSuffix(r.URL.Path, "/benchrun_calls") {
				http.NotFound(w, r)
				return
			}
			_, _ = fmt.Fprintf(w, `{"data":{"attributes":{"sample":{"count":%d}}}}`, n*1000)
		}))
	}
	a, b := api(), api()
	defer a.Close()
	defer b.Close()
	spec := plan.Spec{Scenarios: []plan.Scenario{{Name: "ping", Type: "redis.ping", DurationMs: 20000}}}
	runners := []*runner{{api: strings.TrimPrefix(a.URL, "http://")}, {api: strings.TrimPrefix(b.URL, "http://")}}
	var out syncBuffer
	p := newProgress(&out, spec, runners)
	go p.run()
	time.Sleep(3500 * time.Millisecond)
	p.stop()
	got := out.String()
	if !strings.Contains(got, "ping") || !strings.Contains(got, "[1/1]") || !strings.Contains(got, "calls/s") ||
		!strings.Contains(got, "/ 20s") || !strings.Contains(got, "left)") {
		t.Errorf("progress output:\n%q", got)
	}
}

func TestBarAndThousands(t *testing.T) {
	if got := bar(5*time.Second, 10*time.Second, 4); got != "▕██░░▏" {
		t.Errorf("bar = %q", got)
	}
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567", -5: "0"} {
		if got := results.FormatThousands(max(v, 0), 0); got != want {
			t.Errorf("FormatThousands(%v) = %q, want %q", v, got, want)
		}
	}
}
