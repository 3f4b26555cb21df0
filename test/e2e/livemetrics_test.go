//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/dashboards"
)

// prometheusManifest is a Prometheus in the test namespace (benchrun.local/prometheus:2.42,
// hack/images/build.sh prometheus): remote-write receiver on, scraping the manager's metrics
// Service (%[1]s) every 2 s; restricted Pod Security, data in an emptyDir.
const prometheusManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: prometheus
data:
  prometheus.yml: |
    global: {scrape_interval: 2s, evaluation_interval: 2s}
    scrape_configs:
    - job_name: benchrun-manager
      static_configs: [{targets: ["%[1]s"]}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: prometheus
spec:
  replicas: 1
  selector: {matchLabels: {app: prometheus}}
  template:
    metadata:
      labels: {app: prometheus}
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        fsGroup: 65532
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: prometheus
        image: benchrun.local/prometheus:2.42
        imagePullPolicy: IfNotPresent
        args: [--config.file=/etc/prometheus/prometheus.yml, --storage.tsdb.path=/prometheus,
          --web.listen-address=:9090, --web.enable-remote-write-receiver, --log.level=warn]
        ports: [{name: http, containerPort: 9090}]
        readinessProbe:
          httpGet: {path: /-/ready, port: http}
          periodSeconds: 1
        resources:
          requests: {cpu: 50m, memory: 128Mi}
          limits: {memory: 512Mi}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
        volumeMounts:
        - {name: config, mountPath: /etc/prometheus}
        - {name: data, mountPath: /prometheus}
      volumes:
      - name: config
        configMap: {name: prometheus}
      - name: data
        emptyDir: {}
---
apiVersion: v1
kind: Service
metadata:
  name: prometheus
spec:
  selector: {app: prometheus}
  ports: [{name: http, port: 9090, targetPort: http}]
`

// liveScenarioDuration is each scenario's duration: long enough for several 1 s pushes in the
// middle of the load, away from its start and end.
const liveScenarioDuration = 10 * time.Second

// liveRunManifest: Redis single, 2 runners pushing every second to the namespace's Prometheus;
// scenario get succeeds, scenario errs fails every call (INCRBY of a non-integer: ERR).
func liveRunManifest(ns string) string {
	return fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: live
spec:
  target:
    redis:
      mode: single
  load:
    workers: 2
    tasksPerWorker: 8
    duration: %s
    scenarios:
    - name: get
      type: redis.get
      bodySize: 64
    - name: errs
      type: redis.command
      redisCommand:
        command: INCRBY n:__rand_int__ x
    runners:
      parallelism: 2
  collect:
    prometheusRemoteWriteURL: http://prometheus.%s.svc:9090/api/v1/write
    prometheusRemoteWrite:
      intervalSeconds: 1
  cleanup:
    policy: OnSuccess
`, liveScenarioDuration, ns)
}

// promAPI queries the namespace's Prometheus through the API server's Service proxy.
type promAPI struct{ ns string }

// get runs GET /api/v1/<path>?<params> and decodes data.result into out.
func (p promAPI) get(path string, params url.Values, out any) error {
	raw, err := kubectl("", "get", "--raw",
		"/api/v1/namespaces/"+p.ns+"/services/http:prometheus:http/proxy/api/v1/"+path+"?"+params.Encode())
	if err != nil {
		return err
	}
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s %s: %s", path, params.Get("query"), body.Error)
	}
	var data struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body.Data, &data); err != nil {
		return err
	}
	return json.Unmarshal(data.Result, out)
}

// series is one series of a query result: labels and [time, "value"] pairs.
type series struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
	Values [][2]any          `json:"values"`
}

