// Package validation checks BenchmarkRun documents without a cluster, with the same
// structural schema, defaults and CEL rules the API server applies to the CRD. The
// local runner (`benchrun validate`, `benchrun run`) uses it so a bad run.yaml fails
// there with the message `kubectl apply` would print.
//
// One validation path (issue 25): every rule is in the CRD (OpenAPI schema and CEL), so
// admission and this validator run the same rules with the same words; there is no validating
// webhook. Decision: keep CEL. A webhook would need serving certificates and a network path from
// the API server to the manager in every install mode, and a second implementation of each rule
// offline. Rules that need a scenario's length compute it in CEL from the same fields as
// workload.ScenarioLength (held equal by length_test.go); rules over unbounded maps or strings
// are bounded by their types (RedisConfigValue, ParamValue, ResourceList and Quantity) so they
// fit the cost budget, which crd_test.go checks with the API server's own CRD validation:
// resource names and quantities in requests/limits and params batch values are refused at
// admission with an example. Faults of different scenarios cannot overlap: every fault must end
// inside its scenario (of workload.ScenarioLength) and scenarios run one after another. The rules
// on metadata.name name it as their field (the CRD declares metadata.name for that:
// hack/crd-metadata-name), so both paths print "metadata.name: Invalid value: \"object\"".
// As the API server, no CEL rule runs after a type error (blockingError).
package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1validation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	benchv1alpha1 "github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/config/crd"
)

// Validator validates BenchmarkRun (or BenchmarkSuite) objects like the API server does for
// the installed CRD.
type Validator struct {
	kind       string
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
	// suites validates BenchmarkSuites in run files (built by New).
	suites *Validator
}

// New builds a Validator from the CRDs embedded in the binary: BenchmarkRuns, and
// BenchmarkSuites in run files.
func New() (*Validator, error) {
	v, err := NewFromCRD(crd.BenchmarkRuns)
	if err != nil {
		return nil, err
	}
	if v.suites, err = NewFromCRD(crd.BenchmarkSuites); err != nil {
		return nil, err
	}
	return v, nil
}

// NewFromCRD builds a Validator from a CRD manifest (YAML) holding version v1alpha1.
func NewFromCRD(manifest []byte) (*Validator, error) {
	var def apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(manifest, &def); err != nil {
		return nil, fmt.Errorf("decoding CRD: %w", err)
	}
	for _, v := range def.Spec.Versions {
		if v.Name != benchv1alpha1.GroupVersion.Version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			return nil, fmt.Errorf("converting CRD schema: %w", err)
		}
		structural, err := structuralschema.NewStructural(&internal)
		if err != nil {
			return nil, fmt.Errorf("CRD schema is not structural: %w", err)
		}
		sv, _, err := apiservervalidation.NewSchemaValidator(&internal)
		if err != nil {
			return nil, fmt.Errorf("building schema validator: %w", err)
		}
		return &Validator{
			kind:       def.Spec.Names.Kind,
			structural: structural,
			schema:     sv,
			cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
		}, nil
	}
	return nil, fmt.Errorf("CRD has no schema for version %s", benchv1alpha1.GroupVersion.Version)
}

