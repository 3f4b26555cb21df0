//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// Issue 10 on the real cluster: runners that cannot start fail fast with the reason, an edit
// and a delete during the load keep what the runners measured, and the longest accepted run
// name (with odd but accepted characters) works on every target kind.

// shortRun is a BenchmarkRun of one runner, 2 workers × 4 tasks, one scenario list of the
// given duration; extra is appended under spec (indented by two spaces).
func shortRun(name, target, scenarios, duration, extra string) string {
	return fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %s
spec:
  target:
%s
  load:
    workers: 2
    tasksPerWorker: 4
    duration: %s
    scenarios:
%s
    runners:
      parallelism: 1
%s`, name, target, duration, scenarios, extra)
}

// TestRunnersCannotStart: three runs whose runners cannot start, applied together with
// timeouts.runnersReady 15s: one with a nodeSelector no node has (Unschedulable), one whose
// external Redis password Secret does not exist, one whose Secret lacks the key
// (CreateContainerConfigError). Each fails RunnersNotReady naming the runner and why, about
// 15 s after its runners were created, not after the 10 min default.
func TestRunnersCannotStart(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "cannot-start")
	apply(t, ns, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: keyless\ntype: Opaque\nstringData:\n  user: bench\n")
	external := func(secret string) string {
		s := "    external:\n      kind: redis\n      addresses: [\"no-redis.invalid:6379\"]"
		if secret != "" {
			s += "\n      passwordSecretRef: {name: " + secret + ", key: password}"
		}
		return s
	}
	const ping = "    - name: ping\n      type: redis.ping"
	const timeouts = "  timeouts:\n    runnersReady: 15s\n"
	cases := []struct{ name, target, extra string }{
		{"unschedulable", external(""), "      nodeSelector: {benchrun.io/no-such-pool: \"yes\"}\n" + timeouts},
		{"missing-secret", external("no-such-secret"), timeouts},
		{"missing-key", external("keyless"), timeouts},
	}
	want := map[string][]string{
		"unschedulable":  {"runner-0: Unschedulable", "node affinity/selector"},
		"missing-secret": {"runner-0: CreateContainerConfigError", `secret "no-such-secret" not found`},
		"missing-key":    {"runner-0: CreateContainerConfigError", "couldn't find key password in Secret " + ns + "/keyless"},
	}
	for _, c := range cases {
		apply(t, ns, shortRun(c.name, c.target, ping, "5s", c.extra))
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := waitFailed(t, ns, c.name, 3*time.Minute)
			if run == nil {
				return
			}
			cond := apimeta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
			var created time.Time
			if rr := apimeta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionRunnersReady); rr != nil {
				created = rr.LastTransitionTime.Time
			}
			took := run.Status.CompletionTime.Sub(run.CreationTimestamp.Time)
			metric(t.Name(), "%s: Failed %s after %.0fs (apply→Failed) %s", c.name, cond.Reason, took.Seconds(), cond.Message)
			if cond.Reason != "RunnersNotReady" {
				t.Errorf("%s: reason %s, want RunnersNotReady: %s", c.name, cond.Reason, cond.Message)
			}
			for _, w := range want[c.name] {
				if !strings.Contains(cond.Message, w) {
					t.Errorf("%s: the reason does not say %q: %s", c.name, w, cond.Message)
				}
			}
			if took > 90*time.Second {
				t.Errorf("%s: failed %s after it was applied (runnersReady 15s; created %s)", c.name, took, created)
			}
		}()
	}
	wg.Wait()
}

// waitFailed polls run name until it is Failed (nil and an error when it ends otherwise or
// the timeout passes); it may run in a goroutine (no t.Fatal).
func waitFailed(t *testing.T, ns, name string, timeout time.Duration) *v1alpha1.BenchmarkRun {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, err := kubectl("", "-n", ns, "get", "benchmarkrun", name, "-o", "json")
		var run v1alpha1.BenchmarkRun
		if err == nil && json.Unmarshal([]byte(out), &run) == nil {
			switch run.Status.Phase {
			case v1alpha1.PhaseFailed:
				return &run
			case v1alpha1.PhaseSucceeded:
				t.Errorf("%s: Succeeded, want Failed", name)
				return nil
			}
		}
		time.Sleep(time.Second)
	}
	t.Errorf("%s: not Failed within %s", name, timeout)
	return nil
}

// TestEditThenDeleteMidRun: a 60 s run is edited during its load: its runner is stopped
// (SIGTERM), stores what it measured, and the superseded generation lands in status.history
// with results and a report. The new generation is then deleted during its load: the
// finalizer holds the run until what its runner stored is in a report ConfigMap the run does
// not own, which outlives it.
func TestEditThenDeleteMidRun(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "edit-delete")
	const name = "edited"
	apply(t, ns, shortRun(name, "    redis:\n      mode: single", "    - name: ping\n      type: redis.ping", "60s", ""))
	waitPhase(t, ns, name, runTimeout, v1alpha1.PhaseRunning)
	time.Sleep(5 * time.Second)
	edited := time.Now()
	mustKubectl(t, "", "-n", ns, "patch", "benchmarkrun", name, "--type=merge", "-p", `{"spec":{"load":{"duration":"61s"}}}`)
	run := waitHistory(t, ns, name)
	h := run.Status.History[0]
	metric(t.Name(), "edit→history record %.1fs: generation %d %s partial=%v results=%d", time.Since(edited).Seconds(), h.Generation, h.Phase, h.Partial, len(h.Results))
	if h.Generation != 1 || !h.Partial || len(h.Results) != 1 || h.Results[0].Calls <= 0 || h.Report == nil {
		t.Fatalf("history record: %+v", h)
	}
	t.Logf("superseded generation: %d calls, %.0f cps", h.Results[0].Calls, h.Results[0].CPS)
	md := mustKubectl(t, "", "-n", ns, "get", "configmap", h.Report.ConfigMapName, "-o", `jsonpath={.data.report\.md}`)
	if !strings.Contains(md, "PARTIAL RESULTS") || !strings.Contains(md, "ping") {
		t.Errorf("superseded generation's report:\n%s", md)
	}

	waitGeneration(t, ns, name, 2, v1alpha1.PhaseRunning)
	time.Sleep(5 * time.Second)
	deleted := time.Now()
	mustKubectl(t, "", "-n", ns, "delete", "benchmarkrun", name, "--wait=true", "--timeout=90s")
	kept := keptReport(t, ns, name)
	metric(t.Name(), "delete→run gone %.1fs, kept report %s", time.Since(deleted).Seconds(), kept["name"])
	if kept["owners"] != "" || !strings.Contains(kept["md"], "PARTIAL RESULTS") || !strings.Contains(kept["md"], "ping") {
		t.Errorf("kept report %s (owners %q):\n%s", kept["name"], kept["owners"], kept["md"])
	}
	if calls := keptCalls(t, kept["results"]); calls <= 0 {
		t.Errorf("kept report: %d calls in results.json", calls)
	}
}

// waitHistory waits until the run has a history record (its first generation superseded).
func waitHistory(t *testing.T, ns, name string) *v1alpha1.BenchmarkRun {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if run := getRun(t, ns, name); run != nil && len(run.Status.History) > 0 {
			return run
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("%s: no history record within 2m", name)
	return nil
}

// waitGeneration waits until the run observes generation gen in phase.
func waitGeneration(t *testing.T, ns, name string, gen int64, phase v1alpha1.Phase) {
	t.Helper()
	deadline := time.Now().Add(runTimeout)
	for time.Now().Before(deadline) {
		if run := getRun(t, ns, name); run != nil && run.Status.ObservedGeneration == gen && run.Status.Phase == phase {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("%s: generation %d not %s within %s", name, gen, phase, runTimeout)
}

// keptReport finds the report ConfigMap kept from the deleted run name: its name, owners,
// report.md and results.json.
func keptReport(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	out := mustKubectl(t, "", "-n", ns, "get", "configmaps", "-o", "json")
	var list struct {
		Items []struct {
			Metadata struct {
				Name            string            `json:"name"`
				Annotations     map[string]string `json:"annotations"`
				OwnerReferences []any             `json:"ownerReferences"`
			} `json:"metadata"`
			Data map[string]string `json:"data"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.Metadata.Annotations["bench.benchrun.io/kept-from-deleted-run"] == name {
			owners := ""
			if len(cm.Metadata.OwnerReferences) > 0 {
				owners = fmt.Sprint(cm.Metadata.OwnerReferences)
			}
			return map[string]string{"name": cm.Metadata.Name, "owners": owners, "md": cm.Data["report.md"], "results": cm.Data["results.json"]}
		}
	}
	t.Fatalf("no ConfigMap kept from the deleted run %s", name)
	return nil
}

