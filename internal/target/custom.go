package target

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// customSuffix names a custom target's Deployment and Service (prefix-server).
const customSuffix = "server"

// custom deploys the user's own server: a Deployment running the image with the restricted
// security contexts every benchrun pod has (user 65532, read-only root, an emptyDir on
// /tmp), and a Service with the named ports.
type custom struct {
	spec *v1alpha1.CustomTarget
	o    Options
}

// newCustom checks what admission cannot (a spec that bypassed it, e.g. a run file).
func newCustom(spec *v1alpha1.CustomTarget, o Options) (*custom, error) {
	if len(spec.Ports) == 0 {
		return nil, fmt.Errorf("spec.target.custom needs at least one port")
	}
	if spec.ReadinessProbe == nil {
		return nil, fmt.Errorf("spec.target.custom needs a readinessProbe (tcpSocket, httpGet or exec)")
	}
	return &custom{spec: spec, o: o}, nil
}

// PortEnv is the environment variable holding the number of the custom target port name
// (BENCHRUN_PORT_ECHO for "echo"); set in the pods and for local processes alike.
func PortEnv(name string) string {
	return "BENCHRUN_PORT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Kind implements Target.
func (c *custom) Kind() string { return customLabel }

// Provider implements Target.
func (c *custom) Provider() string { return "builtin" }

// Endpoints implements Target: the Service's ports, the first one with role custom.
func (c *custom) Endpoints() []v1alpha1.Endpoint {
	host := fmt.Sprintf("%s.%s.svc", naming.Name(c.o.Prefix, customSuffix), c.o.Namespace)
	eps := make([]v1alpha1.Endpoint, 0, len(c.spec.Ports))
	for i, p := range c.spec.Ports {
		role := RoleCustom
		if i > 0 {
			role = RoleCustom + "-" + p.Name
		}
		eps = append(eps, v1alpha1.Endpoint{Role: role, Address: fmt.Sprintf("%s:%d", host, p.Port)})
	}
	return eps
}

// Objects implements Target: the Deployment and its Service.
func (c *custom) Objects() ([]client.Object, error) {
	o := c.o
	pod := corev1.PodSpec{SecurityContext: naming.PodSecurityContext(), EnableServiceLinks: ptr.To(false),
		AutomountServiceAccountToken: ptr.To(false)}
	res := placementPod(&c.spec.Placement, &pod)
	var ports []corev1.ContainerPort
	var svcPorts []corev1.ServicePort
	var env []corev1.EnvVar
	for _, p := range c.spec.Ports {
		ports = append(ports, corev1.ContainerPort{Name: p.Name, ContainerPort: p.Port, Protocol: corev1.ProtocolTCP})
		svcPorts = append(svcPorts, corev1.ServicePort{Name: p.Name, Port: p.Port, TargetPort: intstr.FromString(p.Name)})
		env = append(env, corev1.EnvVar{Name: PortEnv(p.Name), Value: fmt.Sprint(p.Port)})
	}
	for _, e := range c.spec.Env { // after the port variables: the user's win
		if e.SecretKeyRef != nil {
			env = append(env, secretEnv(e.Name, e.SecretKeyRef))
		} else {
			env = append(env, corev1.EnvVar{Name: e.Name, Value: e.Value})
		}
	}
	pod.Containers = []corev1.Container{{
		Name: "server", Image: c.spec.Image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: c.spec.Command, Args: c.spec.Args, Env: env, Ports: ports, Resources: res,
		SecurityContext: naming.ContainerSecurityContext(),
		ReadinessProbe:  c.probe(),
		VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
	}}
	pod.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	replicas := max(c.spec.Replicas, 1)
	labels := o.withLabels(customSuffix)
	svc := &corev1.Service{ObjectMeta: o.meta(customSuffix, customSuffix), Spec: corev1.ServiceSpec{
		Selector: map[string]string{naming.LabelRun: labels[naming.LabelRun], naming.LabelGeneration: labels[naming.LabelGeneration],
			naming.LabelComponent: customSuffix},
		Ports: svcPorts,
	}}
	return []client.Object{deployment(o.meta(customSuffix, customSuffix), replicas, labels, pod), svc}, nil
}

// probe is the container's readiness probe; a port left empty is the first port.
func (c *custom) probe() *corev1.Probe {
	rp := c.spec.ReadinessProbe
	port := func(name string) intstr.IntOrString {
		if name == "" {
			name = c.spec.Ports[0].Name
		}
		return intstr.FromString(name)
	}
	p := &corev1.Probe{PeriodSeconds: 2, FailureThreshold: 3}
	if rp.PeriodSeconds > 0 {
		p.PeriodSeconds = rp.PeriodSeconds
	}
	switch {
	case rp.TCPSocket != nil:
		p.TCPSocket = &corev1.TCPSocketAction{Port: port(rp.TCPSocket.Port)}
	case rp.HTTPGet != nil:
		path := rp.HTTPGet.Path
		if path == "" {
			path = "/"
		}
		p.HTTPGet = &corev1.HTTPGetAction{Path: path, Port: port(rp.HTTPGet.Port)}
	case rp.Exec != nil:
		p.Exec = &corev1.ExecAction{Command: rp.Exec.Command}
	}
	return p
}

// Ready implements Target: every replica of the Deployment passes its readiness probe.
func (c *custom) Ready(ctx context.Context, r client.Reader) (bool, string, error) {
	return deploymentReady(ctx, r, c.o.Namespace, naming.Name(c.o.Prefix, customSuffix))
}

// Workloads implements Target: the Deployment.
func (c *custom) Workloads() []Workload {
	return []Workload{{Kind: "Deployment", Name: naming.Name(c.o.Prefix, customSuffix)}}
}

// customLabel is the kind label of a custom target.
const customLabel = "custom"

// wireCustom gives the scripts, for every stream entry of BENCHRUN_TARGET (tcp, http, grpc:
// streamEntries), the port named after it (role custom-<entry>), else the first port.
func wireCustom(_ *v1alpha1.TargetSpec, endpoints []v1alpha1.Endpoint) (Addresses, []SecretEnv) {
	w := newWiring(endpoints)
	for _, name := range streamEntries() {
		a := w.byRole[RoleCustom+"-"+name]
		if len(a) == 0 {
			a = w.byRole[RoleCustom]
		}
		if len(a) > 0 {
			w.out.setStream(name, &StreamAddresses{Addrs: a})
		}
	}
	return w.done()
}
