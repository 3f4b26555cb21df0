package target

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// The proxy's object suffix and client port.
const (
	proxySuffix = "proxy"
	proxyPort   = 6380
)

// passwordPlaceholder in the route table is replaced by the password at container start.
const passwordPlaceholder = "@REDIS_PASSWORD@"

// proxyPasswordEnv is the password as the proxy script hands it to Spring (see springAwk).
const proxyPasswordEnv = "BENCHRUN_PROXY_PASSWORD"

// proxyRejectPrefix starts the termination message of a proxy container that refused its
// password; redis.Failure reports the rest.
const proxyRejectPrefix = "benchrun: "

// routeAwk copies the route table, replacing every passwordPlaceholder (-v ph) with the
// password of $REDIS_PASSWORD as camellia reads a redis:// URL inside a JSON string.
//
// camellia 1.1.1 (RedisResourceUtil.parseResourceByUrl) does not percent-decode: the user
// info is everything before the last @ (so @ / # % ? space and UTF-8 may appear raw), split
// at its first colon into user name and password. A password with a colon therefore goes
// with the user name "default" (camellia then sends AUTH default <password>, which needs
// Redis 6 or later). In JSON, backslash and double quote are escaped and control characters
// written as \u00XX. Index/substr, not gsub: the replacement is used verbatim.
const routeAwk = `BEGIN {
  p = ENVIRON["` + PasswordEnv + `"]
  if (index(p, ":")) p = "default:" p
  for (i = 1; i < 32; i++) ctl[sprintf("%c", i)] = sprintf("\\u%04x", i)
  r = ""
  for (i = 1; i <= length(p); i++) {
    c = substr(p, i, 1)
    if (c == "\\" || c == "\"") r = r "\\" c
    else if (c in ctl) r = r ctl[c]
    else r = r c
  }
}
{
  out = ""
  line = $0
  while ((i = index(line, ph)) > 0) {
    out = out substr(line, 1, i - 1) r
    line = substr(line, i + length(ph))
  }
  print out line
}`

// springAwk prints the password of $REDIS_PASSWORD for application.yml's
// ${BENCHRUN_PROXY_PASSWORD}. Spring resolves ${...} placeholders in that value twice (once
// in the Environment through PropertySourcesPlaceholderConfigurer, once in the Binder), so a
// password containing ${x} or ${x:y} would be expanded: every $ becomes
// ${benchrun.dollar}{benchrun.dollar}, which the first pass turns into ${benchrun.dollar}
// and the second into $ (benchrun.dollar is "$" in application.yml).
const springAwk = `BEGIN {
  p = ENVIRON["` + PasswordEnv + `"]
  o = ""
  for (i = 1; i <= length(p); i++) {
    c = substr(p, i, 1)
    o = o (c == "$" ? "${benchrun.dollar}{benchrun.dollar}" : c)
  }
  printf "%s", o
}`

// proxyScript renders the route table with the password from the environment (never from
// the API) and starts camellia-redis-proxy.
//
// camellia keeps passwords as Java strings and reads its files as UTF-8, so a password that
// is not valid UTF-8 cannot reach Redis through it: the script refuses it with a termination
// message (never the password) that the operator reports. The JVM runs in the C.UTF-8
// locale so that it decodes the environment as UTF-8 (Java 17 otherwise decodes it as ASCII
// and a non-ASCII password would not match).
//
// Image contract (hack/images/build.sh proxy): sh, awk and iconv present, the proxy jars in
// /opt/camellia/lib, main class io.benchrun.proxy.Main (a @SpringBootApplication
// @EnableCamelliaRedisProxyServer), OpenJDK 17 on PATH, the C.UTF-8 locale.
const proxyScript = `set -e
umask 077
reject() {
  echo "` + proxyRejectPrefix + `$*" >&2
  { echo "` + proxyRejectPrefix + `$*" > /dev/termination-log; } 2>/dev/null || true
  exit 1
}
if command -v iconv >/dev/null && ! printf '%s' "$` + PasswordEnv + `" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; then
  reject "the Redis password is not valid UTF-8; camellia-redis-proxy holds passwords as Java strings and cannot use it (use a UTF-8 password with mode proxy)"
fi
mkdir -p /tmp/camellia
LC_ALL=C awk -v ph='` + passwordPlaceholder + `' '` + routeAwk + `' /etc/camellia/resource-table.json > /tmp/camellia/resource-table.json
cp /etc/camellia/application.yml /tmp/camellia/application.yml
` + proxyPasswordEnv + `=$(LC_ALL=C awk '` + springAwk + `'; printf x)
export ` + proxyPasswordEnv + `="${` + proxyPasswordEnv + `%x}"
export LC_ALL=C.UTF-8
exec java -Djava.security.properties=/etc/camellia/` + proxyJavaSecurityKey + ` --add-opens java.base/java.lang=ALL-UNNAMED -cp '/opt/camellia/lib/*' io.benchrun.proxy.Main --spring.config.location=file:/tmp/camellia/application.yml
`

