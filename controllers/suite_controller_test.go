package controllers

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/suite"
)

// suiteEnv drives a BenchmarkSuiteReconciler on the envtest API server (uncached client, so
// every reconcile sees what the previous one wrote).
type suiteEnv struct {
	*env
	sr *BenchmarkSuiteReconciler
}

func newSuiteEnv(t *testing.T) *suiteEnv {
	e := newEnv(t)
	return &suiteEnv{env: e, sr: &BenchmarkSuiteReconciler{Client: k8sClient, Scheme: scheme, Recorder: e.recorder, Clock: e.clock}}
}

// twoVariantSuite is redis8 vs redis8-io4, repeat 2, with a CPS threshold against redis8.
func (e *suiteEnv) twoVariantSuite(name string, continueOnFailure bool) *v1alpha1.BenchmarkSuite {
	s := &v1alpha1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: v1alpha1.BenchmarkSuiteSpec{
			Template: e.redisRun("x", 1).Spec,
			Variants: []v1alpha1.SuiteVariant{{Name: "redis8"},
				{Name: "io4", Redis: &v1alpha1.VariantRedis{Config: map[string]v1alpha1.RedisConfigValue{"io-threads": "4"}}}},
			Repeat:            2,
			ContinueOnFailure: ptr.To(continueOnFailure),
			Thresholds:        []v1alpha1.SuiteThreshold{{Variant: "io4", Scenario: "get", Expr: "cps >= -5%"}},
		},
	}
	if err := k8sClient.Create(e.ctx, s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *suiteEnv) reconcileSuite(name string) {
	e.t.Helper()
	if _, err := e.sr.Reconcile(e.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: e.ns, Name: name}}); err != nil {
		e.t.Fatalf("reconcile suite: %v", err)
	}
	e.drainEvents()
}

func (e *suiteEnv) getSuite(name string) *v1alpha1.BenchmarkSuite {
	e.t.Helper()
	var s v1alpha1.BenchmarkSuite
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &s); err != nil {
		e.t.Fatal(err)
	}
	return &s
}

// children lists the suite's child runs by name.
func (e *suiteEnv) children(name string) []string {
	var list v1alpha1.BenchmarkRunList
	if err := k8sClient.List(e.ctx, &list, client.InNamespace(e.ns), client.MatchingLabels{suite.LabelSuite: name}); err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, r := range list.Items {
		out = append(out, r.Name)
	}
	return out
}

// endChild writes a child's status as the BenchmarkRun controller would at its end:
// Succeeded with synthetic results (get at cps), or Failed with a reason.
func (e *suiteEnv) endChild(name string, cps float64, failed bool) {
	e.t.Helper()
	run := e.get(name)
	run.Status.Phase = v1alpha1.PhaseSucceeded
	cond := metav1.Condition{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "ok", LastTransitionTime: metav1.Now()}
	if failed {
		run.Status.Phase = v1alpha1.PhaseFailed
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "TargetFailed", "redis-master crashed"
	}
	apimeta.SetStatusCondition(&run.Status.Conditions, cond)
	run.Status.Results = []v1alpha1.ScenarioResult{
		{Name: "get", Calls: int64(cps * 60), CPS: cps, LatencyMs: v1alpha1.LatencyMs{P50: 0.2, P99: 1, P999: 2}},
		{Name: "set", Calls: int64(cps * 50), CPS: cps * 0.8, LatencyMs: v1alpha1.LatencyMs{P50: 0.3, P99: 1.2, P999: 2.5}},
	}
	if err := k8sClient.Status().Update(e.ctx, run); err != nil {
		e.t.Fatal(err)
	}
}

