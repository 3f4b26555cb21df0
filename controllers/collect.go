package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/target"
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
	var docs []*results.Document
	var missing []string
	for i, cm := range obs.configs {
		if cm == nil || !obs.states[i].HasResult {
			reason := "no result stored"
			if why, ok := obs.failed[i]; ok {
				reason += " (" + why + ")"
			}
			missing = append(missing, fmt.Sprintf("runner-%d: %s", i, reason))
			continue
		}
		doc, err := runner.DecodeResult(cm)
		if err != nil {
			missing = append(missing, fmt.Sprintf("runner-%d: unreadable result: %v", i, err))
			continue
		}
		if why, ok := obs.failed[i]; ok && !doc.Partial {
			doc.Partial, doc.PartialReasons = true, append(doc.PartialReasons, fmt.Sprintf("runner-%d: %s", i, why))
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		msg := "no runner stored a result: " + strings.Join(missing, "; ")
		s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, "NoResults", msg)
		r.finish(s, v1alpha1.PhaseFailed, "NoResults", msg)
		return nil
	}
	merged, err := results.Merge(docs...)
	if err != nil {
		msg := "merging runner results: " + err.Error()
		s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, "MergeFailed", msg)
		r.finish(s, v1alpha1.PhaseFailed, "MergeFailed", msg)
		return nil
	}
	if len(missing) > 0 {
		merged.Partial = true
		merged.PartialReasons = append(merged.PartialReasons, missing...)
	}
	sum := results.Summarize(merged, plan.SummaryOptions(run))
	st.Results = toScenarioResults(sum.Scenarios)
	st.BestCPS = bestCPS(sum.Scenarios)
	st.Partial = sum.Partial
	st.PartialReasons = sum.PartialReasons[:min(len(sum.PartialReasons), maxPartialReasons)]
	st.Resources = r.resourceUsage(ctx, s, obs)
	failedThresholds := r.judge(s)
	if err := r.writeReport(ctx, s, sum); err != nil {
		return err
	}
	s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionTrue, "Merged",
		fmt.Sprintf("%d of %d runner results merged into %s", len(docs), len(obs.configs), st.Report.ConfigMapName))
	if failedThresholds {
		return nil
	}
	if s.condition(v1alpha1.ConditionLoadComplete) && !sum.Partial {
		r.finish(s, v1alpha1.PhaseSucceeded, "Succeeded", fmt.Sprintf("%d scenarios, best %s", len(st.Results), st.BestCPS))
		return nil
	}
	reason, msg := "PartialResults", "results are partial: "+strings.Join(st.PartialReasons, "; ")
	if c := loadComplete(st); c != nil && c.Status == metav1.ConditionFalse {
		reason, msg = c.Reason, c.Message+"; partial results kept"
	}
	r.finish(s, v1alpha1.PhaseFailed, reason, msg)
	return nil
}

// loadComplete is the LoadComplete condition.
func loadComplete(st *v1alpha1.BenchmarkRunStatus) *metav1.Condition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1alpha1.ConditionLoadComplete {
			return &st.Conditions[i]
		}
	}
	return nil
}

// toScenarioResults converts the summaries to the API type (same JSON keys; the API keeps
// a subset of the fields).
func toScenarioResults(scs []results.ScenarioSummary) []v1alpha1.ScenarioResult {
	out := make([]v1alpha1.ScenarioResult, 0, len(scs))
	for _, sc := range scs {
		res := v1alpha1.ScenarioResult{
			Name: sc.Name, Type: sc.Type, Calls: sc.Calls, Errors: sc.Errors, CPS: sc.CPS,
			LatencyMs: v1alpha1.LatencyMs{Mean: sc.LatencyMs.Mean, P50: sc.LatencyMs.P50, P90: sc.LatencyMs.P90,
				P99: sc.LatencyMs.P99, P999: sc.LatencyMs.P999, Min: sc.LatencyMs.Min, Max: sc.LatencyMs.Max,
				Median: sc.LatencyMs.Median, StdDev: sc.LatencyMs.StdDev},
			CallsPerMinute: sc.CallsPerMinute,
		}
		for _, v := range sc.ReturnValues[:min(len(sc.ReturnValues), 64)] {
			res.ReturnValues = append(res.ReturnValues, v1alpha1.ValueCount{Value: v.Value, Count: v.Count, Percent: v.Percent})
		}
		out = append(out, res)
	}
	return out[:min(len(out), 32)]
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
	return thousands(scs[best].CPS) + " " + scs[best].Name
}

// thousands formats v with 2 decimals and comma thousands separators.
func thousands(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String() + "." + frac
	}
	return b.String() + "." + frac
}

// writeReport creates or updates the report ConfigMap: report.md (the seed-format tables,
// plus resource usage) and results.json. It outlives cleanup; the run owns it.
func (r *BenchmarkRunReconciler) writeReport(ctx context.Context, s *step, sum results.Summary) error {
	run := s.run
	var md, js bytes.Buffer
	title := fmt.Sprintf("%s (generation %d, %s target)", run.Name, run.Generation, run.Status.Target.Kind)
	if err := results.RenderMarkdown(&md, title, sum); err != nil {
		return err
	}
	if len(run.Status.Resources) > 0 {
		md.WriteString("\nResource Usage:\n\n| role | pods | CPU avg (cores) | CPU max (cores) | memory avg (MiB) | memory max (MiB) | source |\n|:--|--:|--:|--:|--:|--:|:--|\n")
		for _, u := range run.Status.Resources {
			fmt.Fprintf(&md, "| %s | %d | %.2f | %.2f | %.1f | %.1f | %s |\n", u.Role, u.Pods, u.CPUAvgCores, u.CPUMaxCores,
				float64(u.MemoryAvgBytes)/(1<<20), float64(u.MemoryMaxBytes)/(1<<20), u.Source)
		}
	}
	renderVerdict(&md, &run.Status)
	if err := results.RenderJSON(&js, sum); err != nil {
		return err
	}
	res, _ := json.Marshal(run.Status.Resources)
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = run.Namespace, reportName(run, run.Generation)
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Labels = runLabels(run, run.Generation)
		cm.Labels[target.LabelComponent] = componentReport
		cm.Data = map[string]string{"report.md": md.String(), "results.json": js.String(), "resources.json": string(res)}
		return controllerutil.SetControllerReference(run, cm, r.Scheme)
	})
	if err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	run.Status.Report = &v1alpha1.ReportRef{ConfigMapName: cm.Name}
	return nil
}
