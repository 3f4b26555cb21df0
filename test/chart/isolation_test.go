package chart

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRunnerIsolationPolicyDryRun: on a cluster serving ValidatingAdmissionPolicy the chart
// renders the runner-isolation, pause-containers and manager-scope policies and their
// bindings, and the API server accepts them
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
			kinds[o.GetKind()+" "+strings.TrimPrefix(o.GetName(), "rel-benchrun-")]++
			warnings.take()
			if err := k8s.Create(ctx, o, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
				t.Errorf("%s %s: server-side dry-run: %v", o.GetKind(), o.GetName(), err)
			}
			if w := warnings.take(); len(w) > 0 {
				t.Errorf("%s %s: API server warnings: %v", o.GetKind(), o.GetName(), w)
			}
		}
	}
	for _, name := range []string{"runner-isolation", "pause-containers", "manager-scope"} {
		if kinds["ValidatingAdmissionPolicy "+name] != 1 || kinds["ValidatingAdmissionPolicyBinding "+name] != 1 {
			t.Fatalf("rendered %v: want the %s policy and binding", kinds, name)
		}
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