// Validate checks one object (a decoded BenchmarkRun document) the way `kubectl apply`
// with strict field validation is checked by the API server: unknown fields, defaults,
// OpenAPI schema, then CEL rules. It defaults obj in place and returns every error found.
func (v *Validator) Validate(ctx context.Context, obj map[string]any) field.ErrorList {
	var errs field.ErrorList
	u := &unstructured.Unstructured{Object: obj}
	if u.GetAPIVersion() != benchv1alpha1.GroupVersion.String() || u.GetKind() != v.kind {
		return field.ErrorList{field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion()+" "+u.GetKind(),
			"expected apiVersion "+benchv1alpha1.GroupVersion.String()+" and kind "+v.kind)}
	}
	for _, p := range pruning.PruneWithOptions(obj, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		errs = append(errs, field.Invalid(field.NewPath(p), nil, fmt.Sprintf("unknown field %q", p)))
	}
	structuraldefaulting.Default(obj, v.structural)
	if u.GetName() == "" && u.GetGenerateName() == "" { // generateName: Argo CD hooks, kubectl create
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "a "+v.kind+" needs a name"))
	}
	named := u
	if u.GetName() != "" || u.GetGenerateName() != "" {
		if u.GetName() == "" { // the API server names it generateName + 5 characters before validating
			named = u.DeepCopy()
			named.SetName(u.GetGenerateName() + "x0000")
		}
		errs = append(errs, metav1validation.ValidateObjectMetaAccessor(named, true, func(name string, prefix bool) []string {
			return metav1validation.NameIsDNSSubdomain(name, prefix)
		}, field.NewPath("metadata"))...)
	}
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, v.schema)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	// As the API server (customResourceStrategy.Validate): after a type error, a required field
	// missing, a value not supported or a list or string too long, no CEL rule runs (their
	// errors would only repeat the first in raw CEL words).
	if blocked, notice := blockingError(errs); blocked {
		return append(errs, notice)
	}
	// CEL sees the name the API server would (generateName + 5 characters).
	celErrs, _ := v.cel.Validate(ctx, nil, v.structural, named.Object, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// blockingError is the API server's hasBlockingErr (k8s.io/apiextensions-apiserver
// pkg/registry/customresource/strategy.go): true, with the notice it appends, when errs hold
// an error after which CEL rules are not evaluated.
func blockingError(errs field.ErrorList) (bool, *field.Error) {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return false, nil
}

// Error is a file that failed validation; its message lists every problem, one per line,
// in the API server's wording.
type Error struct {
	// Kind is BenchmarkRun or BenchmarkSuite (empty: BenchmarkRun).
	Kind string
	// Name is the object's name (or its position in the file when unnamed).
	Name string
	// Errs are the problems found.
	Errs field.ErrorList
}

// Error implements error.
func (e *Error) Error() string {
	lines := make([]string, 0, len(e.Errs))
	for _, fe := range e.Errs {
		lines = append(lines, "  "+fe.Error())
	}
	kind := e.Kind
	if kind == "" {
		kind = "BenchmarkRun"
	}
	return fmt.Sprintf("%s %q is invalid:\n%s", kind, e.Name, strings.Join(lines, "\n"))
}

// File is a run file's content: its BenchmarkRuns (validated and defaulted) and the Secrets and
// ConfigMaps it carries (for secret references and custom scripts when run locally).
type File struct {
	// Runs are the BenchmarkRuns in file order.
	Runs []*benchv1alpha1.BenchmarkRun
	// Suites are the BenchmarkSuites in file order (validated with every child run they expand to).
	Suites []*benchv1alpha1.BenchmarkSuite
	// Objects are the other documents (Secrets, ConfigMaps), untouched.
	Objects []*unstructured.Unstructured
}

// ParseFile decodes a multi-document YAML or JSON run file and validates every BenchmarkRun.
// The returned error is an *Error for the first invalid run, or a decoding error.
func (v *Validator) ParseFile(ctx context.Context, r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	f := &File{}
	for i := 1; ; i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("document %d: not valid YAML or JSON: %w", i, err)
		}
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		// Decode as the API server does: integers stay int64 (CEL tells int from double).
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		obj := u.Object
		if u.GetNamespace() == "" {
			u.SetNamespace("default") // as kubectl does for a namespaced object
		}
		if u.GetKind() == "BenchmarkSuite" && v.suites != nil {
			s, err := v.parseSuite(ctx, u, i)
			if err != nil {
				return nil, err
			}
			f.Suites = append(f.Suites, s)
			continue
		}
		if u.GetKind() != "BenchmarkRun" {
			f.Objects = append(f.Objects, u)
			continue
		}
		if errs := v.Validate(ctx, obj); len(errs) > 0 {
			name := u.GetName()
			if name == "" {
				name = fmt.Sprintf("document %d", i)
			}
			return nil, &Error{Name: name, Errs: errs}
		}
		var run benchv1alpha1.BenchmarkRun
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &run); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		f.Runs = append(f.Runs, &run)
	}
	if len(f.Runs) == 0 && len(f.Suites) == 0 {
		return nil, errors.New("no BenchmarkRun in the file (expected apiVersion: bench.benchrun.io/v1alpha1, kind: BenchmarkRun or BenchmarkSuite)")
	}
	return f, nil
}
