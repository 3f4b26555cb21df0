package main

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/redistest"
	"github.com/benchrun/benchrun/internal/results"
)

// seedsRun is a three-scenario run of the Redis seed shapes: a YCSB mix by duration, a
// redis.command template and PING with fixed request counts.
func seedsRun(runners int) *v1alpha1.BenchmarkRun {
	records, hsets, pings, rmw := int64(500), int64(5001), int64(2001), 0.1
	dataSize := int32(64)
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "seeds"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}},
			Load: v1alpha1.LoadSpec{
				Workers: int32(3 * runners), TasksPerWorker: 1, Duration: metav1.Duration{Duration: 3 * time.Second},
				Scenarios: []v1alpha1.Scenario{{
					Name: "ycsb_mix", Type: v1alpha1.ScenarioYCSB, KeySpace: &records,
					Duration: &metav1.Duration{Duration: 2 * time.Second}, Params: map[string]v1alpha1.ParamValue{"batch": "20"},
					YCSB: &v1alpha1.YCSBSpec{ReadProportion: 0.4, UpdateProportion: 0.4, InsertProportion: 0.1,
						ReadModifyWriteProportion: &rmw, RequestDistribution: v1alpha1.DistributionZipfian},
				}, {
					Name: "hset_cmd", Type: v1alpha1.ScenarioRedisCommand, Requests: &hsets,
					RedisCommand: &v1alpha1.RedisCommandSpec{Command: "HSET benchrun:cmd:__rand_int__ f __data__", DataSize: &dataSize},
				}, {
					Name: "ping", Type: v1alpha1.ScenarioRedisPing, Requests: &pings,
				}},
			},
		},
	}
}

// TestRedisSeedShapesTwoRunners: two runners × three VUs of our k6 against one real
// redis-server through the plan and benchrun.js. Ground truth is Redis' own INFO
// commandstats, which runner 0 takes around each scenario: YCSB reads + read-modify-writes
// equal HGETALL calls and updates + inserts + read-modify-writes HSET calls (per operation,
// each with its own histogram); the fixed
// request counts (5001 HSETs, 2001 PINGs) are made exactly, split 2501/2500 and 1001/1000
// over the runners, and Redis counted exactly as many; the Pegasus and protocol tables
// render with 100.000 %.
func TestRedisSeedShapesTwoRunners(t *testing.T) {
	const runners = 2
	r := startRedis(t, "")
	run := seedsRun(runners)
	procs := make([]k6Process, runners)
	for i := range procs {
		eps := []v1alpha1.Endpoint{{Role: plan.RoleRedis, Address: r.addr}}
		inv, err := plan.ForRunnerIn(filepath.Join(repoRoot, "scripts", "k6"), run, eps, i, runners)
		if err != nil {
			t.Fatal(err)
		}
		procs[i] = k6Process{script: inv.Script, args: inv.Args, env: inv.Env, result: filepath.Join(t.TempDir(), "result.json")}
	}
	start := time.Now()
	docs := runConcurrently(t, procs)
	t.Logf("k6 runs took %s", time.Since(start).Round(time.Millisecond))
	for i, d := range docs {
		for _, c := range []struct {
			name string
			want int64
		}{{"hset_cmd", 2501 - int64(i)}, {"ping", 1001 - int64(i)}} {
			if s := scenario(t, d, c.name); s.Calls != c.want {
				t.Errorf("runner %d %s: %d calls, want its share %d", i, c.name, s.Calls, c.want)
			}
		}
	}
	merged, err := results.Merge(docs...)
	if err != nil {
		t.Fatal(err)
	}
	y := scenario(t, merged, "ycsb_mix")
	ops := map[string]int64{}
	for _, op := range y.Operations {
		ops[op.Name] = op.Calls
	}
	t.Logf("ycsb_mix: %d calls, operations %v, Redis %v, vus %v", y.Calls, ops, y.ServerCalls, y.VUs)
	rmws := ops["read-modify-write"]
	if y.Errors != 0 || ops["read"] == 0 || ops["update"] == 0 || ops["insert"] == 0 || rmws == 0 ||
		ops["read"]+ops["update"]+ops["insert"]+rmws != y.Calls {
		t.Fatalf("ycsb_mix: %d errors, operations %v of %d calls", y.Errors, ops, y.Calls)
	}
	// a read-modify-write is one HGETALL and one HSET
	if y.ServerCalls["hgetall"] != ops["read"]+rmws || y.ServerCalls["hset"] != ops["update"]+ops["insert"]+rmws {
		t.Errorf("per operation: reads+rmw %d vs Redis HGETALL %d; updates+inserts+rmw %d vs Redis HSET %d",
			ops["read"]+rmws, y.ServerCalls["hgetall"], ops["update"]+ops["insert"]+rmws, y.ServerCalls["hset"])
	}
	if len(y.VUs) != runners || y.VUs[0] != 3 || y.VUs[1] != 3 {
		t.Errorf("ycsb_mix vus %v, want [3 3]", y.VUs)
	}
	h := scenario(t, merged, "hset_cmd")
	if h.Calls != 5001 || h.Errors != 0 || h.ServerCalls["hset"] != 5001 || h.Type != "redis.command" || h.Command != "hset" || h.BodySize != 64 {
		t.Errorf("hset_cmd: %d calls, %d errors, Redis %v, type %q command %q body %d", h.Calls, h.Errors, h.ServerCalls, h.Type, h.Command, h.BodySize)
	}
	if p := scenario(t, merged, "ping"); p.Calls != 2001 || p.ServerCalls["ping"] != 2001 {
		t.Errorf("ping: %d calls, Redis %v", p.Calls, p.ServerCalls)
	}
	sum := results.Summarize(merged, results.DefaultOptions())
	var md bytes.Buffer
	if err := results.RenderMarkdown(&md, "", sum); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	t.Log(out[strings.Index(out, "YCSB per operation"):])
	peg := results.PegasusRows(sum)
	if len(peg) != 1 || peg[0].Cells[1] != "2 * 3" || peg[0].Cells[0] != "Read & Write" {
		t.Errorf("Pegasus rows %+v", peg)
	}
	rows := results.RedisProtocolRows(sum)
	if len(rows) != 3 {
		t.Fatalf("protocol rows %+v", rows)
	}
	for _, row := range rows {
		if row.Cells[9] != "100.000%" || row.Cells[2] != strconv.Itoa(3*runners) {
			t.Errorf("protocol row %s: %q", row.Scenario, row.Cells)
		}
	}
}

