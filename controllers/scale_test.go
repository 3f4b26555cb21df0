package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/results/resultstest"
	"github.com/benchrun/benchrun/internal/runner"
)

// maximalRun is a run of the CRD's maximum: 32 scenarios of d each (scenario_00…), n runners.
func (e *env) maximalRun(name string, n int32, d time.Duration) *v1alpha1.BenchmarkRun {
	run := e.redisRun(name, n)
	run.Spec.Load.Scenarios = nil
	for i := range 32 {
		run.Spec.Load.Scenarios = append(run.Spec.Load.Scenarios, v1alpha1.Scenario{
			Name: fmt.Sprintf("scenario_%02d", i), Type: v1alpha1.ScenarioRedisGet, Duration: &metav1.Duration{Duration: d}})
	}
	return run
}

// storeSynthetic simulates runner i storing a synthetic document of the run's 32 scenarios
// of d each, fitted to the stored budget as the k6 output does; it returns the document's
// calls per scenario.
func (e *env) storeSynthetic(run *v1alpha1.BenchmarkRun, i int, d time.Duration) map[string]int64 {
	e.t.Helper()
	doc, err := resultstest.Document(resultstest.Spec{Runner: fmt.Sprintf("runner-%d", i), Scenarios: 32, Duration: d,
		CallsPerMinute: 600_000, Samples: 20_000, Seed: uint64(i + 1), Start: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	calls := map[string]int64{}
	for _, s := range doc.Scenarios {
		calls[s.Name] = s.Calls
	}
	raw, _, err := results.Fit(doc, results.StoredBudget)
	if err != nil {
		e.t.Fatal(err)
	}
	gz, err := runner.EncodeResult(raw)
	if err != nil {
		e.t.Fatal(err)
	}
	var res corev1.ConfigMap // stored as the agent does: result ConfigMap, then the state
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: runner.ResultName(prefix(run, run.Generation), i)}, &res); err != nil {
		e.t.Fatal(err)
	}
	res.BinaryData = map[string][]byte{runner.KeyResult: gz}
	if err := k8sClient.Update(e.ctx, &res); err != nil {
		e.t.Fatalf("storing runner %d's document of %d KiB: %v", i, len(gz)>>10, err)
	}
	var cm corev1.ConfigMap
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: e.stateName(run, i)}, &cm); err != nil {
		e.t.Fatal(err)
	}
	cm.Data[runner.KeyState] = runner.StateDone
	cm.Data[runner.KeyLoadStartedAt] = e.clock.Now().Format(time.RFC3339Nano)
	cm.Data[runner.KeyResultBytes] = fmt.Sprint(len(gz))
	if err := k8sClient.Update(e.ctx, &cm); err != nil {
		e.t.Fatal(err)
	}
	return calls
}