// TestSuiteRunsChildrenInOrder: a 2-variant × repeat-2 suite creates its children one after
// another in the interleaved order (redis8 io4 redis8 io4), each controller-owned by the
// suite with the variant applied; once all ended it writes the table (means, deltas), the
// verdict (io4 20 % slower: cps >= -5% broken), the report ConfigMap and Events.
func TestSuiteRunsChildrenInOrder(t *testing.T) {
	e := newSuiteEnv(t)
	s := e.twoVariantSuite("cmp", true)
	order := []string{"cmp-redis8-r1", "cmp-io4-r1", "cmp-redis8-r2", "cmp-io4-r2"}
	cps := map[string]float64{"cmp-redis8-r1": 1000, "cmp-io4-r1": 800, "cmp-redis8-r2": 1020, "cmp-io4-r2": 810}
	for i, name := range order {
		e.reconcileSuite(s.Name)
		e.reconcileSuite(s.Name) // a second pass creates nothing while the child runs
		if got := e.children(s.Name); len(got) != i+1 {
			t.Fatalf("after %d ended: children %v, want %d", i, got, i+1)
		}
		run := e.get(name)
		if !metav1.IsControlledBy(run, s) || run.Labels[suite.LabelVariant] == "" {
			t.Errorf("%s: not controller-owned by the suite or unlabelled: %+v %v", name, run.OwnerReferences, run.Labels)
		}
		if io := run.Spec.Target.Redis.Config["io-threads"]; (io == "4") != strings.Contains(name, "io4") {
			t.Errorf("%s: io-threads %q", name, io)
		}
		if st := e.getSuite(s.Name); st.Status.Phase != v1alpha1.SuiteRunning || st.Status.Children[i].Phase != v1alpha1.PhasePending {
			t.Errorf("suite status: %s %+v", st.Status.Phase, st.Status.Children)
		}
		e.endChild(name, cps[name], false)
	}
	e.reconcileSuite(s.Name)
	got := e.getSuite(s.Name)
	if got.Status.Phase != v1alpha1.SuiteFailed || got.Status.Verdict != v1alpha1.VerdictFailed || got.Status.Progress != "4/4" {
		t.Fatalf("suite: phase %s verdict %s progress %s conditions %+v", got.Status.Phase, got.Status.Verdict, got.Status.Progress, got.Status.Conditions)
	}
	if c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionSucceeded); c == nil || c.Reason != "ThresholdsNotMet" {
		t.Errorf("Succeeded condition: %+v", c)
	}
	if len(got.Status.Table) != 4 {
		t.Fatalf("table: %+v", got.Status.Table)
	}
	io := got.Status.Table[1] // get × io4
	if io.Scenario != "get" || io.Variant != "io4" || io.Runs != 2 || io.CPS.Mean != 805 || io.CPSDeltaPercent == nil || *io.CPSDeltaPercent != -20.3 {
		t.Errorf("get × io4: %+v", io)
	}
	if got.Status.Table[0].CPS.Mean != 1010 || got.Status.Table[0].CPS.SD == 0 {
		t.Errorf("get × redis8: %+v", got.Status.Table[0])
	}
	var cm corev1.ConfigMap
	if got.Status.Report == nil {
		t.Fatal("no report")
	}
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: got.Status.Report.ConfigMapName}, &cm); err != nil {
		t.Fatal(err)
	}
	if l := cm.Labels[naming.LabelRun]; l != "suite."+got.Name {
		t.Errorf("report ConfigMap's run label %q: a BenchmarkRun named %s would take it for its own", l, got.Name)
	}
	if !strings.Contains(cm.Data["report.md"], "| get | io4 |  | 2 | 0 | 805.00 ± ") || !strings.Contains(cm.Data["cps.svg"], "<svg") || !metav1.IsControlledBy(&cm, got) {
		t.Errorf("report:\n%s", cm.Data["report.md"])
	}
	for _, reason := range []string{"ChildCreated", "ChildSucceeded", "ThresholdsNotMet"} {
		if !e.hasEvent(reason) {
			t.Errorf("no %s Event in %v", reason, e.events)
		}
	}
}

