package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/results"
)

// A saturation search with an early stop, against a real redis-server whose DEBUG SLEEP 0.002
// calls saturate it below 500 calls/s: the search halts right after the first step that
// breaks the rule (the 1600/s step at the latest) instead of running 3200/s and 6400/s for
// 2 s each; the step begun meanwhile is cut, the later ones never run, and the document says
// after which step and why.
func TestOpenModelSearchStopsEarly(t *testing.T) {
	addr, _ := pausedRedis(t, "--enable-debug-command", "yes")
	var segs []Segment
	for i, rate := range []float64{50, 100, 400, 1600, 3200, 6400} {
		segs = append(segs, Segment{From: rate, To: rate, Duration: 2 * time.Second, Step: i + 1})
	}
	sched, err := NewSchedule(segs)
	if err != nil {
		t.Fatal(err)
	}
	onePct := 1.0
	rule := results.SearchRule{MaxP99: 300 * time.Millisecond, MaxErrorPercent: &onePct}
	cfg := OpenConfig{Scenario: "open_search_stop", Type: "redis.debug", Schedule: sched, MaxVUs: 16,
		Args: []string{"DEBUG", "SLEEP", "0.002"}, Redis: RedisOptions{Addr: addr}, Stop: &SearchStop{Rule: rule, After: 1}}
	begin := time.Now()
	res, s := runOpenScenario(t, cfg)
	took := time.Since(begin)
	opts := results.DefaultOptions()
	opts.Search = map[string]results.SearchRule{cfg.Scenario: rule}
	sum := results.Summarize(&results.Document{Scenarios: []results.Scenario{s}}, opts).Scenarios[0]
	var md strings.Builder
	_ = results.RenderMarkdown(&md, "", results.Summary{Scenarios: []results.ScenarioSummary{sum}})
	t.Logf("took %v, calls %d dropped %d\n%s", took, res.Calls, res.Dropped, md.String())
	if s.SearchStop == nil {
		t.Fatal("the search did not stop early")
	}
	k := s.SearchStop.AfterStep
	if k < 3 || k > 4 || !strings.HasPrefix(s.SearchStop.Reason, results.StepName(k)+": ") {
		t.Errorf("stopped after step %d (%q), want step 3 or 4 with its reason", k, s.SearchStop.Reason)
	}
	if max := time.Duration(k)*2*time.Second + 1500*time.Millisecond; took > max {
		t.Errorf("took %v, want at most %v (the steps after %d not run)", took, max, k)
	}
	st := sum.Open.Search
	if len(st.Steps) != k+1 || !st.Steps[k].Cut || st.Steps[k].Passed || st.Steps[k-1].Passed || st.Steps[k-1].Cut {
		t.Fatalf("steps %+v: want %d run, step %d failed, step %d cut", st.Steps, k+1, k, k+1)
	}
	if !st.Steps[0].Passed || st.BestRate < 50 || st.BestRate > 400 || st.StoppedAfter != k || st.StopReason == "" {
		t.Errorf("best %v/s, stopped after %d (%q); want best 50..400/s", st.BestRate, st.StoppedAfter, st.StopReason)
	}
	if sum.Open.TargetRate > 1600 {
		t.Errorf("scenario target rate %v/s: want the mean of what was scheduled before the stop", sum.Open.TargetRate)
	}
	if !strings.Contains(md.String(), "The search stopped after "+results.StepName(k)) || !strings.Contains(md.String(), "| cut") {
		t.Error("the report does not say where the search stopped, or which step was cut")
	}
	// calls due after the stop are neither made nor dropped: the cut step counts only its begun part
	if due := sched.DueBefore(k, time.Hour); res.Calls+res.Dropped >= int64(50+100+400+1600)*2+int64(segs[k].From)*2 || due == 0 {
		t.Errorf("calls %d + dropped %d: the schedule after the stop was counted", res.Calls, res.Dropped)
	}
}

// With SearchStop.After 2 a single failing step does not stop the search; two in a row do.
// Steps of 1 s against the DEBUG SLEEP 0.002 server (< 500/s): 50/s passes, 1600/s fails
// (calls dropped), 50/s passes again (the count restarts), 1600/s twice fails: the search
// stops after step 5, step 6 is cut and step 7 never runs.
func TestOpenModelSearchStopAfterTwo(t *testing.T) {
	addr, _ := pausedRedis(t, "--enable-debug-command", "yes")
	var segs []Segment
	for i, rate := range []float64{50, 1600, 50, 1600, 1600, 1600, 1600} {
		segs = append(segs, Segment{From: rate, To: rate, Duration: time.Second, Step: i + 1})
	}
	sched, err := NewSchedule(segs)
	if err != nil {
		t.Fatal(err)
	}
	onePct := 1.0
	cfg := OpenConfig{Scenario: "open_search_after2", Type: "redis.debug", Schedule: sched, MaxVUs: 16,
		Args: []string{"DEBUG", "SLEEP", "0.002"}, Redis: RedisOptions{Addr: addr},
		Stop: &SearchStop{Rule: results.SearchRule{MaxErrorPercent: &onePct}, After: 2}}
	_, s := runOpenScenario(t, cfg)
	if s.SearchStop == nil || s.SearchStop.AfterStep != 5 || !strings.HasPrefix(s.SearchStop.Reason, "step-05: (errors+dropped) ") {
		t.Fatalf("stop %+v, want after step 5 (the second failing step in a row)", s.SearchStop)
	}
	var names []string
	for _, op := range s.Operations {
		names = append(names, op.Name)
	}
	if strings.Join(names, ",") != "step-01,step-02,step-03,step-04,step-05,step-06" {
		t.Errorf("steps recorded %v, want 1 to 6 (6 cut, 7 never begun)", names)
	}
}
