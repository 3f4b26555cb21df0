package progress

import (
	"fmt"
	"strconv"
	"time"

	benchv1 "github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/verdict"
)

// ReasonAborted is the reason of a run stopped early because live figures broke an
// abortOnFail threshold (phase Failed, what was collected kept).
const ReasonAborted = benchv1.ReasonAbortedOnThreshold

// Broken evaluates the abortOnFail thresholds on the live merged figures, sinceStart after the
// load started: a threshold is judged once its delayAbortEval has passed, only on scenarios
// that made calls (a scenario not started yet, or a relative threshold without a baseline
// figure, is never a reason to abort). It returns the first broken one.
func Broken(ths []benchv1.Threshold, live, baseline []benchv1.ScenarioResult, sinceStart time.Duration) (benchv1.ThresholdResult, bool) {
	active := make([]benchv1.ScenarioResult, 0, len(live))
	for _, r := range live {
		if r.Calls > 0 || r.Errors > 0 {
			active = append(active, r)
		}
	}
	if len(active) == 0 {
		return benchv1.ThresholdResult{}, false
	}
	for _, th := range ths {
		if !th.AbortOnFail || (th.DelayAbortEval != nil && sinceStart < th.DelayAbortEval.Duration) {
			continue
		}
		_, table := verdict.Evaluate([]benchv1.Threshold{th}, active, baseline)
		for _, tr := range table {
			if !tr.Passed && tr.Message == "" {
				return tr, true
			}
		}
	}
	return benchv1.ThresholdResult{}, false
}

// AbortMessage describes a threshold broken live, e.g. "abortOnFail threshold 'p99 < 5' broken
// live on scenario get: observed 7.1, limit 5 (after 12.3s of load; approximate live figures)".
func AbortMessage(tr benchv1.ThresholdResult, sinceStart time.Duration) string {
	return fmt.Sprintf("abortOnFail threshold '%s' broken live on scenario %s: observed %s, limit %s (after %s of load; approximate live figures)",
		tr.Expr, tr.Scenario, strconv.FormatFloat(tr.Observed, 'f', -1, 64), strconv.FormatFloat(tr.Limit, 'f', -1, 64),
		sinceStart.Round(100*time.Millisecond))
}

// HasAbortOnFail tells whether any threshold asks for a live abort.
func HasAbortOnFail(ths []benchv1.Threshold) bool {
	for _, t := range ths {
		if t.AbortOnFail {
			return true
		}
	}
	return false
}

// PublishInterval is how often each of n runners publishes its progress to the API server:
// max(5s, n/20 s), so all runners together write at most about 20 updates per second.
func PublishInterval(n int) time.Duration {
	return max(5*time.Second, time.Duration(n)*time.Second/20)
}
