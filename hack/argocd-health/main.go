// Command argocd-health runs benchrun's Argo CD health check (config/argocd/health.lua) with
// Argo CD's own Lua health code (github.com/argoproj/argo-cd/v3/util/lua), configured the way
// an Argo CD installation is by `resource.customizations.health.bench.benchrun.io_BenchmarkRun`,
// against every case of a health_test.yaml in Argo CD's format. It exits non-zero on the first
// case whose health differs from the expected one.
//
// Usage: go run . -lua ../../config/argocd/health.lua -tests ../../config/argocd/health_test.yaml
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// testFile is Argo CD's health_test.yaml format (resource_customizations/*/*/health_test.yaml).
type testFile struct {
	Tests []struct {
		InputPath    string              `json:"inputPath"`
		HealthStatus health.HealthStatus `json:"healthStatus"`
	} `json:"tests"`
}

func main() {
	luaPath := flag.String("lua", "health.lua", "the health script")
	testsPath := flag.String("tests", "health_test.yaml", "Argo CD health_test.yaml; inputPath is relative to its directory")
	flag.Parse()
	if err := run(*luaPath, *testsPath); err != nil {
		fmt.Fprintln(os.Stderr, "argocd-health:", err)
		os.Exit(1)
	}
}

func run(luaPath, testsPath string) error {
	script, err := os.ReadFile(luaPath)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(testsPath)
	if err != nil {
		return err
	}
	var tf testFile
	if err := yaml.UnmarshalStrict(raw, &tf); err != nil {
		return fmt.Errorf("%s: %w", testsPath, err)
	}
	if len(tf.Tests) == 0 {
		return fmt.Errorf("%s: no tests", testsPath)
	}
	// The keys Argo CD derives from resource.customizations.health.bench.benchrun.io_BenchmarkRun
	// and ..._BenchmarkSuite: the script under test is registered for both kinds (health.lua
	// for runs, suite-health.lua for suites), each test's object selects it by its kind.
	overrides := lua.ResourceHealthOverrides{
		"bench.benchrun.io/BenchmarkRun":   v1alpha1.ResourceOverride{HealthLua: string(script)},
		"bench.benchrun.io/BenchmarkSuite": v1alpha1.ResourceOverride{HealthLua: string(script)},
	}
	failed := 0
	for _, tc := range tf.Tests {
		obj, err := readObject(filepath.Join(filepath.Dir(testsPath), tc.InputPath))
		if err != nil {
			return err
		}
		got, err := overrides.GetResourceHealth(obj)
		switch {
		case err != nil:
			fmt.Printf("FAIL %s: %v\n", tc.InputPath, err)
			failed++
		case got == nil:
			fmt.Printf("FAIL %s: no health (script not selected for %s)\n", tc.InputPath, obj.GroupVersionKind())
			failed++
		case got.Status != tc.HealthStatus.Status || got.Message != tc.HealthStatus.Message:
			fmt.Printf("FAIL %s: got %s %q, want %s %q\n", tc.InputPath, got.Status, got.Message, tc.HealthStatus.Status, tc.HealthStatus.Message)
			failed++
		default:
			fmt.Printf("ok   %s: %s %q\n", tc.InputPath, got.Status, got.Message)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cases failed", failed, len(tf.Tests))
	}
	return nil
}

func readObject(path string) (*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &unstructured.Unstructured{Object: obj}, nil
}
