package v1alpha1_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestEveryCRDFieldIsDocumented walks the generated CRD schema: every property must carry a
// description, so `kubectl explain benchmarkrun.spec...` documents every field.
func TestEveryCRDFieldIsDocumented(t *testing.T) {
	for _, name := range []string{"bench.benchrun.io_benchmarkruns.yaml", "bench.benchrun.io_benchmarksuites.yaml"} {
		t.Run(name, func(t *testing.T) { checkCRDDocumented(t, name) })
	}
}

// checkCRDDocumented fails t for every property of the CRD file without a description.
func checkCRDDocumented(t *testing.T, file string) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	var missing []string
	var rootPath string
	var walk func(path string, node map[string]any)
	walk = func(path string, node map[string]any) {
		props, _ := node["properties"].(map[string]any)
		for name, p := range props {
			child, _ := p.(map[string]any)
			// The root metadata is documented by the API server's own ObjectMeta schema.
			if d, _ := child["description"].(string); d == "" && (path != rootPath || name != "metadata") {
				missing = append(missing, path+"."+name)
			}
			walk(path+"."+name, child)
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	for _, v := range crd.Spec.Versions {
		rootPath = v.Name
		walk(v.Name, v.Schema.OpenAPIV3Schema)
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("CRD field without description: %s", m)
	}
}
