// Command workload-cel rewrites the generated blocks of api/v1alpha1 (the ScenarioType Enum
// and the CEL rules listing scenario types) from internal/workload's descriptors; `make
// manifests` runs it from the repository root before controller-gen. See package
// internal/workload/celgen.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchrun/benchrun/internal/workload"
	"github.com/benchrun/benchrun/internal/workload/celgen"
)

func main() {
	if err := run(filepath.Join("api", "v1alpha1")); err != nil {
		fmt.Fprintln(os.Stderr, "workload-cel:", err)
		os.Exit(1)
	}
}

// run rewrites the files of celgen.Files under dir; every block must be met.
func run(dir string) error {
	blocks, err := celgen.Blocks(workload.All())
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, f := range celgen.Files {
		path := filepath.Join(dir, f)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := celgen.Rewrite(src, blocks, used)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !bytes.Equal(src, out) {
			if err := os.WriteFile(path, out, 0o644); err != nil { //nolint:gosec // a source file, world-readable like the others
				return err
			}
		}
	}
	for name := range blocks {
		if !used[name] {
			return fmt.Errorf("no block %s in %v", name, celgen.Files)
		}
	}
	return nil
}
