//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// kubectl runs kubectl with the test's KUBECONFIG; stdin may be empty.
func kubectl(stdin string, args ...string) (string, error) {
	cmd := exec.Command(kubectlBin, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

func mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := kubectl(stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newNamespace creates e2e-<name>-<rand> enforcing the restricted Pod Security Standard; it is
// deleted at the end of the test (dumped first when the test failed) unless E2E_KEEP=1.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	ns := fmt.Sprintf("e2e-%s-%04x", name, rand.Intn(0x10000))
	mustKubectl(t, "", "create", "namespace", ns)
	mustKubectl(t, "", "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted", "--overwrite")
	t.Cleanup(func() {
		if t.Failed() {
			dump(t, ns)
		}
		if keep {
			t.Logf("E2E_KEEP=1: namespace %s kept", ns)
			return
		}
		// Not waited for: the next test does not need it gone (every test has its own
		// namespace), and waiting cost each test the target pods' termination.
		_, _ = kubectl("", "delete", "namespace", ns, "--wait=false")
	})
	return ns
}

// parallel marks a test that may share the cluster with other such tests: it changes nothing
// cluster-wide (nodes, the manager, the chart) and asserts no throughput or timing that
// another test's load would skew. go test runs every other test first, one at a time, then
// these together, E2E_PARALLEL (make test-e2e; default 4) at once.
func parallel(t *testing.T) {
	t.Helper()
	t.Parallel()
}

var redisOperatorInstall struct {
	sync.Mutex
	done bool
}

// installRedisOperator runs make redis-operator-install once per suite (tests that use the
// OT redis-operator may run in parallel).
func installRedisOperator(t *testing.T) {
	t.Helper()
	redisOperatorInstall.Lock()
	defer redisOperatorInstall.Unlock()
	if redisOperatorInstall.done {
		return
	}
	if out, err := sh(repoRoot, "make", "redis-operator-install"); err != nil {
		t.Fatalf("make redis-operator-install: %v\n%s", err, out)
	}
	redisOperatorInstall.done = true
}

// dump writes what a failed test's namespace holds (and the manager's log) to the test log.
func dump(t *testing.T, ns string) {
	for _, args := range [][]string{
		{"-n", ns, "get", "br,pods,jobs,sts,deploy,svc,cm", "-o", "wide"},
		{"-n", ns, "get", "br", "-o", "yaml"},
		{"-n", ns, "get", "events", "--sort-by=.lastTimestamp"},
		{"-n", managerNamespace, "logs", "deploy/benchrun-manager", "--tail=15"},
	} {
		out, err := kubectl("", args...)
		t.Logf("--- kubectl %s\n%s%v", strings.Join(args, " "), out, errOrEmpty(err))
	}
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func apply(t *testing.T, ns, manifest string) {
	t.Helper()
	mustKubectl(t, manifest, "-n", ns, "apply", "-f", "-")
}

func getRun(t *testing.T, ns, name string) *v1alpha1.BenchmarkRun {
	t.Helper()
	out, err := kubectl("", "-n", ns, "get", "benchmarkrun", name, "-o", "json")
	if err != nil {
		t.Logf("get run: %v", err)
		return nil
	}
	var run v1alpha1.BenchmarkRun
	if err := json.Unmarshal([]byte(out), &run); err != nil {
		t.Fatalf("decode run: %v", err)
	}
	return &run
}

// waitPhase polls the run until its phase is one of phases (or the run timeout passes).
func waitPhase(t *testing.T, ns, name string, timeout time.Duration, phases ...v1alpha1.Phase) *v1alpha1.BenchmarkRun {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := v1alpha1.Phase("?")
	for {
		run := getRun(t, ns, name)
		if run != nil {
			if run.Status.Phase != last {
				t.Logf("%s/%s phase %q", ns, name, run.Status.Phase)
				last = run.Status.Phase
			}
			for _, p := range phases {
				if run.Status.Phase == p {
					return run
				}
			}
			// A terminal phase that was not asked for: stop waiting.
			if run.Status.Phase == v1alpha1.PhaseSucceeded || run.Status.Phase == v1alpha1.PhaseFailed {
				t.Fatalf("%s/%s ended %s while waiting for %v: %s", ns, name, run.Status.Phase, phases, conditionsText(run))
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s: no phase %v within %s (last %q)", ns, name, phases, timeout, last)
		}
		time.Sleep(time.Second)
	}
}

func conditionsText(run *v1alpha1.BenchmarkRun) string {
	var b strings.Builder
	for _, c := range run.Status.Conditions {
		fmt.Fprintf(&b, "[%s=%s %s: %s] ", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

// recordTimings logs apply→first request and the start skew across runners.
func recordTimings(t *testing.T, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	first := "n/a"
	if run.Status.LoadStartTime != nil {
		first = fmt.Sprintf("%.1fs", run.Status.LoadStartTime.Sub(run.CreationTimestamp.Time).Seconds())
	}
	total := "n/a"
	if run.Status.CompletionTime != nil {
		total = fmt.Sprintf("%.1fs", run.Status.CompletionTime.Sub(run.CreationTimestamp.Time).Seconds())
	}
	desired, skew := int32(0), ""
	if run.Status.Runners != nil {
		desired, skew = run.Status.Runners.Desired, run.Status.Runners.StartSkew
	}
	metric(t.Name(), "apply->first-request=%s startSkew=%s runners=%d apply->%s=%s", first, orNA(skew), desired, run.Status.Phase, total)
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// checkTables asserts the status tables of a finished run: one row per expected scenario,
// counts > 0, min ≤ p50 ≤ p90 ≤ p99 ≤ max, CPS × duration consistent with the calls,
// return-value percentages summing to ~100, and the report ConfigMap rendered.
func checkTables(t *testing.T, ns string, run *v1alpha1.BenchmarkRun, scenarios []string, duration time.Duration) {
	t.Helper()
	byName := map[string]v1alpha1.ScenarioResult{}
	for _, r := range run.Status.Results {
		byName[r.Name] = r
	}
	for _, name := range scenarios {
		r, ok := byName[name]
		if !ok {
			t.Errorf("scenario %s: no row in status.results (%d rows)", name, len(run.Status.Results))
			continue
		}
		l := r.LatencyMs
		t.Logf("scenario %-16s calls=%d errors=%d cps=%.1f ms: min=%.3f p50=%.3f p90=%.3f p99=%.3f max=%.3f returns=%d",
			name, r.Calls, r.Errors, r.CPS, l.Min, l.P50, l.P90, l.P99, l.Max, len(r.ReturnValues))
		if r.Calls <= 0 {
			t.Errorf("scenario %s: calls = %d", name, r.Calls)
		}
		if r.CPS <= 0 {
			t.Errorf("scenario %s: cps = %v", name, r.CPS)
		}
		const eps = 1e-6
		if !(l.Min <= l.P50+eps && l.P50 <= l.P90+eps && l.P90 <= l.P99+eps && l.P99 <= l.Max+eps) {
			t.Errorf("scenario %s: latencies out of order: min=%v p50=%v p90=%v p99=%v max=%v", name, l.Min, l.P50, l.P90, l.P99, l.Max)
		}
		if l.Max <= 0 {
			t.Errorf("scenario %s: max latency %v", name, l.Max)
		}
		// CPS is computed over the (possibly trimmed) window: generous factor of 4.
		if est := r.CPS * duration.Seconds(); est < float64(r.Calls)/4 || est > float64(r.Calls)*4 {
			t.Errorf("scenario %s: cps %.1f × %s = %.0f inconsistent with %d calls", name, r.CPS, duration, est, r.Calls)
		}
		if len(r.ReturnValues) > 0 {
			sum := 0.0
			var cnt int64
			for _, v := range r.ReturnValues {
				sum += v.Percent
				cnt += v.Count
			}
			if math.Abs(sum-100) > 1 {
				t.Errorf("scenario %s: return-value percentages sum to %.2f", name, sum)
			}
			if cnt <= 0 {
				t.Errorf("scenario %s: return-value counts sum to %d", name, cnt)
			}
		} else {
			t.Errorf("scenario %s: no return values", name)
		}
	}
	checkReport(t, ns, run)
}

func checkReport(t *testing.T, ns string, run *v1alpha1.BenchmarkRun) string {
	t.Helper()
	if run.Status.Report == nil || run.Status.Report.ConfigMapName == "" {
		t.Errorf("no status.report.configMapName")
		return ""
	}
	md, err := kubectl("", "-n", ns, "get", "configmap", run.Status.Report.ConfigMapName, "-o", `jsonpath={.data.report\.md}`)
	if err != nil {
		t.Errorf("report ConfigMap: %v", err)
		return ""
	}
	for _, h := range []string{"Average CPS", "Function Execution Time Statistics"} {
		if !strings.Contains(md, h) {
			t.Errorf("report ConfigMap %s: no %q in report.md:\n%s", run.Status.Report.ConfigMapName, h, md)
		}
	}
	return md
}

// checkCleanedOnSuccess waits until the namespace has no StatefulSet/Deployment left (the
// target), then checks the results are still in the status.
func checkCleanedOnSuccess(t *testing.T, ns, name string, scenarios int) {
	t.Helper()
	checkGone(t, ns, name, scenarios, "statefulsets,deployments", "-l", "bench.benchrun.io/run")
}

// checkGone waits until `kubectl get <kinds> <selector...>` lists nothing in ns.
func checkGone(t *testing.T, ns, name string, scenarios int, kinds string, selector ...string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var left string
	for time.Now().Before(deadline) {
		out, err := kubectl("", append([]string{"-n", ns, "get", kinds, "-o", "name"}, selector...)...)
		if err == nil && strings.TrimSpace(out) == "" {
			left = ""
			break
		}
		left = out
		time.Sleep(2 * time.Second)
	}
	if left != "" {
		t.Errorf("OnSuccess: still there after 90s:\n%s", left)
	}
	run := getRun(t, ns, name)
	if run == nil || len(run.Status.Results) < scenarios {
		t.Errorf("results lost after cleanup")
	}
}

// runPods returns pod names matching a selector.
func podNames(t *testing.T, ns, selector string) []string {
	t.Helper()
	out := mustKubectl(t, "", "-n", ns, "get", "pods", "-l", selector, "-o", `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`)
	return strings.Fields(out)
}

// killK6 SIGKILLs the k6 process of the runner pod (on the local cluster, from the host through
// /proc and the pod UID in its cgroup). When the node is not this machine it force-deletes
// the pod instead (SIGTERM: k6 aborts and the runner still reports what it measured).
func killK6(t *testing.T, ns, pod string) string {
	t.Helper()
	uid := strings.TrimSpace(mustKubectl(t, "", "-n", ns, "get", "pod", pod, "-o", "jsonpath={.metadata.uid}"))
	if uid != "" { // works when the node is this machine (the local cluster)
		uidU := strings.ReplaceAll(uid, "-", "_")
		procs, _ := filepath.Glob("/proc/[0-9]*/comm")
		for _, c := range procs {
			comm, err := os.ReadFile(c)
			if err != nil || strings.TrimSpace(string(comm)) != "k6" {
				continue
			}
			dir := filepath.Dir(c)
			cg, err := os.ReadFile(filepath.Join(dir, "cgroup"))
			if err != nil || (!strings.Contains(string(cg), uid) && !strings.Contains(string(cg), uidU)) {
				continue
			}
			pid, _ := strconv.Atoi(filepath.Base(dir))
			p, err := os.FindProcess(pid)
			if err == nil && p.Kill() == nil {
				return fmt.Sprintf("SIGKILL k6 pid %d in pod %s", pid, pod)
			}
		}
	}
	mustKubectl(t, "", "-n", ns, "delete", "pod", pod, "--grace-period=0", "--force")
	return "force-deleted pod " + pod
}

// loadPool labels and taints the node(s) as a dedicated load pool for the test's duration.
func loadPool(t *testing.T) {
	t.Helper()
	nodes := strings.Fields(mustKubectl(t, "", "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`))
	if len(nodes) == 0 {
		t.Fatal("no nodes")
	}
	// Single node: it is both the load pool and the target's node (the target tolerates it too).
	for _, n := range nodes {
		mustKubectl(t, "", "label", "node", n, "benchrun.io/pool=load", "--overwrite")
		mustKubectl(t, "", "taint", "node", n, "benchrun.io/load=true:NoSchedule", "--overwrite")
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_, _ = kubectl("", "taint", "node", n, "benchrun.io/load=true:NoSchedule-")
			_, _ = kubectl("", "label", "node", n, "benchrun.io/pool-")
		}
	})
}

// redisCLI runs redis-cli in a target pod (password from the pod's REDIS_PASSWORD if any).
func redisCLI(t *testing.T, ns, pod string, args ...string) string {
	t.Helper()
	script := `if [ -n "${REDIS_PASSWORD:-}" ]; then export REDISCLI_AUTH="$REDIS_PASSWORD"; fi; exec redis-cli "$@"`
	full := append([]string{"-n", ns, "exec", pod, "--", "sh", "-c", script, "sh"}, args...)
	return mustKubectl(t, "", full...)
}

// commandCalls parses "cmdstat_<cmd>:calls=N," from INFO commandstats.
func commandCalls(info, cmd string) int64 {
	for _, l := range strings.Split(info, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "cmdstat_"+cmd+":") {
			continue
		}
		for _, f := range strings.Split(strings.TrimPrefix(l, "cmdstat_"+cmd+":"), ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
	}
	return 0
}

// checkUsage asserts status.resources has CPU and memory for each role and records them.
func checkUsage(t *testing.T, run *v1alpha1.BenchmarkRun, roles ...string) {
	t.Helper()
	got := map[string]v1alpha1.ResourceUsage{}
	for _, u := range run.Status.Resources {
		got[u.Role] = u
		metric(t.Name()+" usage", "role=%s pods=%d cpuAvg=%.3f cpuMax=%.3f memAvg=%dMi memMax=%dMi source=%s",
			u.Role, u.Pods, u.CPUAvgCores, u.CPUMaxCores, u.MemoryAvgBytes>>20, u.MemoryMaxBytes>>20, u.Source)
	}
	for _, role := range roles {
		u, ok := got[role]
		switch {
		case !ok:
			t.Errorf("status.resources has no role %q: %+v", role, run.Status.Resources)
		case u.Pods < 1 || u.CPUAvgCores <= 0 || u.CPUMaxCores < u.CPUAvgCores || u.MemoryAvgBytes <= 0 || u.MemoryMaxBytes < u.MemoryAvgBytes:
			t.Errorf("implausible usage for %s: %+v", role, u)
		}
	}
}

// checkNoSecret asserts a secret value appears nowhere in the run's status, its report
// ConfigMap or the namespace's events.
func checkNoSecret(t *testing.T, ns string, run *v1alpha1.BenchmarkRun, secret string) {
	t.Helper()
	where := map[string]string{
		"run":    mustKubectl(t, "", "-n", ns, "get", "benchmarkrun", run.Name, "-o", "json"),
		"events": mustKubectl(t, "", "-n", ns, "get", "events", "-o", "json"),
	}
	if run.Status.Report != nil {
		where["report"] = mustKubectl(t, "", "-n", ns, "get", "configmap", run.Status.Report.ConfigMapName, "-o", "json")
	}
	for name, text := range where {
		if strings.Contains(text, secret) || strings.Contains(text, strconv.Quote(secret)[1:len(strconv.Quote(secret))-1]) {
			t.Errorf("the secret appears in the %s", name)
		}
	}
}
