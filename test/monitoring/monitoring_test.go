// Package monitoring tests the chart's Prometheus Operator objects: rendered only when the
// cluster serves monitoring.coreos.com/v1 (scrape annotations otherwise), and the
// PrometheusRule's alerts evaluated by Prometheus's own rule engine (promtool test rules).
package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var chartDir = func() string { d, _ := filepath.Abs("../../charts/benchrun"); return d }()

// helm is $HELM or bin/helm (make test builds it).
func helm(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("HELM"), "../../bin/helm"} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				return abs
			}
		}
	}
	t.Skip("no helm binary: `make test` builds bin/helm (or set HELM)")
	return ""
}

// render returns the rendered objects by kind.
func render(t *testing.T, args ...string) map[string][]map[string]any {
	t.Helper()
	out, err := exec.Command(helm(t), append([]string{"template", "rel", chartDir, "-n", "ops"}, args...)...).Output()
	if err != nil {
		t.Fatalf("helm template %v: %v", args, err)
	}
	byKind := map[string][]map[string]any{}
	for _, doc := range strings.Split(string(out), "\n---") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, doc)
		}
		if k, _ := o["kind"].(string); k != "" {
			byKind[k] = append(byKind[k], o)
		}
	}
	return byKind
}

var (
	enable  = []string{"--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true"}
	withAPI = []string{"--api-versions", "monitoring.coreos.com/v1/ServiceMonitor", "--api-versions", "monitoring.coreos.com/v1/PrometheusRule"}
)

// metadata returns o.metadata.field as a string map.
func metadata(o map[string]any, field string) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	v, _ := m[field].(map[string]any)
	return v
}

func TestMonitoringObjectsNeedTheirAPI(t *testing.T) {
	plain := render(t, enable...)
	if len(plain["ServiceMonitor"])+len(plain["PrometheusRule"]) != 0 {
		t.Fatal("Prometheus Operator objects rendered on a cluster without monitoring.coreos.com/v1")
	}
	if a := metadata(plain["Service"][0], "annotations"); a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "8080" {
		t.Fatalf("metrics Service annotations %v, want prometheus.io/scrape", a)
	}
	objs := render(t, append(enable, withAPI...)...)
	if len(objs["ServiceMonitor"]) != 1 || len(objs["PrometheusRule"]) != 1 {
		t.Fatalf("kinds %v", keys(objs))
	}
	svc := objs["Service"][0]
	if _, ok := metadata(svc, "annotations")["prometheus.io/scrape"]; ok {
		t.Error("scrape annotations beside a ServiceMonitor (scraped twice)")
	}
	sel := objs["ServiceMonitor"][0]["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
	for k, v := range sel {
		if metadata(svc, "labels")[k] != v {
			t.Errorf("ServiceMonitor selects %s=%v, the metrics Service has %v", k, v, metadata(svc, "labels")[k])
		}
	}
	if off := render(t, withAPI...); len(off["ServiceMonitor"])+len(off["PrometheusRule"]) != 0 {
		t.Error("rendered although not enabled")
	}
}

// ruleTests are promtool unit tests of the chart's rules: a run 25 % below the earlier run of
// the same target and scenario alerts for 15 minutes after it finished, one 2.5 % below does
// not; a failed run alerts for 15 minutes.
const ruleTests = `rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
- interval: 1m
  input_series:
  - series: 'benchrun_run_scenario_cps{namespace="bench",benchmarkrun="old",generation="1",target="redis/single",scenario="get"}'
    values: '40000x60'
  - series: 'benchrun_run_scenario_cps{namespace="bench",benchmarkrun="new",generation="1",target="redis/single",scenario="get"}'
    values: '_x30 30000x30'
  - series: 'benchrun_run_scenario_cps{namespace="bench",benchmarkrun="fine",generation="1",target="redis/single",scenario="get"}'
    values: '_x30 39000x30'
  - series: 'benchrun_runs_finished_total{namespace="bench",phase="Failed",verdict="Failed"}'
    values: '0x10 1x50'
  alert_rule_test:
  - eval_time: 35m
    alertname: BenchmarkRunRegression
    exp_alerts:
    - exp_labels: {namespace: bench, benchmarkrun: new, generation: "1", target: redis/single, scenario: get, severity: info}
      exp_annotations:
        summary: "new (redis/single, scenario get): 30k calls/s"
        description: "more than 10 % below the average of the earlier runs of the same target and scenario"
  - eval_time: 55m
    alertname: BenchmarkRunRegression
    exp_alerts: []
  - eval_time: 15m
    alertname: BenchmarkRunFailed
    exp_alerts:
    - exp_labels: {namespace: bench, severity: warning}
      exp_annotations:
        summary: "1 BenchmarkRun(s) failed in namespace bench in the last 15 minutes"
        description: "kubectl get benchmarkruns -n bench: status.conditions and events say why."
  - eval_time: 40m
    alertname: BenchmarkRunFailed
    exp_alerts: []
`

func TestPrometheusRuleAlerts(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool (Debian package prometheus; .ci/run installs it)")
	}
	objs := render(t, append(enable, withAPI...)...)
	spec, err := yaml.Marshal(objs["PrometheusRule"][0]["spec"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests.yaml"), []byte(ruleTests), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "tests.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// keys lists a map's keys.
func keys(m map[string][]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
