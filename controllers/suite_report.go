package controllers

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/suite"
)

// outcomes reads the ended children's results (cached) in run order.
func (r *BenchmarkSuiteReconciler) outcomes(ctx context.Context, s *v1alpha1.BenchmarkSuite) ([]suite.Outcome, error) {
	var list v1alpha1.BenchmarkRunList
	if err := r.Client.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{suite.LabelSuite: s.Name}); err != nil {
		return nil, err
	}
	runs := map[string]*v1alpha1.BenchmarkRun{}
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], s) {
			runs[list.Items[i].Name] = &list.Items[i]
		}
	}
	outs := make([]suite.Outcome, 0, len(s.Status.Children))
	for _, c := range s.Status.Children {
		o := suite.Outcome{Variant: c.Variant, Sweep: c.Sweep, Repetition: c.Repetition, Failed: c.Phase != v1alpha1.PhaseSucceeded}
		if run, ok := runs[c.Name]; ok {
			o.Results = run.Status.Results
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// finish writes the combined table, the verdict, the report ConfigMap and the final phase:
// Failed when a child failed (shown in every table) or the verdict failed, else Succeeded.
func (r *BenchmarkSuiteReconciler) finish(ctx context.Context, st *suiteStep) error {
	s := st.s
	outs, err := r.outcomes(ctx, s)
	if err != nil {
		return err
	}
	table := suite.Conclude(s, outs)
	failed := suite.FailedChildren(s.Status.Children)
	msg := fmt.Sprintf("%d child runs ended, %d failed", len(s.Status.Children), failed)
	st.condition(v1alpha1.ConditionChildrenComplete, metav1.ConditionTrue, v1alpha1.ReasonAllEnded, msg)
	if s.Status.Verdict != "" {
		status, reason := metav1.ConditionTrue, v1alpha1.ReasonPassed
		if s.Status.Verdict == v1alpha1.VerdictFailed {
			status, reason = metav1.ConditionFalse, v1alpha1.ReasonThresholdsNotMet
		}
		st.condition(v1alpha1.ConditionThresholdsMet, status, reason, suite.ThresholdSummary(s.Status.Thresholds))
	}
	if err := r.writeReport(ctx, s, table, outs); err != nil {
		return err
	}
	switch {
	case failed > 0:
		r.failSuite(st, v1alpha1.ReasonChildFailed, msg+": the failed ones are marked in every table")
	case s.Status.Verdict == v1alpha1.VerdictFailed:
		r.failSuite(st, v1alpha1.ReasonThresholdsNotMet, suite.ThresholdSummary(s.Status.Thresholds))
	default:
		s.Status.Phase, s.Status.CompletionTime = v1alpha1.SuiteSucceeded, &st.now
		st.condition(v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, msg)
		st.event(corev1.EventTypeNormal, v1alpha1.ReasonSucceeded, "suite succeeded: %s; verdict %s", msg, verdictText(s.Status.Verdict))
	}
	return nil
}

// verdictText is the verdict or "none".
func verdictText(v v1alpha1.Verdict) string {
	if v == "" {
		return "none"
	}
	return string(v)
}

// writeReport creates or updates the report ConfigMap <suite>-report: report.md (with the
// seed shapes of the children's results outs), table.json (every row), cps.svg and
// percentiles.svg, fitted to one ConfigMap (suite.FitReport). It carries the run labels the manager-scope admission policy
// requires of every ConfigMap the manager writes (run = suite.ReportRunLabel, which no run
// has; a report written before keeps its label: the policy forbids changing it).
func (r *BenchmarkSuiteReconciler) writeReport(ctx context.Context, s *v1alpha1.BenchmarkSuite, table []v1alpha1.SuiteRow, outs []suite.Outcome) error {
	files, err := suite.ReportFiles(s, table, outs)
	if err != nil {
		return err
	}
	if files, err = suite.FitReport(files, table, suite.MaxReportBytes); err != nil {
		return err
	}
	name := naming.Name(s.Name, "report")
	data := make(map[string]string, len(files))
	for k, v := range files {
		data[k] = string(v)
	}
	cm := &corev1.ConfigMap{}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	err = reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, cm)
	switch {
	case kerrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: map[string]string{
			naming.LabelRun: suite.ReportRunLabel(s.Name), naming.LabelGeneration: strconv.FormatInt(s.Generation, 10),
			naming.LabelComponent: naming.ComponentReport, suite.LabelSuite: s.Name,
		}}, Data: data}
		if err := controllerutil.SetControllerReference(s, cm, r.Scheme); err != nil {
			return err
		}
		err = r.Client.Create(ctx, cm)
	case err == nil:
		cm.Data = data
		err = r.Client.Update(ctx, cm)
	}
	if err != nil {
		return err
	}
	s.Status.Report = &v1alpha1.ReportRef{ConfigMapName: name}
	return nil
}
