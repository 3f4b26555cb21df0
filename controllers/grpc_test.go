package controllers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestCustomGrpcRun takes a run with a custom target and a grpc scenario through every phase
// on a real kube-apiserver: the runners' invocation aims the grpc scenario at the Service's
// port named grpc (not the first port) with the method, and the report ConfigMap holds the
// packetd Grpc table in report.md and grpc-protocol.csv.
func TestCustomGrpcRun(t *testing.T) {
	e := newEnv(t)
	size := int32(10240)
	run := e.create(&v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "grpc", Namespace: e.ns},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{
				Image: "benchrun.local/echo:dev", Command: []string{"echo-server"}, Args: []string{"-grpc", ":$(BENCHRUN_PORT_GRPC)"},
				Ports:          []v1alpha1.CustomPort{{Name: "echo", Port: 7007}, {Name: "grpc", Port: 50051}},
				ReadinessProbe: &v1alpha1.CustomProbe{TCPSocket: &v1alpha1.ProbePort{Port: "grpc"}},
			}},
			Load: v1alpha1.LoadSpec{Workers: 1, TasksPerWorker: 2, Duration: metav1.Duration{Duration: time.Minute},
				Scenarios: []v1alpha1.Scenario{{Name: "echo10k", Type: v1alpha1.ScenarioGRPC, BodySize: &size,
					GRPC: &v1alpha1.GRPCSpec{Method: "benchrun.echo.v1.Echo/Echo"}}},
				Runners: v1alpha1.RunnerSpec{Parallelism: 1}},
		},
	})
	run = e.until(run.Name, v1alpha1.PhaseProvisioning)
	e.targetReady(run.Name)
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	var state corev1.ConfigMap
	if !e.exists(&state, e.stateName(run, 0)) {
		t.Fatal("no runner state ConfigMap")
	}
	inv := state.Data[runner.KeyInvocation]
	for _, want := range []string{`\"grpc\":{\"addrs\":[\"` + targetName(run, "server") + "." + e.ns + `.svc:50051\"]}`,
		`\"method\":\"benchrun.echo.v1.Echo/Echo\"`} {
		if !strings.Contains(inv, want) {
			t.Errorf("invocation lacks %s:\n%s", want, inv)
		}
	}
	e.readyRunners(run)
	run = e.until(run.Name, v1alpha1.PhaseRunning)
	e.finishRunner(run, 0, 100)
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	var report corev1.ConfigMap
	if !e.exists(&report, run.Status.Report.ConfigMapName) {
		t.Fatal("no report ConfigMap")
	}
	if md := report.Data["report.md"]; !strings.Contains(md, "Grpc protocol table") || !strings.Contains(md, "| OK ") {
		t.Errorf("report.md:\n%s", md)
	}
	if csv := report.Data["grpc-protocol.csv"]; !strings.HasPrefix(csv, "PROTO,REQUEST,WORKERS,BODYSIZE,") || !strings.Contains(csv, "Grpc,100,") {
		t.Errorf("grpc-protocol.csv: %q", csv)
	}
}
