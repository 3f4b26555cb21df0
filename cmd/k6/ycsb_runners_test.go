package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
)

// k6Process is one k6 run of a multi-runner test.
type k6Process struct {
	script string
	args   []string
	env    map[string]string
	result string
}

// runConcurrently runs every process at the same time and returns their result documents.
func runConcurrently(t *testing.T, procs []k6Process) []*results.Document {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(procs))
	for i, p := range procs {
		wg.Go(func() {
			args := append([]string{"run", "--out", "benchrun=" + p.result}, p.args...)
			cmd := exec.Command(k6Bin, append(args, p.script)...)
			cmd.Env = os.Environ()
			for k, v := range p.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			if b, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("k6 run %d: %w\n%s", i, err, b)
			}
		})
	}
	wg.Wait()
	docs := make([]*results.Document, len(procs))
	for i, p := range procs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		docs[i] = readDoc(t, p.result)
	}
	return docs
}

// TestYCSBRunnersInsertDisjointKeys: two runners × four VUs of an insert-heavy YCSB workload
// against one real redis-server. Ground truth: the keys in Redis are exactly the loaded
// records plus one per insert the merged results report, so no insert overwrote another
// (across runners nor across the VUs of one runner). Run both ways runners get their slot:
// the plan's environment through benchrun.js (local and in-cluster runners), and
// BENCHRUN_RUNNER_INDEX/COUNT given to the standalone ycsb.js.
func TestYCSBRunnersInsertDisjointKeys(t *testing.T) {
	const runners, records = 2, 1000
	for _, via := range []string{"plan", "ycsb.js"} {
		t.Run(via, func(t *testing.T) {
			r := startRedis(t, "")
			procs := make([]k6Process, runners)
			for i := range procs {
				procs[i].result = filepath.Join(t.TempDir(), "result.json")
				if via == "plan" {
					procs[i].script, procs[i].args, procs[i].env = ycsbPlan(t, r.addr, i, runners, records)
					continue
				}
				procs[i].script = filepath.Join(repoRoot, "scripts/k6/ycsb.js")
				procs[i].args = []string{"-q", "--summary-mode", "disabled"}
				procs[i].env = map[string]string{
					"REDIS_ADDR": r.addr, "DURATION": "3s", "GRACE": "1s", "VUS": "4", "BATCH": "20",
					"RECORD_COUNT": strconv.Itoa(records), "READ_PROPORTION": "0.2", "UPDATE_PROPORTION": "0",
					"INSERT_PROPORTION": "0.8", "DISTRIBUTION": "latest", "BENCHRUN_RUNNER": "r" + strconv.Itoa(i),
					plan.EnvRunnerIndex: strconv.Itoa(i), plan.EnvRunnerCount: strconv.Itoa(runners),
				}
			}
			docs := runConcurrently(t, procs)
			for i, d := range docs {
				if n := d.Scenarios[0].ReturnValues["insert"]; n == 0 {
					t.Fatalf("runner %d inserted nothing: %+v", i, d.Scenarios[0])
				}
			}
			merged, err := results.Merge(docs...)
			if err != nil {
				t.Fatal(err)
			}
			s := merged.Scenarios[0]
			inserts := s.ReturnValues["insert"]
			if s.Errors != 0 || s.ReturnValues["read"] == 0 || inserts < 1000 {
				t.Fatalf("ycsb: %d errors, return values %v (want reads and at least 1000 inserts)", s.Errors, s.ReturnValues)
			}
			size, err := strconv.ParseInt(r.do(t, "", "DBSIZE"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d runners: %d inserts, %d reads; DBSIZE %d", runners, inserts, s.ReturnValues["read"], size)
			if size-records != inserts {
				t.Errorf("distinct inserted keys %d (DBSIZE %d - %d loaded) != %d insert calls recorded", size-records, size, records, inserts)
			}
		})
	}
}

// ycsbPlan is runner index's invocation of a one-scenario ycsb BenchmarkRun (4 VUs per runner).
func ycsbPlan(t *testing.T, addr string, index, count int, records int64) (string, []string, map[string]string) {
	t.Helper()
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "ycsb-runners"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}},
			Load: v1alpha1.LoadSpec{
				Workers: int32(4 * count), TasksPerWorker: 1, Duration: metav1.Duration{Duration: 3 * time.Second},
				Scenarios: []v1alpha1.Scenario{{
					Name: "ycsb_d", Type: v1alpha1.ScenarioYCSB, KeySpace: &records,
					Params: map[string]v1alpha1.ParamValue{"batch": "20"},
					YCSB: &v1alpha1.YCSBSpec{ReadProportion: 0.2, InsertProportion: 0.8,
						RequestDistribution: v1alpha1.DistributionLatest},
				}},
			},
		},
	}
	eps := []v1alpha1.Endpoint{{Role: plan.RoleRedis, Address: addr}}
	inv, err := plan.ForRunnerIn(filepath.Join(repoRoot, "scripts", "k6"), run, eps, index, count)
	if err != nil {
		t.Fatal(err)
	}
	if inv.VUs != 4 {
		t.Fatalf("runner %d has %d VUs, want 4", index, inv.VUs)
	}
	return inv.Script, inv.Args, inv.Env
}
