//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestOpenModel: an arrival-rate scenario and a two-step saturation search on Redis single with
// two runners, through the operator's plan path and the runner image's k6: the rate is split
// over the runners and achieved, status.results[].open holds the figures and the report
// ConfigMap the search's plot.
func TestOpenModel(t *testing.T) {
	ns := newNamespace(t, "open-model")
	apply(t, ns, `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: open-model
spec:
  target:
    redis:
      mode: single
  load:
    workers: 2
    duration: 6s
    scenarios:
    - name: get_rate
      type: redis.get
      arrival: {rate: 500, maxVUs: 8}
    - name: search
      type: redis.ping
      arrival:
        maxVUs: 8
        search: {startRate: 200, factor: 2, stepDuration: 3s, maxSteps: 2, maxP99: 2s}
    runners:
      parallelism: 2
  cleanup:
    policy: OnSuccess
`)
	run := waitPhase(t, ns, "open-model", runTimeout, v1alpha1.PhaseSucceeded)
	recordTimings(t, run)
	if run.Status.Partial || len(run.Status.Results) != 2 {
		t.Fatalf("partial %v (%v), %d results", run.Status.Partial, run.Status.PartialReasons, len(run.Status.Results))
	}
	get, search := run.Status.Results[0], run.Status.Results[1]
	t.Logf("get_rate: %d calls, CPS %.2f, open %+v; search: %+v", get.Calls, get.CPS, get.Open, search.Open.Search)
	if o := get.Open; o == nil || o.TargetRate != 500 || o.AchievedRatio < 0.9 || o.AchievedRatio > 1.1 || get.Errors != 0 {
		t.Errorf("get_rate: open %+v errors %d; want 500/s achieved within 10 %%", o, get.Errors)
	}
	if o := search.Open; o == nil || o.Search == nil || len(o.Search.Steps) != 2 || o.Search.Steps[0].TargetRate != 200 ||
		o.Search.Steps[1].TargetRate != 400 || o.Search.BestRate == 0 {
		t.Errorf("search: %+v", o)
	}
	keys := mustKubectl(t, "", "-n", ns, "get", "configmap", run.Status.Report.ConfigMapName, "-o", "go-template={{range $k, $v := .data}}{{$k}} {{end}}")
	if !strings.Contains(keys, "search-search.svg") {
		t.Errorf("report ConfigMap keys %q lack search-search.svg", keys)
	}
}
