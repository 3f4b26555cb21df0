// Command suite-noise measures the suite verdict's noise behaviour on this machine (make
// bench): real k6 (bin/k6, scripts/k6/benchrun.js, redis.get) against a real local
// redis-server, each run a separate k6 process as each child run of a suite is. It runs
// PAIRS same-vs-same suites (variants a and b identical, REPEAT runs each, interleaved
// a b a b ...) and SLOW suites whose b runs against a really slowed server: with -pause-ms, a
// side connection sends CLIENT PAUSE <ms> every 10 ms while b's runs load, so the server
// answers no client for part of the time (Redis ends a pause in its cron: the bench sets hz
// 500 so pauses end within 2 ms; the measured Δ is printed, about -30 % for 1 ms here).
// Without -pause-ms b gets 4 VUs instead of 5 (on this CPU-starved machine that cut calls/s
// by only 3 %, so the bench uses the pause). Each suite's per-run CPS go through
// internal/suite (Table, Evaluate with `cps >= -5%` and significance: the paired t-test on
// the log ratios of each repetition), exactly as the suite controller judges children's
// status.results.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/suite"
)

func main() {
	k6 := flag.String("k6", "bin/k6", "our k6 build")
	script := flag.String("script", "scripts/k6/benchrun.js", "the load script")
	addr := flag.String("redis", "127.0.0.1:6379", "redis-server address")
	pairs := flag.Int("pairs", 20, "same-vs-same suites")
	slows := flag.Int("slow", 5, "suites whose b is really slowed")
	repeat := flag.Int("repeat", 4, "runs per variant per suite")
	vus := flag.Int("vus", 5, "k6 virtual users (the slowed variant has 4/5 of them)")
	work := flag.String("work", os.TempDir(), "directory for the result documents")
	pauseMs := flag.Int("pause-ms", 0, "slow b by CLIENT PAUSE of this many ms every -pause-every ms instead of fewer VUs (set the server's hz to 500 so pauses end on time)")
	every := flag.Int("pause-every", 10, "with -pause-ms: ms between the pauses")
	flag.Parse()
	r := &runner{k6: *k6, script: *script, addr: *addr, vus: *vus, work: *work, pauseMs: *pauseMs, everyMs: *every}
	spec := suiteSpec(*repeat)
	var same, mwSame tally
	var all []float64
	for i := range *pairs {
		rows, v, _, outs := r.judge(&spec, *repeat, false)
		same.add(!rows[1].Significant && v == v1alpha1.VerdictPassed)
		mwSame.add(!significantUnpaired(&spec, outs))
		all = append(all, figures(outs)...)
		fmt.Printf("same-vs-same %2d: a %.0f ± %.0f, b %.0f ± %.0f calls/s, Δ %+.2f%%, p=%.3f, verdict %s\n", i+1,
			rows[0].CPS.Mean, half(rows[0].CPS), rows[1].CPS.Mean, half(rows[1].CPS), deref(rows[1].CPSDeltaPercent), deref(rows[1].CPSPValue), v)
	}
	how := fmt.Sprintf("%d VUs", r.slowVUs())
	if r.pauseMs > 0 {
		how = fmt.Sprintf("CLIENT PAUSE %d ms every %d ms", r.pauseMs, r.everyMs)
	}
	var flagged, mwFlagged tally
	var deltas []float64
	for i := range *slows {
		rows, v, ths, outs := r.judge(&spec, *repeat, true)
		flagged.add(rows[1].Significant && v == v1alpha1.VerdictFailed)
		mwFlagged.add(significantUnpaired(&spec, outs))
		deltas = append(deltas, deref(rows[1].CPSDeltaPercent))
		fmt.Printf("slowdown %d: a (%d VUs) %.0f ± %.0f, b (%s) %.0f ± %.0f calls/s, Δ %+.2f%%, p=%.4f; threshold %s passed=%v %s\n", i+1,
			r.vus, rows[0].CPS.Mean, half(rows[0].CPS), how, rows[1].CPS.Mean, half(rows[1].CPS), deref(rows[1].CPSDeltaPercent), deref(rows[1].CPSPValue), ths[0].Expr, ths[0].Passed, ths[0].Message)
	}
	if len(all) > 1 {
		spread := suite.Describe(all)
		fmt.Printf("run-to-run spread of the same-vs-same runs: CV %.1f %% (%d runs of 1 s, %d VUs)\n", 100*spread.SD/spread.Mean, len(all), *vus)
	}
	fmt.Printf("same-vs-same: %s no significant difference; slowdown: %s flagged (measured Δ mean %+.1f%%); baseline, Mann–Whitney U on the same runs unpaired: %s and %s\n",
		same, flagged, suite.Describe(deltas).Mean, mwSame, mwFlagged)
}

// tally counts suites: how many of how many met a condition.
type tally struct{ hits, n int }

// add counts one suite.
func (t *tally) add(hit bool) {
	t.n++
	if hit {
		t.hits++
	}
}

// String is "hits/n".
func (t tally) String() string { return fmt.Sprintf("%d/%d", t.hits, t.n) }

// significantUnpaired judges the suite's runs as before pairing (the baseline): each run its
// own repetition, so internal/suite falls back to Mann–Whitney U; it tells whether the
// threshold failed as significant.
func significantUnpaired(spec *v1alpha1.BenchmarkSuiteSpec, outs []suite.Outcome) bool {
	unpaired := append([]suite.Outcome(nil), outs...)
	for i := range unpaired {
		unpaired[i].Repetition = int32(i + 1)
	}
	v, _ := suite.Evaluate(spec, unpaired)
	return suite.Table(spec, unpaired)[1].Significant && v == v1alpha1.VerdictFailed
}

