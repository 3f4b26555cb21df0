//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// maxMultiNodeSkew is the documented bound on status.runners.startSkew across nodes
// (test/e2e/README.md): the runners sleep until the barrier's startAt, set seconds ahead.
const maxMultiNodeSkew = 100 * time.Millisecond

// TestMultiNode proves dedicated pools, onePerNode and the start skew on two nodes: on the
// local cluster it brings up a second node (hack/local-cluster/node2.sh: own network
// namespace, containerd, kubelet and kube-proxy) and takes it down at the end; on another
// cluster it needs two schedulable nodes. Both nodes are labelled and tainted as the load
// pool; 2 runners onePerNode land one on each node, start within maxMultiNodeSkew and their
// merged calls equal the GETs the Redis target (pinned to the first node) counted itself; a
// run with 3 runners onePerNode fails fast with the scheduler's anti-affinity reason.
func TestMultiNode(t *testing.T) {
	nodes := twoNodes(t)
	ns := newNamespace(t, "multinode")
	loadPool(t)
	m := fmt.Sprintf(`apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: two-nodes
spec:
  target:
    redis:
      mode: single
      # builtin: checkCallsCounted reads the builtin master pod (with provider auto, a
      # redis-operator installed earlier in the suite would deploy it instead)
      provider: builtin
      nodeSelector: {kubernetes.io/hostname: %s}
      tolerations:
      - key: benchrun.io/load
        operator: Exists
        effect: NoSchedule
  load:
    workers: 2
    tasksPerWorker: 8
    duration: %s
    scenarios:
    - name: get_1k
      type: redis.get
      bodySize: 1024
    runners:
      parallelism: 2
      onePerNode: true
      pool: load
%s
  cleanup:
    policy: Never
`, nodes[0], scenarioDuration, loadPoolPlacement)
	run := succeed(t, ns, "two-nodes", m, []string{"get_1k"})
	on := runnerNodes(t, ns, "two-nodes")
	slices.Sort(on)
	want := slices.Clone(nodes[:2])
	slices.Sort(want)
	if !slices.Equal(on, want) {
		t.Errorf("runners on nodes %v, want one on each of %v", on, want)
	}
	checkSkew(t, run)
	checkCallsCounted(t, ns, run)
	// Both runners measured (CPU/memory), and their logs readable through the API server
	// (which reaches each node's kubelet at its InternalIP).
	checkUsage(t, run, "runner")
	for _, u := range run.Status.Resources {
		if u.Role == "runner" && u.Pods != 2 {
			t.Errorf("usage of %d runner pods, want 2: %+v", u.Pods, u)
		}
	}
	checkRunnerLogs(t, ns)

	// A third runner cannot fit: RunnersNotReady with the scheduler's reason, fast.
	three := strings.Replace(strings.Replace(m, "name: two-nodes", "name: three-runners", 1),
		"parallelism: 2", "parallelism: 3", 1) + "  timeouts:\n    runnersReady: 15s\n"
	apply(t, ns, three)
	failed := waitFailed(t, ns, "three-runners", 3*time.Minute)
	if failed == nil {
		return
	}
	cond := apimeta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionSucceeded)
	took := failed.Status.CompletionTime.Sub(failed.CreationTimestamp.Time)
	metric(t.Name(), "three runners onePerNode on two nodes: Failed %s after %.0fs (apply→Failed) %s", cond.Reason, took.Seconds(), cond.Message)
	if cond.Reason != "RunnersNotReady" {
		t.Errorf("three-runners: reason %s, want RunnersNotReady: %s", cond.Reason, cond.Message)
	}
	for _, w := range []string{"Unschedulable", "anti-affinity"} {
		if !strings.Contains(cond.Message, w) {
			t.Errorf("three-runners: the reason does not say %q: %s", w, cond.Message)
		}
	}
	if took > 90*time.Second {
		t.Errorf("three-runners: failed %s after it was applied (runnersReady 15s)", took)
	}
}