// proxyJavaSecurityKey is the proxy ConfigMap's java.security overrides (proxyJavaSecurity),
// mounted at /etc/camellia and appended to the JVM's security properties.
const proxyJavaSecurityKey = "java.security"

// proxyJavaSecurity shortens the JVM's DNS cache. camellia reaches its upstreams by the
// pods' stable names (proxyUpstreams), whose addresses change when a pod is recreated (a
// killed master comes back with a new IP under the same name). The JVM keeps a name's
// address for 30 s (networkaddress.cache.ttl, unset in Java 17: 30 s without a security
// manager) and a failed lookup for 10 s (negative.ttl, java.security), so camellia kept
// dialling the dead pod's address for up to 30 s after the new pod was up (measured: 31-32 s;
// with these overrides 0.03-5.2 s, the rest being camellia's own ban of an upstream for
// failBanMillis, 5 s, after failCountThreshold, 5, failed connects; TestProxyRealMasterMoves).
// Names are looked up only when camellia opens an upstream connection, so a 1 s cache costs
// nothing.
const proxyJavaSecurity = "networkaddress.cache.ttl=1\nnetworkaddress.cache.negative.ttl=0\n"

// proxyRoutes is camellia's route table: writes to the master, reads as the read policy
// says. Several read servers go in a "random" read list: camellia picks one for every
// command, so reads spread over all of them (through one ClusterIP Service, camellia's few
// long-lived connections were pinned by kube-proxy to one replica).
func (r *redis) proxyRoutes() string {
	auth := ""
	if r.spec.PasswordSecretRef != nil {
		auth = passwordPlaceholder
	}
	url := func(addr string) string { return "redis://" + auth + "@" + addr }
	master, reads := r.proxyUpstreams()
	var read any = url(reads[0])
	if len(reads) > 1 {
		urls := make([]string, len(reads))
		for i, addr := range reads {
			urls[i] = url(addr)
		}
		read = map[string]any{"type": "random", "resources": urls}
	}
	b, _ := json.Marshal(map[string]any{"type": "simple", "operation": map[string]any{
		"type": "rw_separate", "read": read, "write": url(master)}})
	return string(b)
}

// proxyUpstreams are the write address and the read addresses of the read policy.
//
// Builtin replicas are addressed by their stable per-pod names under the headless governing
// Service (<pod>.<prefix>-redis-hl.<ns>.svc) and the master by its role-following master
// Service: a proxy target has no sentinels (the API allows them only in mode ha), so
// camellia's sentinel-aware URLs (redis-sentinel://, redis-sentinel-slaves://) have nothing
// to watch, and the master is always master-0. A killed master-0 comes back with a new
// address under its per-pod name, which CoreDNS answers from its cache (ttl 30: the old
// address, or the miss while no pod was published) for up to 30 s; the Service's address
// never changes and kube-proxy routes it to the new pod as soon as its redis-role sidecar
// labels it (TestFaultThroughProxy). With the redis-operator, which pod is the master is the
// operator's choice: writes and replica reads go through its role Services, and
// replicas-and-master reads through every pod's name (<name>-<i>.<name>-headless).
func (r *redis) proxyUpstreams() (write string, reads []string) {
	policy := v1alpha1.ReadReplicas
	if r.spec.Proxy != nil && r.spec.Proxy.ReadPolicy != "" {
		policy = r.spec.Proxy.ReadPolicy
	}
	o := r.o
	pod := func(sts, headless string, i int32) string {
		return fmt.Sprintf("%s-%d.%s.%s.svc:%d", naming.Name(o.Prefix, sts), i, naming.Name(o.Prefix, headless), o.Namespace, redisPort)
	}
	if r.operator {
		write = r.svc(r.name+"-master", redisPort)
		switch policy {
		case v1alpha1.ReadMaster:
			return write, []string{write}
		case v1alpha1.ReadReplicasAndMaster:
			for i := range 1 + r.replicas {
				reads = append(reads, pod(r.name, r.name+"-headless", i))
			}
			return write, reads
		}
		return write, []string{r.svc(r.name+"-replica", redisPort)}
	}
	write = r.svc(r.masterSvc(), redisPort)
	switch policy {
	case v1alpha1.ReadMaster:
		return write, []string{write}
	case v1alpha1.ReadReplicasAndMaster:
		reads = append(reads, write)
	}
	for i := range r.replicas {
		reads = append(reads, pod(r.replicaSvc(), r.name+"-hl", i))
	}
	if len(reads) == 0 {
		reads = []string{write}
	}
	return write, reads
}

