package validation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var repoRoot = filepath.Join("..", "..")

func newValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSamplesAreValid: every sample the API server accepts (see the envtest suite) is valid offline too.
func TestSamplesAreValid(t *testing.T) {
	v := newValidator(t)
	files, _ := filepath.Glob(filepath.Join(repoRoot, "config", "samples", "*.yaml"))
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		in, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := v.ParseFile(context.Background(), in)
		_ = in.Close()
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, run := range file.Runs {
			if run.Spec.Load.Workers < 1 || run.Spec.Load.Runners.Parallelism < 1 || run.Spec.Cleanup.Policy == "" {
				t.Errorf("%s: defaults not applied: %+v", f, run.Spec.Load)
			}
		}
	}
}

// TestInvalidRunsSameMessagesAsAPIServer runs the envtest suite's invalid specs through the
// offline validator: each must fail with the same text the API server gives.
func TestInvalidRunsSameMessagesAsAPIServer(t *testing.T) {
	checkInvalidCases(t, "BenchmarkRun", "invalid-runs.yaml")
}

// checkInvalidCases validates offline each case of api/v1alpha1/testdata/file as a kind
// object: each must fail naming what the case wants, with no raw CEL error in the text.
func checkInvalidCases(t *testing.T, kind, file string) {
	t.Helper()
	v := newValidator(t)
	data, err := os.ReadFile(filepath.Join(repoRoot, "api", "v1alpha1", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name      string   `json:"name"`
		RunName   string   `json:"runName"`
		SuiteName string   `json:"suiteName"`
		Spec      string   `json:"spec"`
		Want      []string `json:"want"`
	}
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			name := cmp.Or(tc.RunName, tc.SuiteName, fmt.Sprintf("bad-%d", i))
			doc := fmt.Sprintf("apiVersion: bench.benchrun.io/v1alpha1\nkind: %s\nmetadata: {name: %q}\nspec:\n%s",
				kind, name, indent(tc.Spec))
			_, err := v.ParseFile(context.Background(), strings.NewReader(doc))
			var verr *Error
			if !errors.As(err, &verr) {
				t.Fatalf("want a validation error, got %v", err)
			}
			for _, raw := range []string{"evaluation error", "no such key", "no such overload", "no matching overload", "compilation failed", "cost limit"} {
				if strings.Contains(strings.ToLower(err.Error()), raw) {
					t.Errorf("error shows a raw CEL error (%q):\n%v", raw, err)
				}
			}
			for _, w := range tc.Want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestFileErrors(t *testing.T) {
	v := newValidator(t)
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "", "no BenchmarkRun in the file"},
		{"not yaml", "a: [b", "not valid YAML or JSON"},
		{"only a secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n", "no BenchmarkRun in the file"},
		{"wrong version", "apiVersion: bench.benchrun.io/v1\nkind: BenchmarkRun\nmetadata: {name: x}\nspec: {}\n", "expected apiVersion bench.benchrun.io/v1alpha1"},
		{"no name", "apiVersion: bench.benchrun.io/v1alpha1\nkind: BenchmarkRun\nspec: {target: {redis: {}}, load: {scenarios: [{name: a, type: redis.get}]}}\n", "metadata.name: Required value"},
		{"bad name", "apiVersion: bench.benchrun.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: My_Run}\nspec: {target: {redis: {}}, load: {scenarios: [{name: a, type: redis.get}]}}\n", "metadata.name: Invalid value: \"My_Run\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.ParseFile(context.Background(), strings.NewReader(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
