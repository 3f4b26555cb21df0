package controllers

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/verdict"
)

// Baselines and thresholds.
//
// resolveBaseline runs while the run is Pending, before anything is deployed: it copies the
// baseline's figures into status.baseline so the comparison survives the baseline's deletion.
// judge runs at collection: it evaluates the thresholds on the merged figures and fails a run
// whose thresholds are not met (phase Failed, reason ThresholdsNotMet, results kept), so that
// `kubectl wait --for=condition=Succeeded`, Argo CD health and CI all see a failed run.

// resolveBaseline copies the baseline's figures into status.baseline once. It returns false
// while the run must wait (a named baseline still running) or when it ended the run (a named
// baseline missing or failed, or relative thresholds without baseline figures).
func (r *BenchmarkRunReconciler) resolveBaseline(ctx context.Context, s *step) (bool, error) {
	run, st := s.run, &s.run.Status
	spec := run.Spec.Baseline
	if spec == nil || st.Baseline != nil || st.Phase != v1alpha1.PhasePending {
		return true, nil
	}
	if _, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		return r.baselineFailed(s, v1alpha1.ReasonInvalidBaseline, "spec.baseline.selector: "+err.Error())
	}
	base, wait, err := r.findBaseline(ctx, run)
	if err != nil {
		return false, err
	}
	if wait != "" {
		s.setCondition(v1alpha1.ConditionBaselineResolved, metav1.ConditionFalse, reasonWaiting, wait)
		return false, nil
	}
	if base == nil {
		msg := fmt.Sprintf("no Succeeded BenchmarkRun matches spec.baseline.selector %s", metav1.FormatLabelSelector(spec.Selector))
		if spec.Name != "" {
			msg = fmt.Sprintf("spec.baseline.name: BenchmarkRun %q not found in namespace %s", spec.Name, run.Namespace)
		} else if !hasRelative(run.Spec.Thresholds) {
			s.setCondition(v1alpha1.ConditionBaselineResolved, metav1.ConditionFalse, v1alpha1.ReasonNoBaseline, msg+"; no deltas")
			return true, nil
		}
		return r.baselineFailed(s, v1alpha1.ReasonBaselineNotFound, msg)
	}
	if base.Status.Phase != v1alpha1.PhaseSucceeded {
		return r.baselineFailed(s, v1alpha1.ReasonBaselineFailed, fmt.Sprintf("baseline %s ended %s: its figures are no reference", base.Name, base.Status.Phase))
	}
	if missing := missingScenarios(run, base.Status.Results); len(missing) > 0 {
		return r.baselineFailed(s, v1alpha1.ReasonBaselineMismatch, fmt.Sprintf("baseline %s has no results for scenario(s) %s used by relative thresholds",
			base.Name, strings.Join(missing, ", ")))
	}
	st.Baseline = &v1alpha1.BaselineStatus{Name: base.Name, UID: string(base.UID), Generation: base.Status.ObservedGeneration,
		CompletionTime: base.Status.CompletionTime, Results: verdict.Trim(base.Status.Results)}
	msg := fmt.Sprintf("figures of %s (generation %d, %d scenarios) copied into status.baseline", base.Name, st.Baseline.Generation, len(base.Status.Results))
	if absent := absentScenarios(run, base.Status.Results); len(absent) > 0 {
		msg += "; it has no figures for scenario(s) " + strings.Join(absent, ", ") + " (no deltas for them)"
	}
	s.setCondition(v1alpha1.ConditionBaselineResolved, metav1.ConditionTrue, v1alpha1.ReasonCopied, msg)
	return true, nil
}

// baselineFailed ends the run before anything is deployed.
func (r *BenchmarkRunReconciler) baselineFailed(s *step, reason, msg string) (bool, error) {
	s.setCondition(v1alpha1.ConditionBaselineResolved, metav1.ConditionFalse, reason, msg)
	r.finish(s, v1alpha1.PhaseFailed, reason, msg)
	return false, nil
}

// findBaseline returns the named baseline (nil when missing; a wait message while it runs)
// or the newest Succeeded run matching the selector (never the run itself).
func (r *BenchmarkRunReconciler) findBaseline(ctx context.Context, run *v1alpha1.BenchmarkRun) (*v1alpha1.BenchmarkRun, string, error) {
	spec := run.Spec.Baseline
	if spec.Name != "" {
		var base v1alpha1.BenchmarkRun
		err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: spec.Name}, &base)
		if kerrors.IsNotFound(err) {
			return nil, "", nil
		}
		if err != nil {
			return nil, "", err
		}
		if !finished(base.Status.Phase) {
			return nil, fmt.Sprintf("waiting for baseline %s to finish (phase %q)", base.Name, base.Status.Phase), nil
		}
		return &base, "", nil
	}
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return nil, "", err // checked by resolveBaseline first
	}
	var list v1alpha1.BenchmarkRunList
	if err := r.List(ctx, &list, client.InNamespace(run.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, "", err
	}
	var best *v1alpha1.BenchmarkRun
	for i := range list.Items {
		c := &list.Items[i]
		if c.UID == run.UID || c.Status.Phase != v1alpha1.PhaseSucceeded || c.Status.CompletionTime == nil {
			continue
		}
		if best == nil || best.Status.CompletionTime.Before(c.Status.CompletionTime) {
			best = c
		}
	}
	return best, "", nil
}