func sampleValue(v [2]any) float64 {
	s, _ := v[1].(string)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func sampleTime(v [2]any) float64 { f, _ := v[0].(float64); return f }

// instant runs an instant query now.
func (p promAPI) instant(q string) ([]series, error) {
	var out []series
	return out, p.get("query", url.Values{"query": {q}}, &out)
}

// value runs an instant query that must return one series.
func (p promAPI) value(q string) (float64, error) {
	s, err := p.instant(q)
	if err != nil {
		return 0, err
	}
	if len(s) != 1 {
		return 0, fmt.Errorf("%s: %d series, want 1", q, len(s))
	}
	return sampleValue(s[0].Value), nil
}

// rangeQuery runs a range query over [from, now] with a 2 s step, as Grafana draws a panel.
func (p promAPI) rangeQuery(q string, from time.Time) ([]series, error) {
	var out []series
	return out, p.get("query_range", url.Values{"query": {q}, "start": {strconv.FormatInt(from.Unix(), 10)},
		"end": {strconv.FormatInt(time.Now().Unix()+1, 10)}, "step": {"2"}}, &out)
}

// managerMetricsAddress is host:port of the chart's manager metrics Service.
func managerMetricsAddress(t *testing.T) string {
	t.Helper()
	out := mustKubectl(t, "", "-n", managerNamespace, "get", "svc", "-o",
		`jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.ports[?(@.name=="metrics")].port}{"\n"}{end}`)
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 2 && strings.HasSuffix(f[0], "-metrics") {
			return fmt.Sprintf("%s.%s.svc:%s", f[0], managerNamespace, f[1])
		}
	}
	t.Fatalf("no metrics Service in %s:\n%s", managerNamespace, out)
	return ""
}

