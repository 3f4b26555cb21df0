//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// (j) thresholds and a baseline on real pods: a reference run passes its thresholds; a second
// run compares itself with it (figures copied at start, deltas per scenario) and fails a
// relative threshold it cannot meet → phase Failed, reason ThresholdsNotMet, results kept.
func TestThresholdsAndBaseline(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "verdict")
	scenarios := "\n    scenarios:\n    - name: ping\n      type: redis.ping\n    - name: get_1k\n      type: redis.get\n      bodySize: 1024"
	target := "    redis:\n      mode: single"
	ref := runManifest("ref", target, scenarios, 1, "OnSuccess") +
		"  thresholds:\n  - {expr: 'p99 < 60000'}\n  - {expr: 'errorRate <= 0.01'}\n  - {expr: 'cps > 1'}\n"
	run := succeed(t, ns, "ref", ref, []string{"ping", "get_1k"})
	if run.Status.Verdict != v1alpha1.VerdictPassed || len(run.Status.Thresholds) != 6 ||
		!meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionThresholdsMet) {
		t.Fatalf("reference: verdict %s thresholds %+v", run.Status.Verdict, run.Status.Thresholds)
	}

	cand := runManifest("cand", target, scenarios, 1, "Always") +
		"  baseline: {name: ref}\n  thresholds:\n  - {expr: 'p99 < 60000'}\n  - {scenario: ping, expr: 'cps >= +500%'}\n"
	apply(t, ns, cand)
	run = waitPhase(t, ns, "cand", runTimeout, v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed)
	st := run.Status
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionSucceeded)
	if st.Phase != v1alpha1.PhaseFailed || c == nil || c.Reason != v1alpha1.ReasonThresholdsNotMet || st.Verdict != v1alpha1.VerdictFailed {
		t.Fatalf("candidate: phase %s verdict %s conditions %s", st.Phase, st.Verdict, conditionsText(run))
	}
	if !strings.Contains(c.Message, "ping: cps >= +500%") || st.Partial || len(st.Results) != 2 {
		t.Errorf("candidate: message %q partial %v results %d", c.Message, st.Partial, len(st.Results))
	}
	if b := st.Baseline; b == nil || b.Name != "ref" || len(b.Results) != 2 || len(b.Deltas) != 2 || b.Results[0].CPS <= 0 {
		t.Fatalf("candidate baseline %+v", st.Baseline)
	}
	for _, tr := range st.Thresholds {
		if tr.Expr == "cps >= +500%" && (tr.Passed || tr.Limit <= st.Baseline.Results[0].CPS*5) {
			t.Errorf("relative threshold row %+v", tr)
		}
	}
	report := checkReport(t, ns, run)
	for _, want := range []string{"Verdict: Failed", "Against baseline ref:", "| ping | cps >= +500% |"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if out := mustKubectl(t, "", "-n", ns, "get", "br", "cand"); !strings.Contains(out, "VERDICT") || !strings.Contains(out, "Failed") {
		t.Errorf("kubectl get br:\n%s", out)
	}
	metric("verdict_cps_delta_ping_percent", "%.2f", st.Baseline.Deltas[0].CPSPercent)
}
