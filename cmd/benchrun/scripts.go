package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// scriptSources returns the source of every script scenario of run, by scenario name, read
// from the ConfigMaps of the run file (data, or binaryData is not supported).
func scriptSources(run *v1alpha1.BenchmarkRun, objs []*unstructured.Unstructured) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range run.Spec.Load.Scenarios {
		if s.Type != v1alpha1.ScenarioScript {
			continue
		}
		if s.Script == nil {
			return nil, fmt.Errorf("scenario %q: type script needs script.configMapName", s.Name)
		}
		key := s.Script.Key
		if key == "" {
			key = "script.js"
		}
		var cm *unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == "ConfigMap" && o.GetAPIVersion() == "v1" && o.GetName() == s.Script.ConfigMapName {
				cm = o
			}
		}
		if cm == nil {
			return nil, fmt.Errorf("scenario %q: ConfigMap %q not found: add it to the run file (apiVersion: v1, kind: ConfigMap, data: {%s: ...})",
				s.Name, s.Script.ConfigMapName, key)
		}
		src, found, err := unstructured.NestedString(cm.Object, "data", key)
		if err != nil || !found {
			return nil, fmt.Errorf("scenario %q: ConfigMap %q has no data key %q", s.Name, s.Script.ConfigMapName, key)
		}
		out[s.Name] = src
	}
	return out, nil
}
