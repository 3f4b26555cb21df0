package chart

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRunnerIsolationPolicyDryRun: on a cluster serving ValidatingAdmissionPolicy the chart
// renders the runner-isolation policy and its binding, and the API server accepts both
// (server-side dry-run, strict field validation: the CEL expressions compile); without that
// API (helm template's default capabilities, clusters before 1.30) it renders neither.
func TestRunnerIsolationPolicyDryRun(t *testing.T) {
	ctx := context.Background()
	out, err := render(t, "chart-isolation", "--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objects(t, out) {
		switch o.GetKind() {
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			kinds[o.GetKind()]++
			warnings.take()
			if err := k8s.Create(ctx, o, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
				t.Errorf("%s %s: server-side dry-run: %v", o.GetKind(), o.GetName(), err)
			}
			if w := warnings.take(); len(w) > 0 {
				t.Errorf("%s %s: API server warnings: %v", o.GetKind(), o.GetName(), w)
			}
		}
	}
	if kinds["ValidatingAdmissionPolicy"] != 1 || kinds["ValidatingAdmissionPolicyBinding"] != 1 {
		t.Fatalf("rendered %v: want the runner-isolation policy and binding", kinds)
	}
	out, err = render(t, "chart-isolation")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objects(t, out) {
		if o.GetKind() == "ValidatingAdmissionPolicy" {
			t.Fatal("policy rendered without the API in the capabilities")
		}
	}
}