// objectSize is the JSON size of obj as the API server stores it.
func objectSize(t *testing.T, obj any) int {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// collectMaximal drives a maximal run of n runners × 32 scenarios × d to Succeeded and checks
// that every call is in status.results, the status and every report ConfigMap stay within
// their limits, and returns the run and its report ConfigMaps.
func collectMaximal(t *testing.T, e *env, name string, n int, d time.Duration) (*v1alpha1.BenchmarkRun, []corev1.ConfigMap) {
	run := e.startedRun(e.maximalRun(name, int32(n), d))
	want := map[string]int64{}
	for i := range n {
		for k, c := range e.storeSynthetic(run, i, d) {
			want[k] += c
		}
	}
	e.clock.Step(d)
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	st := run.Status
	if len(st.Results) != 32 || st.Partial {
		t.Fatalf("%d results, partial %v %q", len(st.Results), st.Partial, st.PartialReasons)
	}
	for _, r := range st.Results {
		if r.Calls != want[r.Name] || r.Calls == 0 {
			t.Errorf("%s: %d calls in status, runners made %d", r.Name, r.Calls, want[r.Name])
		}
	}
	if size := objectSize(t, st); size > maxStatusBytes {
		t.Errorf("status of %d KiB, over %d KiB", size>>10, maxStatusBytes>>10)
	}
	if size := objectSize(t, run); size > 1<<20 {
		t.Errorf("BenchmarkRun of %d KiB", size>>10)
	}
	var cms []corev1.ConfigMap
	for _, name := range append([]string{st.Report.ConfigMapName}, st.Report.Parts...) {
		var cm corev1.ConfigMap
		if !e.exists(&cm, name) {
			t.Fatalf("report ConfigMap %s missing", name)
		}
		if size := objectSize(t, &cm); size > 1<<20 {
			t.Errorf("report ConfigMap %s of %d KiB", name, size>>10)
		}
		cms = append(cms, cm)
	}
	t.Logf("32 scenarios × %v, %d runners: status %d KiB, report %d KiB in %d ConfigMap(s)", d, n, objectSize(t, st)>>10,
		dataSize(cms[0].Data)>>10, len(cms))
	return run, cms
}

// TestCollectMaximalWeek: the CRD's largest spec (32 scenarios × 168 h) with simulated runner
// documents covering the whole week is collected without losing a call, within the status and
// ConfigMap limits; the per-interval series (5 min buckets) are in the report.
func TestCollectMaximalWeek(t *testing.T) {
	e := newEnv(t)
	_, cms := collectMaximal(t, e, "week", 3, 168*time.Hour)
	// The series are in results.json, or in the parts when the report was split.
	var sum results.Summary
	if err := json.Unmarshal([]byte(cms[0].Data["results.json"]), &sum); err != nil {
		t.Fatal(err)
	}
	s := scenarioSeries{CallsPerMinute: sum.Scenarios[0].CallsPerMinute, CallsPerInterval: sum.Scenarios[0].CallsPerInterval,
		IntervalSeconds: sum.Scenarios[0].IntervalSeconds}
	if len(cms) > 1 {
		var series []scenarioSeries
		if err := json.Unmarshal([]byte(cms[1].Data[reportSeriesKey]), &series); err != nil {
			t.Fatal(err)
		}
		s = series[0]
	}
	if s.IntervalSeconds != 300 || len(s.CallsPerInterval) < 2000 || len(s.CallsPerMinute) != 0 {
		t.Errorf("series: %d per minute, %d per %d s", len(s.CallsPerMinute), len(s.CallsPerInterval), s.IntervalSeconds)
	}
}

// TestCollectSplitsReport: 32 scenarios × 48 h (2,880 one-minute buckets each) make a report
// over one ConfigMap: the per-minute series move to parts listed in status.report.parts, the
// status keeps no per-minute series (an Event says so), and every series is exact.
func TestCollectSplitsReport(t *testing.T) {
	e := newEnv(t)
	run, cms := collectMaximal(t, e, "split", 2, 48*time.Hour)
	if len(run.Status.Report.Parts) == 0 || !strings.Contains(cms[0].Data["report.md"], run.Status.Report.Parts[0]) {
		t.Fatalf("report not split: parts %v", run.Status.Report.Parts)
	}
	minutes := map[string]int{}
	var total int64
	for _, cm := range cms[1:] {
		var series []scenarioSeries
		if err := json.Unmarshal([]byte(cm.Data[reportSeriesKey]), &series); err != nil {
			t.Fatal(err)
		}
		for _, s := range series {
			minutes[s.Name] = len(s.CallsPerMinute)
			for _, n := range s.CallsPerMinute {
				total += n
			}
		}
	}
	var calls int64
	for _, r := range run.Status.Results {
		calls += r.Calls
		if r.CallsPerMinute != nil {
			t.Errorf("%s: %d minutes kept in status", r.Name, len(r.CallsPerMinute))
		}
	}
	if len(minutes) != 32 || minutes["scenario_00"] < 2880 || total != calls {
		t.Errorf("series of %d scenarios (%d minutes), %d calls, status has %d", len(minutes), minutes["scenario_00"], total, calls)
	}
	if !e.hasEvent("StatusTrimmed") {
		t.Errorf("no StatusTrimmed Event: %q", e.events)
	}
}

// denyPolicy installs a ValidatingAdmissionPolicy denying, in namespace ns, the requests on
// resources (with subresources) for which expr is true, with the given reason; it returns
// once the API server enforces it (probe creates a denied object).
func (e *env) denyPolicy(name string, rules []admissionv1.NamedRuleWithOperations, expr string, reason metav1.StatusReason, probe func() error) {
	e.t.Helper()
	fail := admissionv1.Fail
	pol := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + e.ns},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: rules},
			Validations:      []admissionv1.Validation{{Expression: expr, Reason: &reason, Message: "denied by test policy " + name}}}}
	bind := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + e.ns},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: pol.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": e.ns}}}}}
	for _, obj := range []client.Object{pol, bind} {
		if err := k8sClient.Create(e.ctx, obj); err != nil {
			e.t.Fatal(err)
		}
	}
	e.t.Cleanup(func() {
		_ = k8sClient.Delete(e.ctx, bind)
		_ = k8sClient.Delete(e.ctx, pol)
	})
	waitFor(e.t, func() bool { return probe() != nil })
}

// rule is a policy rule for one resource on create and update.
func rule(group, resource string) []admissionv1.NamedRuleWithOperations {
	return []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
		Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
		Rule:       admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}}}}}
}