// TestSuiteContinuesOnFailure: a failed child keeps the suite going (continueOnFailure) and
// is shown failed in the children, the table and the report; the suite ends Failed
// (ChildFailed). Without continueOnFailure the remaining children are never created.
func TestSuiteContinuesOnFailure(t *testing.T) {
	e := newSuiteEnv(t)
	s := e.twoVariantSuite("cof", true)
	for i, name := range []string{"cof-redis8-r1", "cof-io4-r1", "cof-redis8-r2", "cof-io4-r2"} {
		e.reconcileSuite(s.Name)
		e.endChild(name, 1000+float64(i), name == "cof-io4-r1")
	}
	e.reconcileSuite(s.Name)
	got := e.getSuite(s.Name)
	if got.Status.Phase != v1alpha1.SuiteFailed || got.Status.Children[1].Phase != v1alpha1.PhaseFailed ||
		!strings.Contains(got.Status.Children[1].Reason, "TargetFailed: redis-master crashed") {
		t.Fatalf("suite: %s children %+v", got.Status.Phase, got.Status.Children)
	}
	if io := got.Status.Table[1]; io.Runs != 1 || io.Failed != 1 {
		t.Errorf("get × io4: %+v", io)
	}
	if c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionSucceeded); c == nil || c.Reason != "ChildFailed" {
		t.Errorf("Succeeded condition: %+v", c)
	}
	var md bytes.Buffer
	if err := suite.RenderMarkdown(&md, got); err != nil || !strings.Contains(md.String(), "**1 FAILED**") {
		t.Errorf("report does not show the failure: %v\n%s", err, md.String())
	}

	stop := e.twoVariantSuite("stop", false)
	e.reconcileSuite(stop.Name)
	e.endChild("stop-redis8-r1", 1000, true)
	e.reconcileSuite(stop.Name)
	e.clock.Step(time.Second)
	e.reconcileSuite(stop.Name)
	got = e.getSuite(stop.Name)
	if kids := e.children(stop.Name); len(kids) != 1 || got.Status.Phase != v1alpha1.SuiteFailed ||
		!strings.HasPrefix(got.Status.Children[3].Reason, "NotRun") {
		t.Errorf("stop: children %v phase %s status %+v", kids, got.Status.Phase, got.Status.Children)
	}
}

// TestSuiteInvalidVariantFailsBeforeRunning: a variant whose child run the API server refuses
// (here an external tcp target for redis scenarios) fails the suite at once naming the child
// and the rule; nothing is created.
func TestSuiteInvalidVariantFailsBeforeRunning(t *testing.T) {
	e := newSuiteEnv(t)
	s := &v1alpha1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: e.ns},
		Spec: v1alpha1.BenchmarkSuiteSpec{
			Template: e.redisRun("x", 1).Spec,
			Variants: []v1alpha1.SuiteVariant{{Name: "redis8"},
				{Name: "echo", Target: &v1alpha1.VariantTarget{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalTCP, Addresses: []string{"e:7"}}}}},
		},
	}
	if err := k8sClient.Create(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	e.reconcileSuite(s.Name)
	got := e.getSuite(s.Name)
	c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionSucceeded)
	if got.Status.Phase != v1alpha1.SuiteFailed || c == nil || c.Reason != "InvalidVariant" ||
		!strings.Contains(c.Message, "child run bad-echo-r1 (variant echo) is refused") || !strings.Contains(c.Message, "need a Redis endpoint") {
		t.Errorf("phase %s condition %+v", got.Status.Phase, c)
	}
	if kids := e.children(s.Name); len(kids) != 0 {
		t.Errorf("children created: %v", kids)
	}
}

// TestSuiteParallel: parallel creates every child in one step; the suite ends once all ended.
func TestSuiteParallel(t *testing.T) {
	e := newSuiteEnv(t)
	s := e.twoVariantSuite("par", true)
	s.Spec.Parallel = true
	s.Spec.Thresholds = nil
	if err := k8sClient.Delete(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	s = &v1alpha1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "par2", Namespace: e.ns}, Spec: s.Spec}
	if err := k8sClient.Create(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	e.reconcileSuite(s.Name)
	kids := e.children(s.Name)
	if len(kids) != 4 {
		t.Fatalf("children %v, want all 4 at once", kids)
	}
	for _, name := range kids {
		e.endChild(name, 1000, false)
	}
	e.reconcileSuite(s.Name)
	if got := e.getSuite(s.Name); got.Status.Phase != v1alpha1.SuiteSucceeded || got.Status.Verdict != "" || len(got.Status.Table) != 4 {
		t.Errorf("suite: %s verdict %q table %d", got.Status.Phase, got.Status.Verdict, len(got.Status.Table))
	}
	if !e.hasEvent("Succeeded") {
		t.Errorf("no Succeeded Event: %v", e.events)
	}
}
