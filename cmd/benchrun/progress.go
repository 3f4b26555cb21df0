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
)

var jsonUnmarshal = json.Unmarshal

// progress draws one live line per scenario on a terminal: elapsed/remaining time and the
// current calls/s, summed over the runners. Calls come from the benchrun_calls counter of
// scripts/k6/benchrun.js, read through each k6 process' REST API (--address) once a second.
// The clock starts when the first calls are counted (k6 runs setup() first).
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

// calls sums the runners' benchrun_calls counters.
func (p *progress) calls() float64 {
	var total float64
	for _, r := range p.runners {
		resp, err := p.client.Get("http://" + r.api + "/v1/metrics/benchrun_calls")
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

func (p *progress) run() {
	defer p.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var start time.Time
	var lastCalls float64
	lastT := time.Now()
	cur := -1
	rate := 0.0
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
		c := p.calls()
		if dt := now.Sub(lastT).Seconds(); dt > 0 {
			rate = (c - lastCalls) / dt
		}
		lastCalls, lastT = c, now
		if start.IsZero() {
			if c == 0 {
				_, _ = fmt.Fprintf(p.w, "\r  preparing (k6 setup)...\x1b[K")
				continue
			}
			start = now.Add(-time.Second / 2)
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
		dur := time.Duration(s.DurationMs) * time.Millisecond
		in := min(max(elapsed-time.Duration(s.StartMs)*time.Millisecond, 0), dur)
		_, _ = fmt.Fprintf(p.w, "\r  %-20s [%d/%d] %s %5s / %-5s (%s left)  %s calls/s\x1b[K", s.Name, i+1, len(p.spec.Scenarios),
			bar(in, dur, 24), in.Round(time.Second), dur.Round(time.Second), (dur - in).Round(time.Second), thousands(rate))
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

// thousands formats v with thousands separators.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", max(v, 0))
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
