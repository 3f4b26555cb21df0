package bench

import (
	"fmt"
	"time"

	"github.com/benchrun/benchrun/internal/results"
)

// SearchStop ends a saturation search early: once After steps in a row broke Rule (judged on
// this runner's own calls), the open loop stops at once instead of running the remaining,
// higher-rate steps against a target that is already saturated.
type SearchStop struct {
	// Rule is the search's stop rule (the one its report applies).
	Rule results.SearchRule
	// After is how many steps in a row must break the rule (at least 1; 0 disables the stop).
	After int
}

// stopSettle bounds how long after a step's deadline the judge waits for the step's calls
// still in flight before it judges the step.
const stopSettle = time.Second

// judge watches the search steps while the workers run: after each step's deadline (no call
// of it can start any more) it waits for the step's calls in flight (at most the rule's p99,
// at most stopSettle), checks the step against the rule and halts the loop once cfg.Stop.After
// steps in a row broke it. The next step has begun meanwhile: it is cut at the halt (its calls
// stay recorded; the report marks it cut). The last step is not judged: nothing is left to save.
func (o *openLoop) judge() {
	st := o.cfg.Stop
	if st == nil || st.After < 1 {
		return
	}
	segs := o.cfg.Schedule.Segments()
	failed := 0
	for k, g := range segs[:len(segs)-1] {
		if g.Step == 0 {
			continue
		}
		if !o.waitFor(time.Until(o.start.Add(o.deadline(k)))) {
			return
		}
		settle := o.settle()
		for limit := time.Now().Add(settle); o.done[k].Load() < o.started[k].Load() && time.Now().Before(limit); {
			if !o.waitFor(2 * time.Millisecond) {
				return
			}
		}
		ok, why := o.check(k, settle)
		if ok {
			failed = 0
			continue
		}
		if failed++; failed >= st.After {
			o.stopOff, o.stopStep = time.Since(o.start), g.Step
			o.stopWhy = results.StepName(g.Step) + ": " + why
			close(o.halt)
			return
		}
	}
}

// settle is how long the judge waits for a step's calls in flight: the rule's p99 when it has
// one (a call unanswered that long after its step ended is over it), at most stopSettle.
func (o *openLoop) settle() time.Duration {
	if p := o.cfg.Stop.Rule.MaxP99; p > 0 {
		return min(p, stopSettle)
	}
	return stopSettle
}

// waitFor sleeps d; false when the context ended or every worker returned.
func (o *openLoop) waitFor(d time.Duration) bool {
	if d <= 0 {
		return o.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-o.ctx.Done():
		return false
	case <-o.over:
		return false
	case <-t.C:
		return true
	}
}

// check judges segment k (a search step) on this runner's calls: the shards' step recorders
// merged, its dropped calls counted. Calls still unanswered after settle count against a p99
// rule: when they are more than 1 % of the step's calls, its p99 is over the rule for sure.
func (o *openLoop) check(k int, settle time.Duration) (bool, string) {
	step := o.cfg.Schedule.Segments()[k].Step
	var snaps []results.Scenario
	for _, sh := range o.shards {
		sh.mu.Lock()
		if r, ok := sh.steps[step]; ok {
			snaps = append(snaps, r.Scenario())
		}
		sh.mu.Unlock()
	}
	op := results.Scenario{Name: results.StepName(step)}
	if len(snaps) > 0 {
		doc, err := results.NewDocument("judge", snaps...)
		if err != nil || len(doc.Scenarios) != 1 {
			return true, "" // cannot judge: keep going, the report still applies the rule
		}
		op = doc.Scenarios[0]
	}
	started := o.started[k].Load()
	op.Dropped = max(o.cfg.Schedule.DueBefore(k, o.cfg.Schedule.SegmentEnd(k))-started, 0)
	rule := o.cfg.Stop.Rule
	ok, why := rule.Check(&op)
	if inflight := started - o.done[k].Load(); ok && rule.MaxP99 > 0 && rule.MaxP99 <= settle && inflight*100 > started {
		return false, fmt.Sprintf("%d of %d calls unanswered %v after the step's end (p99 > %v)", inflight, started, openGrace+settle, rule.MaxP99)
	}
	return ok, why
}
