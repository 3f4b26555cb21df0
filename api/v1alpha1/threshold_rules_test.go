package v1alpha1_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestThresholdRulesSameForRunsAndSuites: the CEL patterns of a run threshold's "can never
// fail" and "errorRate is a fraction" rules and a suite threshold's are one pattern each
// (kubebuilder markers cannot share a constant; the messages differ: baseline vs reference).
func TestThresholdRulesSameForRunsAndSuites(t *testing.T) {
	pattern := func(file, message string) string {
		b, err := os.ReadFile(filepath.Join(repoRoot, "api", "v1alpha1", file))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`\.matches\(('[^']*')\)"?,message="[^"]*` + regexp.QuoteMeta(message)).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no rule whose message has %q", file, message)
		}
		return string(m[1])
	}
	for _, message := range []string{"can never fail", "errorRate is a fraction from 0 to 1"} {
		if run, suite := pattern("verdict_types.go", message), pattern("suite_types.go", message); run != suite {
			t.Errorf("%q: the run's pattern\n%s\nand the suite's\n%s\ndiffer", message, run, suite)
		}
	}
}
