package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/plan"
)

// customScript is a user's k6 script of a `type: script` scenario: it connects to the run's
// Redis through k6/x/benchrun (so every call is recorded) and reads a scenario param.
const customScript = `
import benchrun from 'k6/x/benchrun';
const target = JSON.parse(__ENV.BENCHRUN_TARGET);
const r = benchrun.redis({ addr: target.redis.addrs[0] });
export default function () {
  r.loop(20, 'INCR', 'custom:' + __ENV.COUNTER);
}
`

// TestPlanWithScriptScenario runs a plan mixing a built-in scenario and a custom script
// scenario through benchrun.js and the generated entry module, against a real redis-server.
func TestPlanWithScriptScenario(t *testing.T) {
	r := startRedis(t, "")
	sec := metav1.Duration{Duration: 2 * time.Second}
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "mixed"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}},
			Load: v1alpha1.LoadSpec{
				Workers: 1, TasksPerWorker: 2, Duration: sec,
				Scenarios: []v1alpha1.Scenario{
					{Name: "ping", Type: v1alpha1.ScenarioRedisPing},
					{Name: "incr", Type: v1alpha1.ScenarioScript, Params: map[string]v1alpha1.ParamValue{"COUNTER": "n"},
						Script: &v1alpha1.ScriptSource{ConfigMapName: "scripts", Key: "incr.js"}},
				},
			},
		},
	}
	eps := []v1alpha1.Endpoint{{Role: plan.RoleRedis, Address: r.addr}}
	scriptDir := filepath.Join(repoRoot, "scripts", "k6")
	if _, err := plan.ForRunnerIn(scriptDir, run, eps, 0, 1); err == nil {
		t.Fatal("a script scenario without its source must be an error")
	}
	inv, err := plan.ForRunnerIn(scriptDir, run, eps, 0, 1, plan.WithScripts(map[string]string{"incr": customScript}))
	if err != nil {
		t.Fatal(err)
	}
	script, err := inv.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd, out := k6Command(t, inv, script)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("k6 run: %v\n%s", err, b)
	}
	doc := readDoc(t, out)
	calls := map[string]int64{}
	for _, s := range doc.Scenarios {
		calls[s.Name] = s.Calls
	}
	if calls["ping"] == 0 || calls["incr"] == 0 {
		t.Fatalf("calls per scenario: %v, want both scenarios recorded", calls)
	}
	// Ground truth: the custom scenario's recorded calls are the INCRs Redis executed.
	got := r.do(t, "", "GET", "custom:n")
	if got != strconv.FormatInt(calls["incr"], 10) {
		t.Errorf("redis counter %s, benchrun recorded %d INCR calls", got, calls["incr"])
	}
}

// k6Command is `k6 run --out benchrun=OUT <inv's args> script` with inv's environment added
// to this process's; OUT is a fresh result file in the test's temporary directory.
func k6Command(t *testing.T, inv plan.Invocation, script string) (*exec.Cmd, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "result.json")
	args := append([]string{"run", "--out", "benchrun=" + out}, inv.Args...)
	cmd := exec.Command(k6Bin, append(args, script)...)
	cmd.Env = os.Environ()
	for k, v := range inv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd, out
}