// TestLiveMetricsInCluster: Prometheus (our Debian-binary image) runs in the cluster with the
// remote-write receiver on, scraping the manager; a Redis run's 2 runner pods remote-write
// to it every second. Then every query of every panel, template variable and annotation of
// both chart dashboards (variables substituted), run as Grafana runs them (range queries over
// the run), returns data from it, and the figures agree with status.results: calls and errors
// exactly, the CPS computed from the pushed counters as status.results computes it (trimmed)
// within 5 %, p99 within the histogram's bucket width, the history dashboard's CPS equal.
func TestLiveMetricsInCluster(t *testing.T) {
	ns := newNamespace(t, "live")
	t0 := time.Now()
	apply(t, ns, fmt.Sprintf(prometheusManifest, managerMetricsAddress(t)))
	mustKubectl(t, "", "-n", ns, "rollout", "status", "deploy/prometheus", "--timeout=120s")
	metric(t.Name(), "prometheus-ready=%.1fs", time.Since(t0).Seconds())
	prom := promAPI{ns}

	apply(t, ns, liveRunManifest(ns))
	run := waitPhase(t, ns, "live", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	checkTables(t, ns, run, []string{"get"}, liveScenarioDuration)
	results := map[string]v1alpha1.ScenarioResult{}
	for _, r := range run.Status.Results {
		results[r.Name] = r
	}
	get, errs := results["get"], results["errs"]
	if errs.Calls == 0 || errs.Errors != errs.Calls {
		t.Errorf("scenario errs: %d calls, %d errors, want every call failed", errs.Calls, errs.Errors)
	}
	t1 := time.Now()
	checkDashboardsHaveData(t, prom, ns, run.CreationTimestamp.Time)
	metric(t.Name(), "dashboards-have-data=%.1fs", time.Since(t1).Seconds())

	sel := fmt.Sprintf(`{namespace="%s", benchmarkrun="live", scenario="%%s"}`, ns)
	for _, c := range []struct {
		q    string
		want int64
	}{
		{"sum(benchrun_calls_total" + fmt.Sprintf(sel, "get") + ")", get.Calls},
		{"sum(benchrun_errors_total" + fmt.Sprintf(sel, "get") + ")", get.Errors},
		{"sum(benchrun_calls_total" + fmt.Sprintf(sel, "errs") + ")", errs.Calls},
		{"sum(benchrun_errors_by_kind_total" + fmt.Sprintf(sel, "errs") + ")", errs.Errors},
	} {
		if got, err := prom.value(c.q); err != nil || got != float64(c.want) {
			t.Errorf("%s = %v (%v), status.results %d", c.q, got, err, c.want)
		}
	}
	cps := trimmedCPS(t, prom, "benchrun_calls_total"+fmt.Sprintf(sel, "get"), run.CreationTimestamp.Time)
	if cps < 0.95*get.CPS || cps > 1.05*get.CPS {
		t.Errorf("CPS from Prometheus %.0f, status.results %.0f: more than 5 %% apart", cps, get.CPS)
	}
	p99, err := prom.value(`histogram_quantile(0.99, sum by (le) (benchrun_latency_seconds_bucket` + fmt.Sprintf(sel, "get") + `))`)
	if want := get.LatencyMs.P99 / 1000; err != nil || p99 < 0.8*want || p99 > 1.25*want {
		t.Errorf("p99 from Prometheus %v s (%v), status.results %v s", p99, err, want)
	}
	hist, err := prom.value(fmt.Sprintf(`benchrun_run_scenario_cps{namespace="%s", benchmarkrun="live", scenario="get"}`, ns))
	if err != nil || hist < get.CPS-0.01 || hist > get.CPS+0.01 {
		t.Errorf("history dashboard CPS %v (%v), status.results %v", hist, err, get.CPS)
	}
	t.Logf("calls %d (errs %d); CPS status %.0f, Prometheus %.0f (%+.1f %%); p99 status %.3f ms, Prometheus %.3f ms",
		get.Calls, errs.Calls, get.CPS, cps, 100*(cps-get.CPS)/get.CPS, get.LatencyMs.P99, p99*1000)
	metric(t.Name(), "cps-status=%.0f cps-prometheus=%.0f diff=%+.1f%%", get.CPS, cps, 100*(cps-get.CPS)/get.CPS)
	checkCleanedOnSuccess(t, ns, "live", len(run.Status.Results))
}

// checkDashboardsHaveData runs every variable and panel query of both dashboards as range
// queries over [from, now] and each annotation query, until each returns a series with a
// sample (the manager's history metrics appear a scrape after the run finished): at most 90 s.
func checkDashboardsHaveData(t *testing.T, prom promAPI, ns string, from time.Time) {
	t.Helper()
	if up, err := prom.value(`up{job="benchrun-manager"}`); err != nil || up != 1 {
		t.Errorf("Prometheus does not scrape the manager: up = %v (%v)", up, err)
	}
	vars := strings.NewReplacer("$namespace", ns, "$benchmarkrun", "live", "$scenario", "get|errs",
		"$__rate_interval", "10s")
	deadline := time.Now().Add(90 * time.Second)
	for _, f := range []string{dashboards.Run, dashboards.History} {
		d, err := dashboards.Load(filepath.Join(repoRoot, "charts", "benchrun", "dashboards", f), vars)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range d.Queries {
			for {
				s, err := prom.rangeQuery(q.Expr, from)
				if err == nil && len(s) > 0 && len(s[0].Values) > 0 {
					break
				}
				if err != nil || time.Now().After(deadline) {
					t.Errorf("%s: panel %q: %s returns no data (%v)", d.Title, q.Panel, q.Expr, err)
					break
				}
				time.Sleep(2 * time.Second)
			}
		}
		for _, a := range d.Annotations {
			s, err := prom.rangeQuery(a.Expr, from)
			if err != nil || len(s) == 0 {
				t.Errorf("%s: annotation %q: %s: %d series (%v)", d.Title, a.Name, a.Expr, len(s), err)
			}
		}
	}
}

// trimmedCPS is the run's CPS computed the way status.results computes it (results.Summarize:
// 10 % trimmed at each end, CPS = 0.8·calls / (t90 − t10)), but from what the runners pushed:
// the sum over runners of the calls counter (selector), as a range query from `from` with a
// 0.5 s step, t10 and t90 interpolated where it crosses 10 % and 90 % of its final value.
func trimmedCPS(t *testing.T, prom promAPI, selector string, from time.Time) float64 {
	t.Helper()
	var out []series
	err := prom.get("query_range", url.Values{"query": {"sum(" + selector + ")"},
		"start": {strconv.FormatInt(from.Unix(), 10)}, "end": {strconv.FormatInt(time.Now().Unix()+1, 10)}, "step": {"0.5"}}, &out)
	if err != nil || len(out) != 1 || len(out[0].Values) < 4 {
		t.Fatalf("sum(%s): %d series (%v)", selector, len(out), err)
	}
	v := out[0].Values
	total := sampleValue(v[len(v)-1])
	cross := func(f float64) float64 {
		for i := 1; i < len(v); i++ {
			if x1 := sampleValue(v[i]); x1 >= f*total {
				x0, t0, t1 := sampleValue(v[i-1]), sampleTime(v[i-1]), sampleTime(v[i])
				return t0 + (f*total-x0)/(x1-x0)*(t1-t0)
			}
		}
		return 0
	}
	t10, t90 := cross(0.1), cross(0.9)
	if total <= 0 || t90 <= t10 {
		t.Fatalf("sum(%s): %v calls, t10 %v, t90 %v", selector, total, t10, t90)
	}
	return 0.8 * total / (t90 - t10)
}
