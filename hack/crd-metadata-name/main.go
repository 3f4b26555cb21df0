// Command crd-metadata-name declares metadata.name in the root schema of the CRDs controller-gen
// wrote (make manifests runs it after controller-gen), so the root CEL rules about a run's or a
// suite's name can name it as their field (fieldPath: .metadata.name): the API server then reports
// them at metadata.name, not at the object's root ("<nil>"). A CRD may restrict metadata.name and
// metadata.generateName only (k8s.io/apiextensions-apiserver validateStructuralMetadataInvariants);
// controller-gen has no marker for it.
//
// Usage: go run ./hack/crd-metadata-name FILE...
package main

import (
	"bytes"
	"fmt"
	"os"
)

// root is the root schema's metadata as controller-gen writes it (openAPIV3Schema.properties).
var root = []byte("\n          metadata:\n            type: object\n")

// named is the same with metadata.name declared as a string.
var named = []byte("\n          metadata:\n            properties:\n              name:\n                description: The object's name, a DNS label (lowercase letters, digits and -,\n                  starting with a letter) of at most 236 characters for a run, 30 for a suite.\n                type: string\n            type: object\n")

func main() {
	for _, f := range os.Args[1:] {
		if err := patch(f); err != nil {
			fmt.Fprintln(os.Stderr, "crd-metadata-name:", err)
			os.Exit(1)
		}
	}
}

// patch rewrites one CRD file; a file already patched is left as it is.
func patch(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if bytes.Count(b, named) == 1 {
		return nil
	}
	if n := bytes.Count(b, root); n != 1 {
		return fmt.Errorf("%s: %d root metadata schemas found, want 1 (did controller-gen's layout change?)", file, n)
	}
	return os.WriteFile(file, bytes.Replace(b, root, named, 1), 0o644)
}
