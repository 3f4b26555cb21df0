package v1alpha1_test

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// InvalidRun is one invalid spec and the error text a user must see.
type InvalidRun struct {
	Name string `json:"name"`
	// RunName is the BenchmarkRun's metadata.name when the case is about it (default bad-N).
	RunName string   `json:"runName,omitempty"`
	Spec    string   `json:"spec"`
	Want    []string `json:"want"`
}

// LoadInvalidRuns reads testdata/invalid-runs.yaml.
func LoadInvalidRuns(t *testing.T, path string) []InvalidRun {
	t.Helper()
	return loadCases[InvalidRun](t, path, yaml.Unmarshal)
}

// loadCases reads a YAML list of test cases from path with unmarshal.
func loadCases[T any](t *testing.T, path string, unmarshal func([]byte, any, ...yaml.JSONOpt) error) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []T
	if err := unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cases
}

// wantRefused fails unless err is a refusal whose text holds every one of want and no raw CEL
// error.
func wantRefused(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want rejection containing %q", want)
	}
	CheckNoRawCELError(t, err)
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not contain %q:\n%v", w, err)
		}
	}
}

// rawCELErrors are fragments of CEL evaluation errors; a user must never see one (every rule
// guards its optional fields with has()).
var rawCELErrors = []string{"evaluation error", "no such key", "no such overload", "no matching overload", "compilation failed", "estimated rule cost", "cost limit"}

// CheckNoRawCELError fails t when an admission error shows a raw CEL evaluation error.
func CheckNoRawCELError(t *testing.T, err error) {
	t.Helper()
	for _, raw := range rawCELErrors {
		if strings.Contains(strings.ToLower(err.Error()), raw) {
			t.Errorf("error shows a raw CEL error (%q):\n%v", raw, err)
		}
	}
}
