package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// docsBlock is one ```yaml block of a Markdown file.
type docsBlock struct {
	file string // path relative to the repository root
	line int    // line of the opening fence
	text string // the block's content, fences excluded
}

var (
	docsFenceOpen  = regexp.MustCompile("^```yaml\\s*$")
	docsFenceClose = regexp.MustCompile("^```\\s*$")
	docsSnippet    = regexp.MustCompile(`^--8<--\s*"([^"]+)"\s*$`)
	docsBase       = regexp.MustCompile(`(?m)^#\s*base:\s*(\S+)\s*$`)
	// docsRunKeys are spec fields; a block with one of them at the top level is an unwrapped
	// fragment, which could not be validated.
	docsRunKeys = []string{"target", "load", "scenarios", "thresholds", "baseline", "faults", "collect", "cleanup", "timeouts"}
)

// docsFiles are README.md and every Markdown page of the docs site.
func docsFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// docsYAMLBlocks returns the ```yaml blocks of a Markdown file.
func docsYAMLBlocks(t *testing.T, file string) []docsBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docsBlock
	var cur *docsBlock
	var body []string
	for i, l := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && docsFenceOpen.MatchString(l):
			cur, body = &docsBlock{file: file, line: i + 1}, nil
		case cur != nil && docsFenceClose.MatchString(l):
			cur.text = strings.Join(body, "\n")
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body = append(body, l)
		}
	}
	return blocks
}

// docsSamples maps each sample's content (trailing newlines trimmed) to its path.
func docsSamples(t *testing.T) map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot, "config", "samples", "*.yaml"))
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, f)
		out[strings.TrimRight(string(data), "\n")] = rel
	}
	return out
}

// docsParse validates a run file's content the way `benchrun validate` does.
func docsParse(v *Validator, data []byte) error {
	_, err := v.ParseFile(context.Background(), bytes.NewReader(data))
	return err
}

// docsDocuments splits a YAML block into its documents, decoded.
func docsDocuments(text string) ([]map[string]any, error) {
	var docs []map[string]any
	for _, part := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(part), &m); err != nil {
			return nil, err
		}
		if m != nil {
			docs = append(docs, m)
		}
	}
	return docs, nil
}

// docsMerge merges fragment into base: maps recursively, anything else replaced.
func docsMerge(base, fragment map[string]any) {
	for k, fv := range fragment {
		bm, bok := base[k].(map[string]any)
		fm, fok := fv.(map[string]any)
		if bok && fok {
			docsMerge(bm, fm)
			continue
		}
		base[k] = fv
	}
}

// docsRunOf returns the BenchmarkRun document of a sample file.
func docsRunOf(path string) (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		return nil, err
	}
	docs, err := docsDocuments(string(data))
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		if d["kind"] == "BenchmarkRun" || d["kind"] == "BenchmarkSuite" {
			return d, nil
		}
	}
	return nil, fmt.Errorf("%s holds no BenchmarkRun", path)
}

// docsCheckBlock validates one block; it returns what kind of example it was.
func docsCheckBlock(v *Validator, b docsBlock, samples map[string]string) (string, error) {
	if includes, other := docsIncludes(b.text); len(includes) > 0 {
		if other != "" {
			return "", errors.New("a block with a --8<-- include holds nothing else")
		}
		for _, inc := range includes {
			data, err := os.ReadFile(filepath.Join(repoRoot, inc))
			if err != nil {
				return "", err
			}
			if !bytes.Contains(data, []byte("kind: BenchmarkRun")) && !bytes.Contains(data, []byte("kind: BenchmarkSuite")) {
				continue
			}
			if !strings.HasPrefix(inc, "config/samples/") {
				return "", fmt.Errorf("%s holds a BenchmarkRun or BenchmarkSuite but is not one of config/samples/", inc)
			}
			if err := docsParse(v, data); err != nil {
				return "", fmt.Errorf("%s: %w", inc, err)
			}
		}
		return "include", nil
	}
	docs, err := docsDocuments(b.text)
	if err != nil {
		return "", fmt.Errorf("not valid YAML: %w", err)
	}
	for _, d := range docs {
		if d["kind"] == "BenchmarkRun" || d["kind"] == "BenchmarkSuite" {
			if _, ok := samples[strings.TrimRight(b.text, "\n")]; !ok {
				return "", errors.New("a complete BenchmarkRun or BenchmarkSuite must be one of config/samples/: include it with --8<-- \"config/samples/NAME.yaml\" (or copy the file byte for byte)")
			}
			return "sample", docsParse(v, []byte(b.text))
		}
	}
	if len(docs) != 1 {
		return "other", nil
	}
	if _, ok := docs[0]["spec"]; !ok || docs[0]["kind"] != nil {
		for _, k := range docsRunKeys {
			if _, ok := docs[0][k]; ok {
				return "", fmt.Errorf("top-level %q: write a BenchmarkRun fragment under spec: so it can be validated", k)
			}
		}
		return "other", nil
	}
	return "fragment", docsCheckFragment(v, b.text, docs[0])
}

