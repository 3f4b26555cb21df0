package v1alpha1_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	benchv1alpha1 "github.com/benchrun/benchrun/api/v1alpha1"
)

var suitesGVR = benchv1alpha1.GroupVersion.WithResource("benchmarksuites")

// InvalidSuite is one invalid suite spec and the error text a user must see.
type InvalidSuite struct {
	Name string `json:"name"`
	// SuiteName is the suite's metadata.name when the case is about it (default bad-N).
	SuiteName string   `json:"suiteName,omitempty"`
	Spec      string   `json:"spec"`
	Want      []string `json:"want"`
}

// LoadInvalidSuites reads testdata/invalid-suites.yaml.
func LoadInvalidSuites(t *testing.T, path string) []InvalidSuite {
	t.Helper()
	return loadCases[InvalidSuite](t, path, yaml.UnmarshalStrict)
}

// suiteFromSpec is a BenchmarkSuite named name with spec (YAML).
func suiteFromSpec(t *testing.T, name, spec string) *unstructured.Unstructured {
	t.Helper()
	u := runFromSpec(t, name, spec)
	u.SetKind("BenchmarkSuite")
	return u
}

// TestInvalidSuitesAreRejected: the API server refuses each bad suite naming the field.
func TestInvalidSuitesAreRejected(t *testing.T) {
	cases := LoadInvalidSuites(t, filepath.Join("testdata", "invalid-suites.yaml"))
	ns := createNamespace(t)
	for i, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			name := fmt.Sprintf("bad-%d", i)
			if tc.SuiteName != "" {
				name = tc.SuiteName
			}
			_, err := dyn.Resource(suitesGVR).Namespace(ns).Create(context.Background(), suiteFromSpec(t, name, tc.Spec),
				metav1.CreateOptions{FieldValidation: "Strict"})
			wantRefused(t, err, tc.Want)
		})
	}
}

// TestSuiteDefaults: a minimal suite is accepted; repeat, continueOnFailure and the
// template's defaults are filled in.
func TestSuiteDefaults(t *testing.T) {
	ns := createNamespace(t)
	created, err := dyn.Resource(suitesGVR).Namespace(ns).Create(context.Background(), suiteFromSpec(t, "ok", `
template: {target: {redis: {}}, load: {scenarios: [{name: get, type: redis.get}]}}
variants:
- {name: redis8}
- {name: io8, redis: {config: {io-threads: "8"}}}
- {name: tair, target: {external: {kind: redis, addresses: ["r-bp1.redis.rds.aliyuncs.com:6379"]}}}
sweeps: [{field: workers, values: [1, 2]}]
thresholds: [{variant: io8, expr: "cps >= -5%", significance: true}]`), metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatal(err)
	}
	var s benchv1alpha1.BenchmarkSuite
	data, _ := created.MarshalJSON()
	if err := yaml.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Spec.Repeat != 1 || s.Spec.ContinueOnFailure == nil || !*s.Spec.ContinueOnFailure || s.Spec.Template.Load.Workers != 1 {
		t.Errorf("defaults: repeat %d continueOnFailure %v workers %d", s.Spec.Repeat, s.Spec.ContinueOnFailure, s.Spec.Template.Load.Workers)
	}
	if s.Spec.Variants[2].Target == nil || s.Spec.Variants[2].Target.External == nil || s.Spec.Variants[2].Target.External.Addresses[0] == "" {
		t.Errorf("variant target not kept: %+v", s.Spec.Variants[2].Target)
	}
}

// TestSuiteSpecImmutable: a suite's spec cannot change once created (its children were
// expanded from it); its labels can.
func TestSuiteSpecImmutable(t *testing.T) {
	ns := createNamespace(t)
	res := dyn.Resource(suitesGVR).Namespace(ns)
	created, err := res.Create(context.Background(), suiteFromSpec(t, "fixed", `
template: {target: {redis: {}}, load: {scenarios: [{name: get, type: redis.get}]}}
variants: [{name: a}, {name: b, redis: {version: "8.4"}}]`), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.SetLabels(map[string]string{"team": "db"})
	if created, err = res.Update(context.Background(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("label update refused: %v", err)
	}
	if err := unstructured.SetNestedField(created.Object, int64(3), "spec", "repeat"); err != nil {
		t.Fatal(err)
	}
	_, err = res.Update(context.Background(), created, metav1.UpdateOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec of a BenchmarkSuite cannot change") {
		t.Errorf("spec update: %v", err)
	}
}