// twoNodes returns two schedulable nodes: the cluster's own when it has them, else (local
// cluster only) node 1 and a second node brought up now and taken down at the end of the test.
func twoNodes(t *testing.T) []string {
	t.Helper()
	nodes := schedulableNodes(t)
	if len(nodes) >= 2 {
		return nodes
	}
	if !localCluster && !strings.HasSuffix(os.Getenv("KUBECONFIG"), filepath.Join("cluster", "kubeconfig", "admin.kubeconfig")) {
		t.Skipf("one schedulable node (%v) and not the local cluster, where a second one could be added: run on a cluster with two nodes (e.g. test/e2e/kind-multinode.yaml)", nodes)
	}
	script := filepath.Join(repoRoot, "hack", "local-cluster", "node2.sh")
	start := time.Now()
	out, err := sh(repoRoot, script, "up")
	if err != nil {
		_, _ = sh(repoRoot, script, "down")
		t.Fatalf("node2.sh up: %v\n%s", err, out)
	}
	metric("node2-up", "%.1fs", time.Since(start).Seconds())
	t.Cleanup(func() {
		if keep {
			t.Log("E2E_KEEP=1: node 2 kept (hack/local-cluster/cluster.sh node2 down)")
			return
		}
		start := time.Now()
		if out, err := sh(repoRoot, script, "down"); err != nil {
			t.Errorf("node2.sh down: %v\n%s", err, out)
		}
		metric("node2-down", "%.1fs", time.Since(start).Seconds())
	})
	nodes = schedulableNodes(t)
	if len(nodes) < 2 {
		t.Fatalf("after node2.sh up: schedulable nodes %v", nodes)
	}
	return nodes
}

// schedulableNodes lists the Ready nodes without a control-plane taint, node 1 of the local
// cluster first (the one with every image).
func schedulableNodes(t *testing.T) []string {
	t.Helper()
	out := mustKubectl(t, "", "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.taints[*].key}{"\n"}{end}`)
	var nodes []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[1] != "True" || strings.Contains(l, "node-role.kubernetes.io/control-plane") {
			continue
		}
		nodes = append(nodes, f[0])
	}
	slices.SortFunc(nodes, func(a, b string) int { // "vm" before "vm-node2"
		return len(a) - len(b)
	})
	return nodes
}

// runnerNodes lists the nodes the run's runner pods ran on.
func runnerNodes(t *testing.T, ns, run string) []string {
	t.Helper()
	out := mustKubectl(t, "", "-n", ns, "get", "pods", "-l", "bench.benchrun.io/component=runner",
		"-o", `jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{"\n"}{end}`)
	var on []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 && strings.HasPrefix(f[0], run) {
			t.Logf("runner pod %s on node %s", f[0], f[1])
			on = append(on, f[1])
		}
	}
	return on
}

// checkSkew checks the measured start skew of the runners against maxMultiNodeSkew.
func checkSkew(t *testing.T, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	if run.Status.Runners == nil || run.Status.Runners.StartSkew == "" {
		t.Errorf("no start skew with 2 runners: %+v", run.Status.Runners)
		return
	}
	skew, err := time.ParseDuration(run.Status.Runners.StartSkew)
	if err != nil {
		t.Errorf("startSkew %q: %v", run.Status.Runners.StartSkew, err)
		return
	}
	metric(t.Name(), "start skew across two nodes %s", skew)
	if skew > maxMultiNodeSkew {
		t.Errorf("start skew %s over %s", skew, maxMultiNodeSkew)
	}
}

// checkCallsCounted compares the merged calls of the get_1k scenario with the GETs the Redis
// target counted (INFO commandstats): exact, both runners' documents merged.
func checkCallsCounted(t *testing.T, ns string, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	pods := podNames(t, ns, "bench.benchrun.io/component=redis-master")
	if len(pods) != 1 || len(run.Status.Results) != 1 {
		t.Errorf("target pods %v, results %d", pods, len(run.Status.Results))
		return
	}
	gets := commandCalls(redisCLI(t, ns, pods[0], "INFO", "commandstats"), "get")
	calls := run.Status.Results[0].Calls
	metric(t.Name(), "merged calls %d, GETs counted by the target %d", calls, gets)
	if calls != gets {
		t.Errorf("merged calls %d, the target counted %d GETs", calls, gets)
	}
}

// checkRunnerLogs reads each runner pod's log through the API server (the kubelet of its
// node): a pod on one node with a log and one on the other without means a broken path.
func checkRunnerLogs(t *testing.T, ns string) {
	t.Helper()
	sizes := map[string]int{}
	for _, p := range podNames(t, ns, "bench.benchrun.io/component=runner") {
		out, err := kubectl("", "-n", ns, "logs", p, "--all-containers")
		if err != nil {
			t.Errorf("kubectl logs %s: %v", p, err)
			continue
		}
		sizes[p] = len(out)
	}
	metric(t.Name(), "runner log sizes %v", sizes)
	empty, full := 0, 0
	for _, n := range sizes {
		if n == 0 {
			empty++
		} else {
			full++
		}
	}
	if empty > 0 && full > 0 {
		t.Errorf("some runner logs empty, others not: %v", sizes)
	}
}
