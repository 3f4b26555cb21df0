package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/runner"
)

// ycsbRunnerDoc is runner i's document of a ycsb scenario: 300 reads and 100 updates with
// their own histograms, 5 VUs, and (runner 0 only) the target's counts.
func ycsbRunnerDoc(t *testing.T, i int, start time.Time) *results.Document {
	t.Helper()
	rec := results.NewRecorder("mix", "ycsb")
	for c := range 400 {
		op, d := "read", 200*time.Microsecond
		if c%4 == 3 {
			op, d = "update", 700*time.Microsecond
		}
		at := start.Add(time.Duration(c) * 10 * time.Second / 400)
		rec.Record(at, d, op, "")
		rec.Op(op).Record(at, d, op, "")
	}
	s := rec.Scenario()
	s.VUs, s.Command, s.BodySize = []int64{5}, "hgetall,hset", 1000
	if i == 0 {
		s.ServerCalls = map[string]int64{"hgetall": 600, "hset": 200, "info": 1}
	}
	doc, err := results.NewDocument(fmt.Sprintf("runner-%d", i), s)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestYCSBOperationsInStatusAndReport: per-operation results and the target's own count
// reach status.results (through the real API server's status schema) and the report
// ConfigMap holds the Pegasus and Redis protocol tables.
func TestYCSBOperationsInStatusAndReport(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("ycsb-ops", 2)
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "mix", Type: v1alpha1.ScenarioYCSB,
		YCSB: &v1alpha1.YCSBSpec{ReadProportion: 0.75, UpdateProportion: 0.25}}}
	run = e.startedRun(run)
	for i := range int(run.Status.Runners.Desired) {
		start := e.clock.Now().Add(time.Duration(i) * 3 * time.Millisecond)
		e.setRunnerState(run, i, map[string]string{runner.KeyState: runner.StateDone, runner.KeyLoadStartedAt: start.Format(time.RFC3339Nano)},
			ycsbRunnerDoc(t, i, start))
	}
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	res := run.Status.Results
	if len(res) != 1 || len(res[0].Operations) != 2 || res[0].ServerCalls == nil || *res[0].ServerCalls != 800 {
		t.Fatalf("results %+v", res)
	}
	if r := res[0].Operations[0]; r.Name != "read" || r.Calls != 600 || r.MeanUs != 200 || r.P99Us != 200 {
		t.Errorf("read %+v", r)
	}
	if u := res[0].Operations[1]; u.Name != "update" || u.Calls != 200 || u.MeanUs != 700 {
		t.Errorf("update %+v", u)
	}
	var report corev1.ConfigMap
	if !e.exists(&report, run.Status.Report.ConfigMapName) {
		t.Fatal("no report")
	}
	if !strings.HasPrefix(report.Data["ycsb-pegasus.csv"], "Case,threads,Read/Write,R-QPS") || report.Data["redis-tables.json"] == "" ||
		!strings.Contains(report.Data["redis-protocol.csv"], "Redis,800,10,") {
		t.Errorf("report tables: %q", report.Data)
	}
	md := report.Data["report.md"]
	for _, want := range []string{"| Read & Write | 2 * 5   | 3:1        |", "| PROTO/METRICS | PROTO/PERCENT |", "|           800 | 100.000%      |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}