// scenario returns the scenario named name of doc.
func scenario(t *testing.T, doc *results.Document, name string) results.Scenario {
	t.Helper()
	for _, s := range doc.Scenarios {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %q in %+v", name, doc.Scenarios)
	return results.Scenario{}
}

// TestServerCountsOptional: a target that refuses INFO (renamed away, as some managed Redis
// and proxies do) and a scenario with serverCounts: "false" give no server-side counts (the
// protocol table shows "-"), and the fixed count is still exact.
func TestServerCountsOptional(t *testing.T) {
	addr := redistest.Start(t, "--rename-command", "INFO", "")
	pings := int64(1500)
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "no-info"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}},
			Load: v1alpha1.LoadSpec{
				Workers: 2, TasksPerWorker: 1, Duration: metav1.Duration{Duration: 2 * time.Second},
				Scenarios: []v1alpha1.Scenario{
					{Name: "ping", Type: v1alpha1.ScenarioRedisPing, Requests: &pings},
					{Name: "ping_off", Type: v1alpha1.ScenarioRedisPing, Requests: &pings, Params: map[string]v1alpha1.ParamValue{"serverCounts": "false"}},
				},
			},
		},
	}
	inv, err := plan.ForRunnerIn(filepath.Join(repoRoot, "scripts", "k6"), run, []v1alpha1.Endpoint{{Role: plan.RoleRedis, Address: addr}}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	docs := runConcurrently(t, []k6Process{{script: inv.Script, args: inv.Args, env: inv.Env, result: filepath.Join(t.TempDir(), "result.json")}})
	for _, name := range []string{"ping", "ping_off"} {
		s := scenario(t, docs[0], name)
		if s.Calls != pings || s.Errors != 0 || s.ServerCalls != nil || s.Command != "ping" {
			t.Errorf("%s: %d calls, %d errors, server counts %v, command %q", name, s.Calls, s.Errors, s.ServerCalls, s.Command)
		}
	}
	rows := results.RedisProtocolRows(results.Summarize(docs[0], results.DefaultOptions()))
	if len(rows) != 2 || rows[0].Cells[8] != "-" || rows[0].Cells[9] != "-" || rows[0].Cells[1] != "1500" {
		t.Errorf("protocol rows %+v", rows)
	}
}
