package validation

import (
	"context"
	"testing"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"sigs.k8s.io/yaml"

	"github.com/benchrun/benchrun/config/crd"
)

// TestCRDIsAccepted runs the API server's own CRD validation on the embedded CRD: every CEL
// rule compiles within the per-rule and whole-schema cost budgets (the offline validator
// evaluates rules without estimating their cost, so a rule over budget would pass here and be
// refused by `kubectl apply` of the CRD).
func TestCRDIsAccepted(t *testing.T) {
	for name, manifest := range map[string][]byte{"benchmarkruns": crd.BenchmarkRuns, "benchmarksuites": crd.BenchmarkSuites} {
		t.Run(name, func(t *testing.T) { checkCRDAccepted(t, manifest) })
	}
}

// checkCRDAccepted runs the API server's CRD validation on one CRD manifest.
func checkCRDAccepted(t *testing.T, manifest []byte) {
	t.Helper()
	var v1 apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(manifest, &v1); err != nil {
		t.Fatal(err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&v1)
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, &internal, nil); err != nil {
		t.Fatal(err)
	}
	for _, e := range apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), &internal) {
		t.Error(e)
	}
}
