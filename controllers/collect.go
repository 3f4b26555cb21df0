package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/verdict"
)

// maxPartialReasons bounds status.partialReasons.
const maxPartialReasons = 64

// collect merges every stored result document (Collecting), writes status.results and the
// report ConfigMap, then finishes the run: Succeeded only when every runner finished and
// every document merged; otherwise Failed with the partial results kept. Everything it
// reads is in the cluster, so a restarted operator collects the same.
func (r *BenchmarkRunReconciler) collect(ctx context.Context, s *step) error {
	run, st := s.run, &s.run.Status
	obs, err := r.observeRunners(ctx, s)
	if err != nil {
		return err
	}
	r.updateRunnerCounts(s, obs)
	// One runner document at a time: decoded, merged, dropped (bounded memory whatever the
	// number of runners). An error that may heal stops the merge and is retried (until the
	// collect deadline, after which it makes that runner's result missing).
	var retry error
	merged, n, err := lifecycle.MergeEach(len(obs.configs), func(i int) lifecycle.Runner {
		if retry != nil {
			return lifecycle.Runner{Name: fmt.Sprintf("runner-%d", i), Missing: "not read"}
		}
		rn, err := r.runnerResult(ctx, s, obs, i)
		retry = err
		return rn
	}, false, lifecycle.ScenarioNames(&run.Spec)...) // only the spec's scenarios are kept
	if retry != nil {
		return retry
	}
	if err != nil {
		reason := v1alpha1.ReasonMergeFailed
		if errors.Is(err, lifecycle.ErrNoResults) {
			reason = v1alpha1.ReasonNoResults
		}
		s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, reason, err.Error())
		r.finish(s, v1alpha1.PhaseFailed, reason, err.Error())
		return nil
	}
	sum := results.Summarize(merged, plan.SummaryOptions(run))
	st.Results = verdict.FromSummaries(sum.Scenarios)
	st.Live = nil // the exact figures replace the live ones
	st.BestCPS = bestCPS(sum.Scenarios)
	st.Partial = sum.Partial
	st.PartialReasons = sum.PartialReasons[:min(len(sum.PartialReasons), maxPartialReasons)]
	st.Resources = r.resourceUsage(ctx, s, obs)
	r.readPauses(ctx, s.run)          // faultpause.go: when each pause stopped and continued the server
	measureFaults(s.run, obs, merged) // faultmeasure.go: failover and timeline per fault
	failedThresholds := r.judge(s)
	if err := r.writeReport(ctx, s, sum, merged); err != nil {
		return err
	}
	msg := fmt.Sprintf("%d of %d runner results merged into %s", n, len(obs.configs), st.Report.ConfigMapName)
	if len(st.Report.Parts) > 0 {
		msg += fmt.Sprintf(" (per-minute series in %s)", strings.Join(st.Report.Parts, ", "))
	}
	s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionTrue, v1alpha1.ReasonMerged, msg)
	if failedThresholds {
		return nil
	}
	if s.condition(v1alpha1.ConditionLoadComplete) && !sum.Partial {
		r.finish(s, v1alpha1.PhaseSucceeded, v1alpha1.ReasonSucceeded, fmt.Sprintf("%d scenarios, best %s", len(st.Results), st.BestCPS))
		return nil
	}
	reason, msg := v1alpha1.ReasonPartialResults, "results are partial: "+strings.Join(st.PartialReasons, "; ")
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionLoadComplete); c != nil && c.Status == metav1.ConditionFalse {
		reason, msg = c.Reason, c.Message+"; partial results kept"
	}
	r.finish(s, v1alpha1.PhaseFailed, reason, msg)
	return nil
}

// runnerResult is runner i's stored result document, decoded, or why there is none. The
// document is fetched (fetchResult: uncached) and decoded here only, one runner at a time.
// Only a document that cannot exist any more (its ConfigMap deleted after the runner stored
// it) or cannot be decoded is missing; any other error is returned to be retried, except
// once the collect deadline has passed (s.final), when it makes the result missing too.
func (r *BenchmarkRunReconciler) runnerResult(ctx context.Context, s *step, obs *observation, i int) (lifecycle.Runner, error) {
	run := s.run
	rn := lifecycle.Runner{Name: fmt.Sprintf("runner-%d", i), Failed: obs.failed[i]}
	cm := obs.configs[i]
	if cm == nil || !obs.states[i].HasResult {
		rn.Missing = "no result stored"
		if why, ok := obs.failed[i]; ok {
			rn.Missing += " (" + why + ")"
		}
		return rn, nil
	}
	doc, err := r.fetchResult(ctx, run, run.Generation, i, cm)
	switch {
	case err == nil:
		rn.Doc = doc
	case errors.Is(err, errInvalidDocument) || kerrors.IsNotFound(err):
		rn.Missing = fmt.Sprintf("unreadable result: %v", err)
	case s.final:
		rn.Missing = fmt.Sprintf("result not readable by the collect deadline (%s): %v", collectTimeout, err)
	default:
		return rn, err
	}
	return rn, nil
}

