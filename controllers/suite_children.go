package controllers

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/suite"
)

// reasonCreateFailed marks a child the API server refused to create.
const reasonCreateFailed = v1alpha1.ReasonChildCreateFailed

// childRun is the BenchmarkRun object of a child.
func (r *BenchmarkSuiteReconciler) childRun(s *v1alpha1.BenchmarkSuite, c *suite.Child) (*v1alpha1.BenchmarkRun, error) {
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: s.Namespace, Labels: map[string]string{
			suite.LabelSuite: s.Name, suite.LabelVariant: c.Variant, suite.LabelRepetition: strconv.Itoa(int(c.Repetition)),
		}},
		Spec: *c.Spec.DeepCopy(),
	}
	if err := controllerutil.SetControllerReference(s, run, r.Scheme); err != nil {
		return nil, err
	}
	return run, nil
}

// dryRun creates every distinct child (one per variant and sweep point: repetitions share
// their spec) as a server-side dry run and returns the first refusal as a message naming
// the child and its variant ("" when all would be accepted).
func (r *BenchmarkSuiteReconciler) dryRun(ctx context.Context, s *v1alpha1.BenchmarkSuite, children []suite.Child) string {
	for _, c := range suite.Distinct(children) {
		run, err := r.childRun(s, c)
		if err == nil {
			err = r.Client.Create(ctx, run, client.DryRunAll)
		}
		if err != nil && !kerrors.IsAlreadyExists(err) {
			return results.OneLine(fmt.Sprintf("child run %s (variant %s) is refused: %v", c.Name, c.Variant, err), 1000)
		}
	}
	return ""
}

// observe rebuilds status.children from the child runs (cached) and the suite's previous
// status: a child created but not yet in the cache stays Pending, a refused one Failed.
func (r *BenchmarkSuiteReconciler) observe(ctx context.Context, st *suiteStep, children []suite.Child) error {
	var list v1alpha1.BenchmarkRunList
	if err := r.Client.List(ctx, &list, client.InNamespace(st.s.Namespace), client.MatchingLabels{suite.LabelSuite: st.s.Name}); err != nil {
		return err
	}
	runs := map[string]*v1alpha1.BenchmarkRun{}
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], st.s) {
			runs[list.Items[i].Name] = &list.Items[i]
		}
	}
	prev := map[string]v1alpha1.SuiteChild{}
	for _, c := range st.s.Status.Children {
		prev[c.Name] = c
	}
	out := make([]v1alpha1.SuiteChild, len(children))
	for i, c := range children {
		sc := v1alpha1.SuiteChild{Name: c.Name, Variant: c.Variant, Sweep: c.Sweep(), Repetition: c.Repetition}
		if run, ok := runs[c.Name]; ok {
			sc.Phase = run.Status.Phase
			if sc.Phase == "" {
				sc.Phase = v1alpha1.PhasePending
			}
			if sc.Phase == v1alpha1.PhaseFailed {
				sc.Reason = failReason(run)
			}
		} else if p, ok := prev[c.Name]; ok {
			sc.Phase, sc.Reason = p.Phase, p.Reason
		}
		if p := prev[c.Name]; p.Phase != sc.Phase && terminal(sc.Phase) {
			kind, reason := corev1.EventTypeNormal, v1alpha1.ReasonChildSucceeded
			if sc.Phase == v1alpha1.PhaseFailed {
				kind, reason = corev1.EventTypeWarning, v1alpha1.ReasonChildFailed
			}
			st.event(kind, reason, "child run %s (variant %s, repetition %d) %s %s", c.Name, c.Variant, c.Repetition, sc.Phase, sc.Reason)
		}
		out[i] = sc
	}
	st.s.Status.Children = out
	st.s.Status.Progress = fmt.Sprintf("%d/%d", ended(out), len(out))
	return nil
}

// failReason is a failed run's Succeeded condition as one line.
func failReason(run *v1alpha1.BenchmarkRun) string {
	c := apimeta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil {
		return ""
	}
	return results.OneLine(c.Reason+": "+c.Message, 500)
}

// terminal is true for Succeeded and Failed.
func terminal(p v1alpha1.Phase) bool {
	return p == v1alpha1.PhaseSucceeded || p == v1alpha1.PhaseFailed
}

// ended counts the children that ended.
func ended(children []v1alpha1.SuiteChild) int {
	n := 0
	for _, c := range children {
		if terminal(c.Phase) {
			n++
		}
	}
	return n
}

// stopping is true when a child failed and the suite does not continue on failure.
func stopping(s *v1alpha1.BenchmarkSuite) bool {
	if s.Spec.ContinueOnFailure == nil || *s.Spec.ContinueOnFailure {
		return false
	}
	for _, c := range s.Status.Children {
		if c.Phase == v1alpha1.PhaseFailed {
			return true
		}
	}
	return false
}

// createNext creates the next child in order when none is running (all missing ones when
// parallel). After a failure without continueOnFailure the remaining children are marked
// Failed (not created) so the suite ends once the running ones did.
func (r *BenchmarkSuiteReconciler) createNext(ctx context.Context, st *suiteStep, children []suite.Child) error {
	s := st.s
	if stopping(s) {
		for i := range s.Status.Children {
			if c := &s.Status.Children[i]; c.Phase == "" {
				c.Phase, c.Reason = v1alpha1.PhaseFailed, "NotRun: an earlier child run failed and spec.continueOnFailure is false"
			}
		}
		s.Status.Progress = fmt.Sprintf("%d/%d", ended(s.Status.Children), len(s.Status.Children))
		return nil
	}
	for i := range s.Status.Children {
		c := &s.Status.Children[i]
		if c.Phase != "" && !terminal(c.Phase) && !s.Spec.Parallel {
			return nil // one at a time: wait for it
		}
		if c.Phase != "" {
			continue
		}
		if err := r.create(ctx, st, &children[i], c); err != nil {
			return err
		}
		if !s.Spec.Parallel {
			return nil
		}
	}
	return nil
}

// create creates one child; a refusal by the API server marks it Failed (CreateFailed).
func (r *BenchmarkSuiteReconciler) create(ctx context.Context, st *suiteStep, c *suite.Child, sc *v1alpha1.SuiteChild) error {
	run, err := r.childRun(st.s, c)
	if err != nil {
		return err
	}
	switch err := r.Client.Create(ctx, run); {
	case err == nil || kerrors.IsAlreadyExists(err):
		sc.Phase = v1alpha1.PhasePending
		if st.s.Status.Phase == v1alpha1.SuitePending {
			st.s.Status.Phase = v1alpha1.SuiteRunning
			st.condition(v1alpha1.ConditionChildrenComplete, metav1.ConditionFalse, v1alpha1.ReasonChildrenRunning, "child runs are running")
		}
		st.event(corev1.EventTypeNormal, v1alpha1.ReasonChildCreated, "created child run %s (variant %s, repetition %d)", c.Name, c.Variant, c.Repetition)
	case kerrors.IsInvalid(err) || kerrors.IsForbidden(err) || kerrors.IsBadRequest(err):
		sc.Phase, sc.Reason = v1alpha1.PhaseFailed, results.OneLine(reasonCreateFailed+": "+err.Error(), 500)
		st.event(corev1.EventTypeWarning, reasonCreateFailed, "child run %s (variant %s) refused: %s", c.Name, c.Variant, sc.Reason)
	default:
		return err
	}
	st.s.Status.Progress = fmt.Sprintf("%d/%d", ended(st.s.Status.Children), len(st.s.Status.Children))
	return nil
}
