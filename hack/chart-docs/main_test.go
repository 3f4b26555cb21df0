package main

import (
	"strings"
	"testing"
)

// The committed chart README matches what the generator writes from values.yaml.
func TestChartREADMEUpToDate(t *testing.T) {
	if err := run("../../charts/benchrun", true); err != nil {
		t.Fatal(err)
	}
}

func TestTable(t *testing.T) {
	got, err := Table([]byte(`
image:
  # -- Image repository.
  repository: x/y
  # -- Tag; empty
  # means appVersion.
  tag: ""
# -- Resources | limits.
resources:
  limits: {memory: 1Gi}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `image.repository` | string | `\"x/y\"` | Image repository. |",
		"| `image.tag` | string | `\"\"` | Tag; empty means appVersion. |",
		"| `resources` | object | `{\"limits\":{\"memory\":\"1Gi\"}}` | Resources \\| limits. |",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if _, err := Table([]byte("a: 1\n")); err == nil || !strings.Contains(err.Error(), "a has no `# --` description") {
		t.Errorf("undocumented value: err = %v", err)
	}
}
