package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
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
	rs := make([]lifecycle.Runner, len(obs.configs))
	for i, cm := range obs.configs {
		rs[i].Name, rs[i].Failed = fmt.Sprintf("runner-%d", i), obs.failed[i]
		if cm == nil || !obs.states[i].HasResult {
			rs[i].Missing = "no result stored"
			if why, ok := obs.failed[i]; ok {
				rs[i].Missing += " (" + why + ")"
			}
			continue
		}
		if rs[i].Doc, err = r.runnerResult(ctx, run, run.Generation, i, cm); err != nil {
			rs[i].Missing = fmt.Sprintf("unreadable result: %v", err)
		}
	}
	merged, n, err := lifecycle.Merge(rs, false)
	if err != nil {
		reason := "MergeFailed"
		if errors.Is(err, lifecycle.ErrNoResults) {
			reason = "NoResults"
		}
		s.setCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, reason, err.Error())
		r.finish(s, v1alpha1.PhaseFailed, reason, err.Error())
		return nil
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
		fmt.Sprintf("%d of %d runner results merged into %s", n, len(obs.configs), st.Report.ConfigMapName))
	if failedThresholds {
		return nil
	}
	if s.condition(v1alpha1.ConditionLoadComplete) && !sum.Partial {
		r.finish(s, v1alpha1.PhaseSucceeded, "Succeeded", fmt.Sprintf("%d scenarios, best %s", len(st.Results), st.BestCPS))
		return nil
	}
	reason, msg := "PartialResults", "results are partial: "+strings.Join(st.PartialReasons, "; ")
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionLoadComplete); c != nil && c.Status == metav1.ConditionFalse {
		reason, msg = c.Reason, c.Message+"; partial results kept"
	}
	r.finish(s, v1alpha1.PhaseFailed, reason, msg)
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
	return results.FormatThousands(scs[best].CPS, 2) + " " + scs[best].Name
}

// writeReport creates or updates the report ConfigMap: report.md (the seed-format tables,
// plus resource usage) and results.json. It outlives cleanup; the run owns it.
func (r *BenchmarkRunReconciler) writeReport(ctx context.Context, s *step, sum results.Summary) error {
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
	title := fmt.Sprintf("%s (generation %d, %s target)", run.Name, run.Generation, run.Status.Target.Kind)
	files, err := lifecycle.Reports(title, sum, nil, md.String())
	if err != nil {
		return err
	}
	res, _ := json.Marshal(run.Status.Resources)
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = run.Namespace, reportName(run, run.Generation)
	_, err = controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Labels = runLabels(run, run.Generation)
		cm.Labels[naming.LabelComponent] = componentReport
		cm.Data = map[string]string{lifecycle.ReportMarkdown: string(files[lifecycle.ReportMarkdown]),
			lifecycle.ReportJSON: string(files[lifecycle.ReportJSON]), "resources.json": string(res)}
		return controllerutil.SetControllerReference(run, cm, r.Scheme)
	})
	if err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	run.Status.Report = &v1alpha1.ReportRef{ConfigMapName: cm.Name}
	return nil
}
