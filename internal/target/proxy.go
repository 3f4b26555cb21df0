package target

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// The proxy's object suffix and client port.
const (
	proxySuffix = "proxy"
	proxyPort   = 6380
)

// passwordPlaceholder in the route table is replaced by the password at container start.
const passwordPlaceholder = "@REDIS_PASSWORD@"

// proxyScript renders the route table with the password from the environment (never from
// the API) and starts camellia-redis-proxy.
//
// Image contract (issue 6 builds the image): sh and awk present, the proxy jars in
// /opt/camellia/lib, main class io.benchrun.proxy.Main (a @SpringBootApplication
// @EnableCamelliaRedisProxyServer), OpenJDK 17 on PATH.
const proxyScript = `set -e
umask 077
mkdir -p /tmp/camellia
awk '{gsub(/` + passwordPlaceholder + `/, ENVIRON["REDIS_PASSWORD"])}1' /etc/camellia/resource-table.json > /tmp/camellia/resource-table.json
cp /etc/camellia/application.yml /tmp/camellia/application.yml
exec java --add-opens java.base/java.lang=ALL-UNNAMED -cp '/opt/camellia/lib/*' io.benchrun.proxy.Main --spring.config.location=file:/tmp/camellia/application.yml
`

// proxyRoutes is camellia's route table: writes to the master Service, reads as the read
// policy says (the replica Service spreads connections over the replicas).
func (r *redis) proxyRoutes() string {
	auth := ""
	if r.spec.PasswordSecretRef != nil {
		auth = passwordPlaceholder
	}
	url := func(addr string) string { return fmt.Sprintf("redis://%s@%s", auth, addr) }
	var master, replica string
	for _, ep := range r.Endpoints() {
		switch ep.Role {
		case "master":
			master = ep.Address
		case "replica":
			replica = ep.Address
		}
	}
	policy := v1alpha1.ReadReplicas
	if r.spec.Proxy != nil && r.spec.Proxy.ReadPolicy != "" {
		policy = r.spec.Proxy.ReadPolicy
	}
	var read any = url(replica)
	switch policy {
	case v1alpha1.ReadMaster:
		read = url(master)
	case v1alpha1.ReadReplicasAndMaster:
		read = map[string]any{"type": "random", "resources": []string{url(master), url(replica)}}
	}
	b, _ := json.Marshal(map[string]any{"type": "simple", "operation": map[string]any{
		"type": "rw_separate", "read": read, "write": url(master)}})
	return string(b)
}

// proxyApplication is camellia's Spring Boot configuration; the proxy password (clients
// authenticate with the Redis password) comes from the environment.
func (r *redis) proxyApplication() string {
	pass := ""
	if r.spec.PasswordSecretRef != nil {
		pass = "\n  password: ${REDIS_PASSWORD}"
	}
	return fmt.Sprintf(`server:
  port: 6381
spring:
  application:
    name: benchrun-proxy
camellia-redis-proxy:
  port: %d%s
  transpond:
    type: local
    local:
      type: complex
      json-file: /tmp/camellia/resource-table.json
`, proxyPort, pass)
}

// proxyObjects are the proxy ConfigMap, Deployment and Service.
func (r *redis) proxyObjects() []client.Object {
	o := r.o
	spec := r.spec.Proxy
	if spec == nil {
		spec = &v1alpha1.RedisProxySpec{}
	}
	image := spec.Image
	if image == "" {
		image = o.Images.Proxy
	}
	replicas := spec.Replicas
	if replicas < 1 {
		replicas = 1
	}
	cm := &corev1.ConfigMap{ObjectMeta: o.meta(proxySuffix+"-config", "proxy-config"), Data: map[string]string{
		"application.yml": r.proxyApplication(), "resource-table.json": r.proxyRoutes()}}
	labels := o.withLabels("proxy")
	pod := corev1.PodSpec{SecurityContext: PodSecurityContext(), EnableServiceLinks: ptr.To(false), AutomountServiceAccountToken: ptr.To(false)}
	res := placementPod(&spec.Placement, &pod)
	var env []corev1.EnvVar
	if ref := r.spec.PasswordSecretRef; ref != nil {
		env = append(env, secretEnv(PasswordEnv, ref))
	}
	pod.Containers = []corev1.Container{{
		Name: "proxy", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"sh", "-c", proxyScript},
		Env:             env,
		Ports:           []corev1.ContainerPort{{Name: "redis", ContainerPort: proxyPort}},
		Resources:       res,
		SecurityContext: ContainerSecurityContext(),
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(proxyPort)}},
			PeriodSeconds: 2, FailureThreshold: 3},
		// camellia started before the master answers fails its upstream preheat: Spring stops
		// but the JVM lives on without listening. Restart it (the master is up by then).
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(proxyPort)}},
			InitialDelaySeconds: 20, PeriodSeconds: 5, FailureThreshold: 3},
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/camellia"}, {Name: "tmp", MountPath: "/tmp"}},
	}}
	pod.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	return []client.Object{cm, deployment(o.meta(proxySuffix, "proxy"), replicas, labels, pod), r.service(proxySuffix, "proxy", proxyPort)}
}

// deployment wraps a pod spec.
func deployment(meta metav1.ObjectMeta, replicas int32, labels map[string]string, pod corev1.PodSpec) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: labels[LabelRun], LabelGeneration: labels[LabelGeneration], LabelComponent: labels[LabelComponent]}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
	}}
}