// absentScenarios lists the run's scenarios the baseline has no results for.
func absentScenarios(run *v1alpha1.BenchmarkRun, base []v1alpha1.ScenarioResult) []string {
	var absent []string
	for _, sc := range run.Spec.Load.Scenarios {
		if !slices.ContainsFunc(base, func(b v1alpha1.ScenarioResult) bool { return b.Name == sc.Name }) {
			absent = append(absent, sc.Name)
		}
	}
	return absent
}

// hasRelative tells whether a threshold is relative to the baseline.
func hasRelative(ths []v1alpha1.Threshold) bool {
	for _, t := range ths {
		if e, err := verdict.Parse(t.Expr); err == nil && e.Relative {
			return true
		}
	}
	return false
}

// missingScenarios lists the scenarios of relative thresholds the baseline has no results for.
func missingScenarios(run *v1alpha1.BenchmarkRun, base []v1alpha1.ScenarioResult) []string {
	have := map[string]bool{}
	for _, b := range base {
		have[b.Name] = true
	}
	var missing []string
	for _, t := range run.Spec.Thresholds {
		if e, err := verdict.Parse(t.Expr); err != nil || !e.Relative {
			continue
		}
		names := []string{t.Scenario}
		if t.Scenario == "" {
			names = names[:0]
			for _, sc := range run.Spec.Load.Scenarios {
				names = append(names, sc.Name)
			}
		}
		for _, n := range names {
			if !have[n] {
				have[n] = true
				missing = append(missing, n)
			}
		}
	}
	return missing
}

// judge evaluates the thresholds on status.results (collection) and writes the verdict, the
// table, the ThresholdsMet condition and the deltas against the baseline. It returns true
// when it failed an otherwise complete run (some threshold not met); a partial run fails
// for its own reason, with the verdict and the condition still written.
func (r *BenchmarkRunReconciler) judge(s *step) bool {
	run, st := s.run, &s.run.Status
	var base []v1alpha1.ScenarioResult
	if st.Baseline != nil {
		base = st.Baseline.Results
		st.Baseline.Deltas = verdict.Deltas(st.Results, base)
	}
	st.Verdict, st.Thresholds = verdict.Evaluate(run.Spec.Thresholds, st.Results, base)
	if st.Verdict == "" {
		return false
	}
	st.Thresholds = st.Thresholds[:min(len(st.Thresholds), 1024)]
	var broken []string
	for _, t := range st.Thresholds {
		if !t.Passed {
			broken = append(broken, thresholdText(t))
		}
	}
	if c := abortCondition(st); c != nil { // stopped early: the live figures broke an abortOnFail threshold
		st.Verdict = v1alpha1.VerdictFailed
		s.setCondition(v1alpha1.ConditionThresholdsMet, metav1.ConditionFalse, v1alpha1.ReasonAbortedOnThreshold, c.Message)
		return false
	}
	if len(broken) == 0 {
		s.setCondition(v1alpha1.ConditionThresholdsMet, metav1.ConditionTrue, v1alpha1.ReasonPassed, fmt.Sprintf("%d thresholds met", len(st.Thresholds)))
		return false
	}
	msg := fmt.Sprintf("%d of %d thresholds not met: %s", len(broken), len(st.Thresholds), strings.Join(broken[:min(len(broken), 5)], "; "))
	if len(broken) > 5 {
		msg += "; …"
	}
	s.setCondition(v1alpha1.ConditionThresholdsMet, metav1.ConditionFalse, v1alpha1.ReasonThresholdsNotMet, msg)
	if st.Partial || !s.condition(v1alpha1.ConditionLoadComplete) {
		return false // the run fails for its runners; the verdict and the condition say the rest
	}
	r.finish(s, v1alpha1.PhaseFailed, v1alpha1.ReasonThresholdsNotMet, msg)
	return true
}

// thresholdText describes a broken threshold, e.g. "get: p99 < 5 (observed 7.1, limit 5)".
func thresholdText(t v1alpha1.ThresholdResult) string {
	if t.Message != "" {
		return fmt.Sprintf("%s: %s (%s)", t.Scenario, t.Expr, t.Message)
	}
	return fmt.Sprintf("%s: %s (observed %s, limit %s)", t.Scenario, t.Expr, strconv.FormatFloat(t.Observed, 'f', -1, 64), strconv.FormatFloat(t.Limit, 'f', -1, 64))
}

// renderVerdict appends the thresholds and the baseline comparison to the report.
func renderVerdict(md io.Writer, st *v1alpha1.BenchmarkRunStatus) {
	_ = verdict.RenderThresholds(md, st.Verdict, st.Thresholds)
	if st.Baseline != nil {
		_ = verdict.RenderBaseline(md, "Against baseline "+st.Baseline.Name, st.Results, st.Baseline.Results)
	}
}
