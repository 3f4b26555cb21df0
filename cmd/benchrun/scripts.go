package main

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
)

// scriptSources returns the source of every script scenario of run, by scenario name, read
// from the ConfigMaps of the run file (data; binaryData is not supported).
func scriptSources(run *v1alpha1.BenchmarkRun, objs []*unstructured.Unstructured) (map[string]string, error) {
	lookup := configMaps(objs)
	scripts, err := lifecycle.ScriptSources(run, func(name string) (map[string]string, bool, error) {
		data, ok := lookup(name)
		return data, ok, nil
	})
	var se *lifecycle.ScriptError
	if errors.As(err, &se) && se.NoConfigMap {
		return nil, fmt.Errorf("%w: add it to the run file (apiVersion: v1, kind: ConfigMap, data: {%s: ...})", err, se.Key)
	}
	return scripts, err
}

// configMaps looks up the data of the run file's ConfigMaps by name (the last one of that name).
func configMaps(objs []*unstructured.Unstructured) func(name string) (map[string]string, bool) {
	return func(name string) (map[string]string, bool) {
		var cm *unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == "ConfigMap" && o.GetAPIVersion() == "v1" && o.GetName() == name {
				cm = o
			}
		}
		if cm == nil {
			return nil, false
		}
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		return data, true
	}
}