// keptCalls sums the calls of the scenarios in a report's results.json.
func keptCalls(t *testing.T, resultsJSON string) int64 {
	t.Helper()
	var res struct {
		Scenarios []struct {
			Calls int64 `json:"calls"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(resultsJSON), &res); err != nil {
		t.Fatalf("results.json: %v\n%s", err, resultsJSON)
	}
	var n int64
	for _, s := range res.Scenarios {
		n += s.Calls
	}
	return n
}

// maxName is a run name of the maximum accepted length (236: the CRD keeps room for the
// ".<16 hex digits>" of the run's Event names under the API server's 253, and refuses dots
// and a leading digit) starting with start and holding the odd but accepted characters: runs
// of '-', digits, a digit last.
func maxName(start string) string {
	name := start + "--0-9---x"
	for len(name) < 260 {
		name += "-a0--9z"
	}
	return name[:235] + "9"
}

// TestLongestNameEveryTarget runs, in sequence, a 3 s run named with maxName on every target
// kind: Redis single, builtin HA, the r/w-split proxy, HeTu on Redis and a custom echo server.
// Every object name derived from the run name (StatefulSets, Services, Jobs, ConfigMaps,
// label values) must be valid for the run to succeed.
func TestLongestNameEveryTarget(t *testing.T) {
	parallel(t)
	ns := newNamespace(t, "long-names")
	redisScenario := "    - name: ping\n      type: redis.ping"
	for _, tc := range []struct{ kind, target, scenarios string }{
		{"redis", "    redis:\n      mode: single", redisScenario},
		{"ha", "    redis:\n      mode: ha\n      replicas: 1\n      sentinels: 3\n      provider: builtin", redisScenario},
		{"proxy", "    redis:\n      mode: proxy\n      replicas: 1\n      proxy:\n        replicas: 1", "    - name: get\n      type: redis.get"},
		{"hetu", "    hetu:\n      replicas: 1\n      workers: 1\n      backend:\n        redis:\n          mode: single", "    - name: get\n      type: hetu.get"},
		{"echo", `    custom:
      image: benchrun.local/echo:dev
      command: [echo-server]
      args: [-listen, ":$(BENCHRUN_PORT_ECHO)"]
      ports:
      - {name: echo, port: 7007}
      readinessProbe:
        tcpSocket: {port: echo}`, "    - name: echo\n      type: tcp.echo\n      bodySize: 100"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			name := maxName(tc.kind)
			began := time.Now()
			apply(t, ns, shortRun(name, tc.target, tc.scenarios, "3s", "  cleanup:\n    policy: Always\n"))
			run := waitPhase(t, ns, name, runTimeout, v1alpha1.PhaseSucceeded)
			metric(t.Name(), "name of %d characters: apply→Succeeded %.1fs", len(name), time.Since(began).Seconds())
			if run.Status.Partial || len(run.Status.Results) != 1 || run.Status.Results[0].Calls <= 0 {
				t.Errorf("partial %v %v, results %+v", run.Status.Partial, run.Status.PartialReasons, run.Status.Results)
			}
			if run.Status.Report == nil {
				t.Fatal("no report")
			}
			md := mustKubectl(t, "", "-n", ns, "get", "configmap", run.Status.Report.ConfigMapName, "-o", `jsonpath={.data.report\.md}`)
			if !strings.Contains(md, run.Status.Results[0].Name) {
				t.Errorf("report %s lacks the scenario:\n%s", run.Status.Report.ConfigMapName, md)
			}
			// Its Events were recorded (named <run>.<16 hex digits>: 253 characters at most).
			if ev := mustKubectl(t, "", "-n", ns, "get", "events", "--field-selector", "involvedObject.name="+name, "-o", "name"); strings.TrimSpace(ev) == "" {
				t.Errorf("no Events for run %s", name)
			}
			// Free the cluster for the next kind: the run and what it owns go.
			mustKubectl(t, "", "-n", ns, "delete", "benchmarkrun", name, "--wait=true", "--timeout=90s")
		})
	}
}
