package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/workload"
)

var jsonUnmarshal = json.Unmarshal

// progress draws one live line per scenario on a terminal: elapsed/remaining time and the
// current calls/s, summed over the runners. Calls come from the benchrun_calls counter of
// scripts/k6/benchrun.js (iterations for custom scripts), read through each k6 process' REST
// API (--address) once a second. The clock starts when the first calls or iterations are
// counted (k6 runs setup() first).
type progress struct {
	w       io.Writer
	spec    plan.Spec
	runners []*runner
	client  *http.Client
	done    chan struct{}
	wg      sync.WaitGroup
}

func newProgress(w io.Writer, spec plan.Spec, runners []*runner) *progress {
	p := &progress{w: w, spec: spec, runners: runners, client: &http.Client{Timeout: 500 * time.Millisecond},
		done: make(chan struct{})}
	p.wg.Add(1)
	return p
}

// counter sums a k6 counter metric over the runners.
func (p *progress) counter(name string) float64 {
	var total float64
	for _, r := range p.runners {
		resp, err := p.client.Get("http://" + r.api + "/v1/metrics/" + name)
		if err != nil {
			continue
		}
		var m struct {
			Data struct {
				Attributes struct {
					Sample map[string]float64 `json:"sample"`
				} `json:"attributes"`
			} `json:"data"`
		}
		if resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&m) == nil {
			total += m.Data.Attributes.Sample["count"]
		}
		_ = resp.Body.Close()
	}
	return total
}

// rate tracks the per-second rate of a growing count.
type rate struct {
	last  float64
	lastT time.Time
	value float64
}

func (r *rate) update(count float64, now time.Time) {
	if dt := now.Sub(r.lastT).Seconds(); !r.lastT.IsZero() && dt > 0 {
		r.value = (count - r.last) / dt
	}
	r.last, r.lastT = count, now
}

func (p *progress) run() {
	defer p.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var start time.Time
	var calls, iters rate
	cur := -1
	for {
		select {
		case <-p.done:
			if cur >= 0 {
				_, _ = fmt.Fprintln(p.w)
			}
			return
		case <-tick.C:
		}
		now := time.Now()
		calls.update(p.counter("benchrun_calls"), now)
		iters.update(p.counter("iterations"), now)
		if start.IsZero() {
			if calls.last == 0 && iters.last == 0 {
				_, _ = fmt.Fprintf(p.w, "\r  preparing (k6 setup)...\x1b[K")
				continue
			}
			start = now.Add(-time.Second / 2) // the first scenario began since the last poll
		}
		elapsed := now.Sub(start)
		i := p.scenarioAt(elapsed)
		if i != cur {
			if cur >= 0 {
				_, _ = fmt.Fprintln(p.w)
			}
			cur = i
		}
		s := p.spec.Scenarios[i]
		// Custom scripts record calls themselves; k6 only knows their iterations.
		value, unit := calls.value, "calls/s"
		if d, _ := workload.Of(s.Type); d.Iterations {
			value, unit = iters.value, "iterations/s"
		}
		dur := time.Duration(s.DurationMs) * time.Millisecond
		in := min(max(elapsed-time.Duration(s.StartMs)*time.Millisecond, 0), dur).Truncate(time.Second)
		_, _ = fmt.Fprintf(p.w, "\r  %-20s [%d/%d] %s %5s / %-5s (%s left)  %s %s\x1b[K", s.Name, i+1, len(p.spec.Scenarios),
			bar(in, dur, 24), in, dur.Round(time.Second), (dur - in).Round(time.Second), results.FormatThousands(max(value, 0), 0), unit)
	}
}

// scenarioAt is the index of the scenario running (or last started) at elapsed.
func (p *progress) scenarioAt(elapsed time.Duration) int {
	i := 0
	for j, s := range p.spec.Scenarios {
		if elapsed >= time.Duration(s.StartMs)*time.Millisecond {
			i = j
		}
	}
	return i
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
}

// bar is a text progress bar of width cells.
func bar(done, total time.Duration, width int) string {
	n := width
	if total > 0 {
		n = int(float64(width) * float64(done) / float64(total))
	}
	n = min(max(n, 0), width)
	return "▕" + strings.Repeat("█", n) + strings.Repeat("░", width-n) + "▏"
}