// docsCheckFragment validates a spec: fragment merged over its base sample (a "# base:
// config/samples/NAME.yaml" comment in the block, default quickstart.yaml).
func docsCheckFragment(v *Validator, text string, fragment map[string]any) error {
	base := "config/samples/quickstart.yaml"
	if m := docsBase.FindStringSubmatch(text); m != nil {
		base = m[1]
	}
	run, err := docsRunOf(base)
	if err != nil {
		return err
	}
	docsMerge(run, fragment)
	data, err := json.Marshal(run)
	if err != nil {
		return err
	}
	if err := docsParse(v, data); err != nil {
		return fmt.Errorf("merged over %s: %w", base, err)
	}
	return nil
}

// docsIncludes returns a block's --8<-- include paths and its other non-empty lines.
func docsIncludes(text string) (includes []string, other string) {
	var rest []string
	for _, l := range strings.Split(text, "\n") {
		if m := docsSnippet.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			includes = append(includes, m[1])
		} else if strings.TrimSpace(l) != "" {
			rest = append(rest, l)
		}
	}
	return includes, strings.Join(rest, "\n")
}

// TestDocsExamplesValidate: every ```yaml block of README.md and docs/ that is a
// BenchmarkRun passes `benchrun validate`'s rules. A complete run is one of config/samples/
// (a pymdownx.snippets include, or the sample byte for byte); a fragment (a block whose top
// level is spec:) is merged over a sample (quickstart.yaml, or the one its "# base:" comment
// names) and the result validated. Other YAML (Helm values, ConfigMaps) is left alone.
func TestDocsExamplesValidate(t *testing.T) {
	v := newValidator(t)
	samples := docsSamples(t)
	kinds := map[string]int{}
	for _, f := range docsFiles(t) {
		for _, b := range docsYAMLBlocks(t, f) {
			kind, err := docsCheckBlock(v, b, samples)
			if err != nil {
				t.Errorf("%s:%d: %v", b.file, b.line, err)
				continue
			}
			kinds[kind]++
		}
	}
	t.Logf("yaml blocks: %v", kinds)
	if kinds["include"] == 0 || kinds["fragment"] == 0 {
		t.Errorf("expected included samples and validated fragments in the docs, found %v", kinds)
	}
}

// TestDocsCheckerRefusesBadExamples: the checker itself fails an inline complete run, an
// invalid fragment and an unwrapped fragment.
func TestDocsCheckerRefusesBadExamples(t *testing.T) {
	v := newValidator(t)
	samples := docsSamples(t)
	for name, text := range map[string]string{
		"inline run":      "apiVersion: bench.benchrun.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: x}\nspec: {}",
		"bad fragment":    "spec:\n  load:\n    workers: -1",
		"unwrapped":       "thresholds:\n- {expr: \"p99 < 5\"}",
		"unknown field":   "spec:\n  load:\n    wrokers: 2",
		"mixed include":   "--8<-- \"config/samples/quickstart.yaml\"\nspec: {}",
		"unknown include": "--8<-- \"config/samples/nope.yaml\"",
	} {
		if _, err := docsCheckBlock(v, docsBlock{file: name, text: text}, samples); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if kind, err := docsCheckBlock(v, docsBlock{text: "# base: config/samples/redis-ha.yaml\nspec:\n  faults:\n  - {scenario: redis_upsert, offset: 10s, action: kill, role: replica}"}, samples); err != nil || kind != "fragment" {
		t.Errorf("a valid fragment: %s %v", kind, err)
	}
}
