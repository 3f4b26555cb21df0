package target

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// customSpec is an echo server with a second (stats) port, an HTTP probe on it and placement.
func customSpec() *v1alpha1.CustomTarget {
	return &v1alpha1.CustomTarget{
		Image: "benchrun.local/echo:dev", Command: []string{"/echo-server"}, Args: []string{"-http", ":8080"},
		Env: []v1alpha1.CustomEnvVar{{Name: "MODE", Value: "fast"},
			{Name: "TOKEN", SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "token"}}},
		Ports:          []v1alpha1.CustomPort{{Name: "echo", Port: 7007}, {Name: "stats", Port: 8080}},
		ReadinessProbe: &v1alpha1.CustomProbe{HTTPGet: &v1alpha1.HTTPGetProbe{ProbePort: v1alpha1.ProbePort{Port: "stats"}, Path: "/stats"}},
		Replicas:       3,
		Placement: v1alpha1.Placement{NodeSelector: map[string]string{"pool": "bench"},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			Resources:   &v1alpha1.ResourceRequirements{Requests: v1alpha1.ResourceList{corev1.ResourceCPU: v1alpha1.Quantity{IntOrString: intstr.FromString("2")}}}},
	}
}

func TestCustomObjects(t *testing.T) {
	tg, err := New(&v1alpha1.TargetSpec{Custom: customSpec()}, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := tg.Objects()
	if err != nil {
		t.Fatal(err)
	}
	m := byName(objs)
	d, ok := m["Deployment/run-g1-server"].(*appsv1.Deployment)
	if !ok {
		t.Fatalf("no Deployment run-g1-server: %v", m)
	}
	svc, ok := m["Service/run-g1-server"].(*corev1.Service)
	if !ok {
		t.Fatalf("no Service run-g1-server: %v", m)
	}
	if *d.Spec.Replicas != 3 {
		t.Errorf("replicas %d", *d.Spec.Replicas)
	}
	ps := d.Spec.Template.Spec
	if ps.NodeSelector["pool"] != "bench" || len(ps.Tolerations) != 1 {
		t.Errorf("placement not applied: %v %v", ps.NodeSelector, ps.Tolerations)
	}
	c := ps.Containers[0]
	if c.Image != "benchrun.local/echo:dev" || c.Command[0] != "/echo-server" || c.Args[1] != ":8080" {
		t.Errorf("container: %s %v %v", c.Image, c.Command, c.Args)
	}
	if c.Resources.Requests.Cpu().String() != "2" {
		t.Errorf("resources: %v", c.Resources)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if env["BENCHRUN_PORT_ECHO"].Value != "7007" || env["BENCHRUN_PORT_STATS"].Value != "8080" || env["MODE"].Value != "fast" {
		t.Errorf("env: %v", c.Env)
	}
	if ref := env["TOKEN"].ValueFrom; ref == nil || ref.SecretKeyRef.Name != "s" || env["TOKEN"].Value != "" {
		t.Errorf("secret env: %+v", env["TOKEN"])
	}
	p := c.ReadinessProbe
	if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/stats" || p.HTTPGet.Port != intstr.FromString("stats") {
		t.Errorf("probe: %+v", p)
	}
	if len(svc.Spec.Ports) != 2 || svc.Spec.Ports[1].Name != "stats" || svc.Spec.Ports[1].TargetPort != intstr.FromString("stats") {
		t.Errorf("service ports: %+v", svc.Spec.Ports)
	}
	if svc.Spec.Selector[naming.LabelComponent] != d.Spec.Template.Labels[naming.LabelComponent] {
		t.Errorf("service selector %v does not select the pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	want := []v1alpha1.Endpoint{{Role: "custom", Address: "run-g1-server.ns.svc:7007"}, {Role: "custom-stats", Address: "run-g1-server.ns.svc:8080"}}
	if got := tg.Endpoints(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("endpoints %v, want %v", got, want)
	}
	if w := tg.Workloads(); len(w) != 1 || w[0].Name != "run-g1-server" {
		t.Errorf("workloads %v", w)
	}
}

// A probe without a port checks the first port; a spec without port or probe is refused.
func TestCustomProbeDefaultsAndRefusals(t *testing.T) {
	spec := &v1alpha1.CustomTarget{Image: "e", Ports: []v1alpha1.CustomPort{{Name: "echo", Port: 7}},
		ReadinessProbe: &v1alpha1.CustomProbe{TCPSocket: &v1alpha1.ProbePort{}}}
	c, err := newCustom(spec, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.probe(); p.TCPSocket == nil || p.TCPSocket.Port != intstr.FromString("echo") || p.PeriodSeconds != 2 {
		t.Errorf("probe %+v", p)
	}
	if _, err := newCustom(&v1alpha1.CustomTarget{Image: "e", ReadinessProbe: spec.ReadinessProbe}, opts(false)); err == nil {
		t.Error("no port accepted")
	}
	if _, err := newCustom(&v1alpha1.CustomTarget{Image: "e", Ports: spec.Ports}, opts(false)); err == nil {
		t.Error("no probe accepted")
	}
}
