package dashboards

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const chartDashboards = "../../charts/benchrun/dashboards"

// panelTypes maps a panel type to its options module in @grafana/schema
// (raw/composable/<type>/panelcfg/x/<Name>PanelCfg_types.gen) and whether that module has a
// FieldConfig (fieldConfig.defaults.custom).
var panelTypes = map[string]struct {
	name        string
	fieldConfig bool
}{
	"timeseries": {"TimeSeries", true},
	"stat":       {"Stat", false},
	"table":      {"Table", true},
	"barchart":   {"BarChart", true},
	"bargauge":   {"BarGauge", false},
	"gauge":      {"Gauge", false},
	"heatmap":    {"Heatmap", true},
	"histogram":  {"Histogram", true},
	"text":       {"Text", false},
}

// wire turns the schema's TypeScript enums into their string values, what JSON holds: the only
// loosening of Grafana's types in this check.
const wire = "type Wire<T> = T extends string ? `${T}` : T extends number | boolean | null | undefined ? T :\n" +
	"  T extends ReadonlyArray<infer U> ? Array<Wire<U>> : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;\n"

// checkSource is the TypeScript that assigns a dashboard's JSON to Grafana's Dashboard type and
// each panel's options (and fieldConfig.defaults.custom) to its panel type's Options
// (FieldConfig): object literals, so tsc reports missing and unknown properties too.
// Queries (panel targets, annotation targets) are DataQuery plus the datasource's own fields,
// as in Grafana, where each datasource extends DataQuery.
func checkSource(t *testing.T, name string, data []byte) string {
	t.Helper()
	var d struct {
		Panels []struct {
			Type        string          `json:"type"`
			Options     json.RawMessage `json:"options"`
			FieldConfig struct {
				Defaults struct {
					Custom json.RawMessage `json:"custom"`
				} `json:"defaults"`
			} `json:"fieldConfig"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	b.WriteString("import type { Dashboard, AnnotationQuery, DataQuery } from '@grafana/schema';\n")
	used := map[string]bool{}
	for _, p := range d.Panels {
		pt, ok := panelTypes[p.Type]
		if !ok {
			t.Fatalf("%s: panel type %q: add its @grafana/schema options module to panelTypes", name, p.Type)
		}
		if !used[p.Type] {
			used[p.Type] = true
			fmt.Fprintf(&b, "import type * as %s from '@grafana/schema/dist/esm/raw/composable/%s/panelcfg/x/%sPanelCfg_types.gen';\n",
				p.Type, p.Type, pt.name)
		}
	}
	b.WriteString(wire)
	b.WriteString("type Query = DataQuery & Record<string, unknown>;\n")
	b.WriteString("type Checked = Omit<Dashboard, 'annotations'> & { annotations?: { list?: Array<AnnotationQuery<Query>> } };\n")
	fmt.Fprintf(&b, "export const dashboard: Wire<Checked> = %s;\n", data)
	for i, p := range d.Panels {
		opts := p.Options
		if len(opts) == 0 {
			opts = json.RawMessage("{}")
		}
		fmt.Fprintf(&b, "export const panel%dOptions: Wire<%s.Options> = %s;\n", i, p.Type, opts)
		if c := p.FieldConfig.Defaults.Custom; len(c) > 0 {
			if !panelTypes[p.Type].fieldConfig {
				t.Fatalf("%s: panel %d (%s) has fieldConfig.defaults.custom but @grafana/schema has no FieldConfig for it", name, i, p.Type)
			}
			fmt.Fprintf(&b, "export const panel%dCustom: Wire<%s.FieldConfig> = %s;\n", i, p.Type, c)
		}
	}
	return b.String()
}

// schemaDir installs the pinned @grafana/schema and typescript (hack/grafana-schema, cached in
// $BENCHRUN_CACHE) and returns the directory holding node_modules.
func schemaDir(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: the Grafana schema check needs node and npm (Debian packages nodejs, npm)", tool)
		}
	}
	out, err := exec.Command("../../hack/grafana-schema/install.sh").Output()
	if err != nil {
		t.Fatalf("hack/grafana-schema/install.sh: %v\n%s", err, exitStderr(err))
	}
	return strings.TrimSpace(string(out))
}

func exitStderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// tsc type-checks files (name → TypeScript) with tsc --strict and returns its diagnostics.
func tsc(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	work, err := os.MkdirTemp(dir, "check-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	var names []string
	for n, src := range files {
		names = append(names, n)
		if err := os.WriteFile(filepath.Join(work, n), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{"strict": true, "noEmit": true, "module": "nodenext",
			"moduleResolution": "nodenext", "skipLibCheck": true, "types": []string{}},
		"files": names,
	})
	if err := os.WriteFile(filepath.Join(work, "tsconfig.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(dir, "node_modules", "typescript", "bin", "tsc"), "-p", work, "--pretty", "false")
	cmd.Dir = work // diagnostics name the files relative to it
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Fatalf("tsc: %v", err)
	}
	return string(out)
}

// TestDashboardsMatchGrafanaSchema type-checks every dashboard of the chart against Grafana's
// published schema (npm @grafana/schema 13.2.3, the Dashboard type and each panel type's
// Options/FieldConfig) with the TypeScript compiler: no missing required field, no unknown
// field, no value outside an enum. A broken copy (an unknown dashboard field, a legend mode
// Grafana does not have, a stat panel without its required options) must fail the same check,
// so the check cannot pass vacuously.
func TestDashboardsMatchGrafanaSchema(t *testing.T) {
	dir := schemaDir(t)
	paths, _ := filepath.Glob(filepath.Join(chartDashboards, "*.json"))
	if len(paths) < 2 {
		t.Fatalf("dashboards in %s: %v", chartDashboards, paths)
	}
	files := map[string]string{}
	var run []byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(p) == Run {
			run = data
		}
		files[strings.TrimSuffix(filepath.Base(p), ".json")+".mts"] = checkSource(t, filepath.Base(p), data)
	}
	broken := strings.Replace(string(run), `"displayMode": "table"`, `"displayMode": "sideways"`, 1)
	broken = strings.Replace(broken, `"refresh": "10s",`, `"refresh": "10s", "refreshEvery": 10,`, 1)
	broken = regexp.MustCompile(`"colorMode": "value",`).ReplaceAllString(broken, "")
	if broken == string(run) {
		t.Fatal("could not break the run dashboard")
	}
	files["broken.mts"] = checkSource(t, "broken", []byte(broken))

	out := tsc(t, dir, files)
	var fromBroken []string
	inBroken := false
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && l[0] != ' ' { // a diagnostic; indented lines elaborate the one before
			inBroken = strings.HasPrefix(l, "broken.mts")
		}
		switch {
		case l == "":
		case inBroken:
			fromBroken = append(fromBroken, l)
		default:
			t.Errorf("Grafana schema: %s", l)
		}
	}
	t.Logf("the broken copy: %d diagnostic lines", len(fromBroken))
	for _, want := range []string{`'"refreshEvery"' does not exist`, `"sideways"`, `colorMode`} {
		if !strings.Contains(strings.Join(fromBroken, "\n"), want) {
			t.Errorf("the broken dashboard passed the check: no error mentioning %s in:\n%s", want, strings.Join(fromBroken, "\n"))
		}
	}
}