// judge runs one suite (slow: b really slowed) and judges it as the suite controller does.
func (r *runner) judge(spec *v1alpha1.BenchmarkSuiteSpec, repeat int, slow bool) ([]v1alpha1.SuiteRow, v1alpha1.Verdict, []v1alpha1.SuiteThresholdResult, []suite.Outcome) {
	outs, err := r.suite(repeat, slow)
	if err != nil {
		fail(err)
	}
	v, ths := suite.Evaluate(spec, outs)
	return suite.Table(spec, outs), v, ths, outs
}

// suiteSpec is the judged suite: variants a (reference) and b, one get scenario, b's CPS
// must stay within 5 % of a's unless the difference is not significant.
func suiteSpec(repeat int) v1alpha1.BenchmarkSuiteSpec {
	return v1alpha1.BenchmarkSuiteSpec{
		Template: v1alpha1.BenchmarkRunSpec{Load: v1alpha1.LoadSpec{Scenarios: []v1alpha1.Scenario{{Name: "get", Type: v1alpha1.ScenarioRedisGet}}}},
		Variants: []v1alpha1.SuiteVariant{{Name: "a"}, {Name: "b"}}, Repeat: int32(repeat),
		Thresholds: []v1alpha1.SuiteThreshold{{Variant: "b", Scenario: "get", Expr: "cps >= -5%", Significance: true}},
	}
}

// runner runs one k6 process per run.
type runner struct {
	k6, script, addr, work   string
	vus, n, pauseMs, everyMs int
}

// slowVUs is the slowed variant's virtual users: 4/5 of the others' (at least 1), or all of
// them when the server is paused instead.
func (r *runner) slowVUs() int {
	if r.pauseMs > 0 {
		return r.vus
	}
	return max(1, r.vus*4/5)
}

// suite runs a and b repeat times interleaved; slow gives b 4/5 of the VUs.
func (r *runner) suite(repeat int, slow bool) ([]suite.Outcome, error) {
	var outs []suite.Outcome
	for rep := 1; rep <= repeat; rep++ {
		for _, variant := range []string{"a", "b"} {
			vus, stop := r.vus, func() {}
			if slow && variant == "b" {
				vus = r.slowVUs()
				if r.pauseMs > 0 {
					stop = pauser(r.addr, r.pauseMs, r.everyMs)
				}
			}
			cps, err := r.run(vus)
			stop()
			if err != nil {
				return nil, err
			}
			outs = append(outs, suite.Outcome{Variant: variant, Repetition: int32(rep),
				Results: []v1alpha1.ScenarioResult{{Name: "get", CPS: cps}}})
		}
	}
	return outs, nil
}

// run is one k6 run of 1 s; its CPS is calls ÷ (last end − first start), as benchrun's.
func (r *runner) run(vus int) (float64, error) {
	r.n++
	doc := filepath.Join(r.work, fmt.Sprintf("noise-%d.json", r.n))
	defer func() { _ = os.Remove(doc) }()
	cmd := exec.Command(r.k6, "run", "-q", "--summary-mode", "disabled", "--out", "benchrun="+doc, r.script)
	cmd.Env = append(os.Environ(),
		fmt.Sprintf(`BENCHRUN_PLAN={"scenarios":[{"name":"get","type":"redis.get","address":"redis","startMs":0,"durationMs":1000,"vus":%d,"keySpace":1000}],"graceMs":1000}`, vus),
		fmt.Sprintf(`BENCHRUN_TARGET={"redis":{"addrs":[%q]}}`, r.addr), "BENCHRUN_RUNNER=bench")
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("k6: %w: %s", err, out)
	}
	data, err := os.ReadFile(doc)
	if err != nil {
		return 0, err
	}
	var d struct {
		Scenarios []struct {
			Calls      int64     `json:"calls"`
			FirstStart time.Time `json:"firstStart"`
			LastEnd    time.Time `json:"lastEnd"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &d); err != nil || len(d.Scenarios) == 0 {
		return 0, fmt.Errorf("result document: %w", err)
	}
	s := d.Scenarios[0]
	return float64(s.Calls) / s.LastEnd.Sub(s.FirstStart).Seconds(), nil
}

// pauser sends CLIENT PAUSE ms every `every` ms on its own connection until stopped: the
// server answers no client for ms of every `every` ms (pauses end in the server's cron: hz 500 ends them
// within 2 ms).
func pauser(addr string, ms, every int) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fail(err)
		}
		defer func() { _ = c.Close() }()
		rd := bufio.NewReader(c)
		t := time.NewTicker(time.Duration(every) * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if _, err := fmt.Fprintf(c, "CLIENT PAUSE %d\r\n", ms); err != nil {
				fail(err)
			}
			if line, err := rd.ReadString('\n'); err != nil || line != "+OK\r\n" {
				fail(fmt.Errorf("CLIENT PAUSE: %q %w", line, err))
			}
		}
	}()
	return func() { close(done); <-finished }
}

// figures are the outcomes' CPS.
func figures(outs []suite.Outcome) []float64 {
	var xs []float64
	for _, o := range outs {
		xs = append(xs, o.Results[0].CPS)
	}
	return xs
}

// half is a confidence interval's half-width.
func half(s v1alpha1.Stat) float64 { return (s.High - s.Low) / 2 }

// deref is *p, or 0.
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// fail prints err and exits 1.
func fail(err error) {
	fmt.Fprintln(os.Stderr, "suite-noise:", err)
	os.Exit(1)
}
