package validation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInvalidSuitesSameMessagesAsAPIServer runs the envtest suite's invalid suites through the
// offline validator: each must fail with the same text the API server gives.
func TestInvalidSuitesSameMessagesAsAPIServer(t *testing.T) {
	checkInvalidCases(t, "BenchmarkSuite", "invalid-suites.yaml")
}

// TestSuiteChildrenValidated: a suite the suite CRD accepts is still refused offline when a
// child run it expands to is invalid (a variant's open target), naming the child and field.
func TestSuiteChildrenValidated(t *testing.T) {
	v := newValidator(t)
	for _, tc := range []struct{ name, variant, want string }{
		{"semantic", `{name: echo, target: {external: {kind: tcp, addresses: ["e:7"]}}}`,
			"child run s-echo-r1 (variant echo): spec: Invalid value: \"object\": scenarios of type redis.* and ycsb need a Redis endpoint"},
		{"bad address", `{name: bad, target: {external: {kind: redis, addresses: ["no port"]}}}`,
			"spec.target.external.addresses"},
		{"unknown field", `{name: typo, target: {redis: {verzion: "8.4"}}}`,
			`spec.variants[1].target: Invalid value: null: not a BenchmarkRun target: json: unknown field "verzion"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkSuite
metadata: {name: s}
spec:
  template: {target: {redis: {}}, load: {scenarios: [{name: get, type: redis.get}]}}
  variants: [{name: a}, ` + tc.variant + `]
`
			_, err := v.ParseFile(context.Background(), strings.NewReader(doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSuiteSampleValid: the suite sample parses with its suite and no run.
func TestSuiteSampleValid(t *testing.T) {
	v := newValidator(t)
	in, err := os.Open(filepath.Join(repoRoot, "config", "samples", "suite-redis-compare.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	f, err := v.ParseFile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Suites) != 1 || len(f.Runs) != 0 || f.Suites[0].Spec.Repeat != 3 || len(f.Suites[0].Spec.Variants) != 4 {
		t.Errorf("file: %+v", f)
	}
}
