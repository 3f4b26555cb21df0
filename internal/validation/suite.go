package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1alpha1 "github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/suite"
)

// parseSuite validates a BenchmarkSuite document (document i of the file) with the suite
// CRD's schema and rules, then every child run it expands to with the BenchmarkRun CRD's, as
// the operator's server-side dry run does when the suite starts: a variant's target, whose
// schema the suite CRD leaves open, is checked in full here (unknown fields included).
func (v *Validator) parseSuite(ctx context.Context, u *unstructured.Unstructured, i int) (*benchv1alpha1.BenchmarkSuite, error) {
	name := u.GetName()
	if name == "" {
		name = fmt.Sprintf("document %d", i)
	}
	if errs := v.suites.Validate(ctx, u.Object); len(errs) > 0 {
		return nil, &Error{Kind: "BenchmarkSuite", Name: name, Errs: errs}
	}
	var s benchv1alpha1.BenchmarkSuite
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s); err != nil {
		return nil, fmt.Errorf("document %d: %w", i, err)
	}
	if errs := strictTargets(u); len(errs) > 0 {
		return nil, &Error{Kind: "BenchmarkSuite", Name: name, Errs: errs}
	}
	children, err := suite.Expand(&s)
	if err != nil {
		return nil, &Error{Kind: "BenchmarkSuite", Name: name, Errs: field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for _, c := range children {
		if seen[c.Variant+"/"+c.Sweep()] { // repetitions have the same spec
			continue
		}
		seen[c.Variant+"/"+c.Sweep()] = true
		for _, e := range v.validateChild(ctx, u.GetNamespace(), &c) {
			e.Field = fmt.Sprintf("child run %s (variant %s): %s", c.Name, c.Variant, e.Field)
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, &Error{Kind: "BenchmarkSuite", Name: name, Errs: errs}
	}
	return &s, nil
}

// validateChild validates one child run as the API server validates the BenchmarkRun.
func (v *Validator) validateChild(ctx context.Context, ns string, c *suite.Child) field.ErrorList {
	run := benchv1alpha1.BenchmarkRun{Spec: c.Spec}
	run.APIVersion, run.Kind = benchv1alpha1.GroupVersion.String(), "BenchmarkRun"
	run.Name, run.Namespace = c.Name, ns
	data, err := json.Marshal(&run)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	child := &unstructured.Unstructured{}
	if err := child.UnmarshalJSON(data); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	unstructured.RemoveNestedField(child.Object, "status")
	unstructured.RemoveNestedField(child.Object, "metadata", "creationTimestamp")
	return v.Validate(ctx, child.Object)
}

// strictTargets refuses unknown fields in spec.variants[].target (left open by the suite
// CRD): each is decoded into a BenchmarkRun target with unknown fields disallowed.
func strictTargets(u *unstructured.Unstructured) field.ErrorList {
	variants, _, _ := unstructured.NestedSlice(u.Object, "spec", "variants")
	var errs field.ErrorList
	for i, raw := range variants {
		m, _ := raw.(map[string]any)
		target, ok := m["target"]
		if !ok {
			continue
		}
		data, err := json.Marshal(target)
		if err != nil {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var t benchv1alpha1.TargetSpec
		if err := dec.Decode(&t); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec", "variants").Index(i).Child("target"), nil,
				"not a BenchmarkRun target: "+err.Error()))
		}
	}
	return errs
}
