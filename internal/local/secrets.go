package local

import (
	"encoding/base64"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// Secrets are the Secret objects of a run file: name → key → value.
type Secrets map[string]map[string]string

// SecretsFrom collects the Secrets among a run file's objects (stringData wins over data, as
// the API server does).
func SecretsFrom(objs []*unstructured.Unstructured) (Secrets, error) {
	out := Secrets{}
	for _, o := range objs {
		if o.GetKind() != "Secret" || o.GetAPIVersion() != "v1" {
			continue
		}
		name := o.GetName()
		vals := map[string]string{}
		data, _, _ := unstructured.NestedMap(o.Object, "data")
		for k, v := range data {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("secret %q: data.%s is not a string", name, k)
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("secret %q: data.%s is not valid base64 (use stringData for plain text)", name, k)
			}
			vals[k] = string(b)
		}
		sdata, _, _ := unstructured.NestedMap(o.Object, "stringData")
		for k, v := range sdata {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("secret %q: stringData.%s is not a string", name, k)
			}
			vals[k] = s
		}
		out[name] = vals
	}
	return out, nil
}

// Get returns the value of ref, or an error naming what is missing (never the value).
func (s Secrets) Get(ref v1alpha1.SecretKeyRef) (string, error) {
	vals, ok := s[ref.Name]
	if !ok {
		return "", fmt.Errorf("secret %q not found: add it to the run file (apiVersion: v1, kind: Secret, stringData: {%s: ...})", ref.Name, ref.Key)
	}
	v, ok := vals[ref.Key]
	if !ok {
		return "", fmt.Errorf("secret %q has no key %q", ref.Name, ref.Key)
	}
	return v, nil
}

// optional resolves ref when set ("" when nil).
func (s Secrets) optional(ref *v1alpha1.SecretKeyRef) (string, error) {
	if ref == nil {
		return "", nil
	}
	return s.Get(*ref)
}