// TestCollectReportRejected: the API server refusing the report ConfigMap for good (here 413
// RequestEntityTooLarge from an admission policy) fails the run with the reason at once,
// keeping the merged results in status, instead of retrying forever.
func TestCollectReportRejected(t *testing.T) {
	e := newEnv(t)
	label := naming.LabelComponent
	e.denyPolicy("no-report", rule("", "configmaps"), fmt.Sprintf(`!has(object.metadata.labels) || !(%q in object.metadata.labels) || object.metadata.labels[%q] != "report"`, label, label),
		metav1.StatusReasonRequestEntityTooLarge, func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: e.ns, Labels: map[string]string{label: "report"}}}
			err := k8sClient.Create(e.ctx, cm)
			if err == nil {
				_ = k8sClient.Delete(e.ctx, cm)
			}
			return err
		})
	run := e.startedRun(e.redisRun("rejected", 2))
	e.finishRunner(run, 0, 40)
	e.finishRunner(run, 1, 40)
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != "CollectRejected" || !strings.Contains(c.Message, "denied by test policy no-report") {
		t.Fatalf("condition %+v", c)
	}
	if len(run.Status.Results) != 2 || run.Status.Results[0].Calls != 80 {
		t.Fatalf("results not kept: %+v", run.Status.Results)
	}
}

// TestStatusRejected: the API server refusing the run's new status for good (422 Invalid from
// an admission policy refusing phase Succeeded) fails the run with the reason, from the
// status it had, instead of retrying the same patch forever.
func TestStatusRejected(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("badstatus", 1))
	e.denyPolicy("no-success", rule(v1alpha1.GroupVersion.Group, "benchmarkruns/status"),
		`!has(object.status) || !has(object.status.phase) || object.status.phase != "Succeeded"`, metav1.StatusReasonInvalid,
		func() error {
			probe := e.get(run.Name)
			probe.Status.Phase = v1alpha1.PhaseSucceeded
			return k8sClient.Status().Update(e.ctx, probe, client.DryRunAll)
		})
	e.finishRunner(run, 0, 30)
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != "StatusRejected" || !strings.Contains(c.Message, "denied by test policy no-success") {
		t.Fatalf("condition %+v", c)
	}
}

// TestCollectDeadline: a run whose collection keeps failing with an error that may heal (here
// 503 ServiceUnavailable on its report ConfigMap, injected in front of the real API server)
// is retried, then failed with the reason once collectTimeout has passed since it entered
// Collecting, keeping the merged results.
func TestCollectDeadline(t *testing.T) {
	e := newEnv(t)
	flaky := func(obj client.Object) error {
		if obj.GetLabels()[naming.LabelComponent] == componentReport {
			return kerrors.NewServiceUnavailable("etcd is having a bad day")
		}
		return nil
	}
	ww, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	e.r = e.reconciler(interceptor.NewClient(ww, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := flaky(obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := flaky(obj); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
	}))
	run := e.startedRun(e.redisRun("deadline", 1))
	e.finishRunner(run, 0, 30)
	e.reconcile(run.Name) // Running → Collecting
	if got := e.get(run.Name).Status.Phase; got != v1alpha1.PhaseCollecting {
		t.Fatalf("phase %s", got)
	}
	try := func() error {
		_, err := e.r.Reconcile(e.ctx, reconcileRequest(e.ns, run.Name))
		e.drainEvents()
		return err
	}
	if err := try(); err == nil || e.get(run.Name).Status.Phase != v1alpha1.PhaseCollecting {
		t.Fatalf("collect error not retried: %v", err)
	}
	e.clock.Step(collectTimeout)
	if err := try(); err != nil {
		t.Fatalf("after the deadline: %v", err)
	}
	run = e.get(run.Name)
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if run.Status.Phase != v1alpha1.PhaseFailed || c == nil || c.Reason != "CollectTimeout" || !strings.Contains(c.Message, "bad day") {
		t.Fatalf("phase %s condition %+v", run.Status.Phase, c)
	}
	if len(run.Status.Results) != 2 || run.Status.Results[0].Calls != 30 {
		t.Fatalf("results not kept: %+v", run.Status.Results)
	}
}

// reconcileRequest is the request for run name in namespace ns.
func reconcileRequest(ns, name string) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
}

// TestHistoryDropsReportParts: a history record pushed out of status.history takes its
// report ConfigMap and the report's parts with it.
func TestHistoryDropsReportParts(t *testing.T) {
	e := newEnv(t)
	run := e.create(e.redisRun("parts", 1))
	e.reconcile(run.Name)
	run = e.get(run.Name)
	names := []string{"old-report", "old-report-series-0", "old-report-series-1"}
	for _, n := range names {
		if err := k8sClient.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: e.ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for g := range maxHistory {
		rec := v1alpha1.RunRecord{Generation: int64(-g), Phase: v1alpha1.PhaseSucceeded}
		if g == maxHistory-1 {
			rec.Report = &v1alpha1.ReportRef{ConfigMapName: names[0], Parts: names[1:]}
		}
		run.Status.History = append(run.Status.History, rec)
	}
	if err := k8sClient.Status().Update(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	run = e.get(run.Name)
	run.Spec.Load.Workers++
	if err := k8sClient.Update(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	e.reconcile(run.Name)
	if h := e.get(run.Name).Status.History; len(h) != maxHistory {
		t.Fatalf("%d history records", len(h))
	}
	for _, n := range names {
		if e.exists(&corev1.ConfigMap{}, n) {
			t.Errorf("report ConfigMap %s of the dropped record still there", n)
		}
	}
}