// proxyApplication is camellia's Spring Boot configuration; the proxy password (clients
// authenticate with the Redis password) comes from the environment (see springAwk).
func (r *redis) proxyApplication() string {
	pass := ""
	if r.spec.PasswordSecretRef != nil {
		pass = "\n  password: ${" + proxyPasswordEnv + "}"
	}
	return fmt.Sprintf(`benchrun:
  dollar: "$"
server:
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

// Failer is implemented by targets that can tell, while not ready, that they never will be
// (for example a proxy that refused the password): the run then fails at once instead of
// after timeouts.targetReady.
type Failer interface {
	// Failure is a message (never a secret) when the target cannot become ready, else "".
	Failure(ctx context.Context, c client.Reader) (string, error)
}

// Failure implements Failer: a proxy pod that refused the password (proxyScript) will not
// start however long the run waits. Pods are read with c, which must not be the manager's
// cache (it holds runner pods only).
func (r *redis) Failure(ctx context.Context, c client.Reader) (string, error) {
	if r.mode != v1alpha1.RedisProxy {
		return "", nil
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(r.o.Namespace), client.MatchingLabels{
		naming.LabelRun: r.o.Labels[naming.LabelRun], naming.LabelGeneration: r.o.Labels[naming.LabelGeneration], naming.LabelComponent: "proxy"}); err != nil {
		return "", err
	}
	for _, pod := range pods.Items {
		for _, cs := range pod.Status.ContainerStatuses {
			for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
				if t != nil && strings.HasPrefix(t.Message, proxyRejectPrefix) {
					return fmt.Sprintf("proxy pod %s: %s", pod.Name, strings.TrimSpace(strings.TrimPrefix(t.Message, proxyRejectPrefix))), nil
				}
			}
		}
	}
	return "", nil
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
		"application.yml": r.proxyApplication(), "resource-table.json": r.proxyRoutes(),
		proxyJavaSecurityKey: proxyJavaSecurity}}
	labels := o.withLabels("proxy")
	pod := corev1.PodSpec{SecurityContext: naming.PodSecurityContext(), EnableServiceLinks: ptr.To(false), AutomountServiceAccountToken: ptr.To(false)}
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
		SecurityContext: naming.ContainerSecurityContext(),
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(proxyPort)}},
			PeriodSeconds: 2, FailureThreshold: 3},
		// camellia whose upstream preheat failed (an upstream restarted after wait-upstreams)
		// stops Spring but the JVM lives on without listening: restart it.
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(proxyPort)}},
			InitialDelaySeconds: 20, PeriodSeconds: 5, FailureThreshold: 3},
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/camellia"}, {Name: "tmp", MountPath: "/tmp"}},
	}}
	// camellia started before its upstreams answer fails its preheat and must be restarted
	// by the liveness probe (20-40 s lost): wait for every upstream first.
	write, reads := r.proxyUpstreams()
	pod.InitContainers = []corev1.Container{{
		Name: "wait-upstreams", Image: o.Images.Agent, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         append([]string{"benchrun-runner", "wait-redis"}, uniq(append([]string{write}, reads...))...),
		Env:             env,
		SecurityContext: naming.ContainerSecurityContext(),
		Resources:       helperResources(),
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
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{naming.LabelRun: labels[naming.LabelRun], naming.LabelGeneration: labels[naming.LabelGeneration], naming.LabelComponent: labels[naming.LabelComponent]}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
	}}
}

// uniq drops repeated strings, keeping the first of each.
func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