// bestCPS is the highest scenario CPS as text, e.g. "140,217.49 hello_world".
func bestCPS(scs []results.ScenarioSummary) string {
	best := -1
	for i, sc := range scs {
		if best < 0 || sc.CPS > scs[best].CPS {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return results.FormatThousands(scs[best].CPS, 2) + " " + scs[best].Name
}

// writeReport creates or updates the report ConfigMap: report.md (the seed-format tables,
// plus resource usage), results.json and the charts (drawn from the merged document). It
// outlives cleanup; the run owns it.
func (r *BenchmarkRunReconciler) writeReport(ctx context.Context, s *step, sum results.Summary, merged *results.Document) error {
	run := s.run
	var md strings.Builder
	if len(run.Status.Resources) > 0 {
		md.WriteString("\nResource Usage:\n\n| role | pods | CPU avg (cores) | CPU max (cores) | memory avg (MiB) | memory max (MiB) | source |\n|:--|--:|--:|--:|--:|--:|:--|\n")
		for _, u := range run.Status.Resources {
			fmt.Fprintf(&md, "| %s | %d | %.2f | %.2f | %.1f | %.1f | %s |\n", u.Role, u.Pods, u.CPUAvgCores, u.CPUMaxCores,
				float64(u.MemoryAvgBytes)/(1<<20), float64(u.MemoryMaxBytes)/(1<<20), u.Source)
		}
	}
	renderVerdict(&md, &run.Status)
	lifecycle.RenderFaults(&md, &run.Status)
	title := fmt.Sprintf("%s (generation %d, %s target)", run.Name, run.Generation, run.Status.Target.Kind)
	res, _ := json.Marshal(run.Status.Resources)
	plots, err := lifecycle.Charts(sum, merged)
	if err == nil {
		err = lifecycle.UsageCharts(plots, run.Status.Resources)
	}
	if err != nil {
		return fmt.Errorf("%w: drawing the charts: %w", errPermanent, err)
	}
	data, parts, err := reportData(title, sum, md.String(), string(res), reportName(run, run.Generation), plots)
	if err != nil {
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	names := make([]string, 0, len(parts))
	for _, p := range parts {
		if err := r.writeReportConfigMap(ctx, s, p.name, p.data); err != nil {
			return err
		}
		names = append(names, p.name)
	}
	if err := r.writeReportConfigMap(ctx, s, reportName(run, run.Generation), data); err != nil {
		return err
	}
	run.Status.Report = &v1alpha1.ReportRef{ConfigMapName: reportName(run, run.Generation), Parts: names}
	return nil
}

// writeReportConfigMap creates or updates one report ConfigMap of the run's generation. Reports
// are not in the manager's cache (cmd/manager/cache.go): the current one is read uncached.
func (r *BenchmarkRunReconciler) writeReportConfigMap(ctx context.Context, s *step, name string, data map[string]string) error {
	run := s.run
	cm := &corev1.ConfigMap{}
	err := r.uncached().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm)
	if err != nil && !kerrors.IsNotFound(err) {
		return fmt.Errorf("reading report %s: %w", name, err)
	}
	exists := err == nil
	if exists && !ownedBy(cm, run) { // an earlier run's report: never overwritten as ours
		return r.removeForeign(ctx, run, cm)
	}
	cm.Namespace, cm.Name = run.Namespace, name
	cm.Labels = runLabels(run, run.Generation)
	cm.Labels[naming.LabelComponent] = componentReport
	cm.Data = data
	if err := controllerutil.SetControllerReference(run, cm, r.Scheme); err != nil {
		return err
	}
	if exists {
		err = r.Update(ctx, cm)
	} else {
		err = r.Create(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("writing report %s: %w", name, err)
	}
	return nil
}
