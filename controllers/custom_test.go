package controllers

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestCustomEchoRun takes a run with a custom target and tcp.echo scenarios through every
// phase on a real kube-apiserver: the Deployment (restricted security contexts, named ports,
// the probe) and Service are accepted and owned by the run, the runners' invocation connects
// to the Service's first port, and the report is in the echo-server shape.
func TestCustomEchoRun(t *testing.T) {
	e := newEnv(t)
	size := int32(1000)
	run := e.create(&v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: e.ns},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{
				Image: "benchrun.local/echo:dev", Command: []string{"echo-server"}, Args: []string{"-listen", ":$(BENCHRUN_PORT_ECHO)"},
				Ports:          []v1alpha1.CustomPort{{Name: "echo", Port: 7007}, {Name: "stats", Port: 8080}},
				ReadinessProbe: &v1alpha1.CustomProbe{HTTPGet: &v1alpha1.HTTPGetProbe{ProbePort: v1alpha1.ProbePort{Port: "stats"}, Path: "/stats"}},
				Replicas:       2,
			}},
			Load: v1alpha1.LoadSpec{Workers: 2, TasksPerWorker: 2, Duration: metav1.Duration{Duration: time.Minute},
				Scenarios: []v1alpha1.Scenario{{Name: "echo", Type: v1alpha1.ScenarioTCPEcho, BodySize: &size}},
				Runners:   v1alpha1.RunnerSpec{Parallelism: 1}},
		},
	})
	run = e.until(run.Name, v1alpha1.PhaseProvisioning)
	if run.Status.Target.Kind != "custom" {
		t.Errorf("target kind %q", run.Status.Target.Kind)
	}
	var d appsv1.Deployment
	if !e.exists(&d, targetName(run, "server")) || !metav1.IsControlledBy(&d, run) {
		t.Fatal("no Deployment <prefix>-server owned by the run")
	}
	c := d.Spec.Template.Spec.Containers[0]
	if *d.Spec.Replicas != 2 || !ptr.Deref(c.SecurityContext.ReadOnlyRootFilesystem, false) || c.ReadinessProbe.HTTPGet == nil {
		t.Errorf("deployment: replicas %d, container %+v", *d.Spec.Replicas, c)
	}
	var svc corev1.Service
	if !e.exists(&svc, targetName(run, "server")) || len(svc.Spec.Ports) != 2 {
		t.Fatalf("service: %+v", svc.Spec)
	}
	e.targetReady(run.Name)
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	var state corev1.ConfigMap
	if !e.exists(&state, e.stateName(run, 0)) {
		t.Fatal("no runner state ConfigMap")
	}
	want := `\"tcp\":{\"addrs\":[\"` + targetName(run, "server") + "." + e.ns + `.svc:7007\"]}`
	if inv := state.Data[runner.KeyInvocation]; !strings.Contains(inv, want) {
		t.Errorf("invocation lacks %s:\n%s", want, inv)
	}
	e.readyRunners(run)
	run = e.until(run.Name, v1alpha1.PhaseRunning)
	e.finishRunner(run, 0, 100)
	run = e.until(run.Name, v1alpha1.PhaseSucceeded)
	var report corev1.ConfigMap
	if !e.exists(&report, run.Status.Report.ConfigMapName) {
		t.Fatal("no report ConfigMap")
	}
	md := report.Data["report.md"]
	for _, w := range []string{"TCP Echo Statistics:", "### echo", "100 0.0KiB messages in "} {
		if !strings.Contains(md, w) {
			t.Errorf("report.md lacks %q:\n%s", w, md)
		}
	}
	if len(run.Status.Results) != 1 || run.Status.Results[0].Calls != 100 {
		t.Errorf("results %+v", run.Status.Results)
	}
}
