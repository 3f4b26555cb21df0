package target

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// hetu deploys a HeTu server (ConfigMap, Deployment, Service) on a Redis back end that is
// either deployed with it (a redis target named "redis") or external.
//
// Image contract (issue 6 builds the image): `hetu` on PATH and the benchmark app at
// /srv/hetu-bench/app.py (examples/hetu-bench).
type hetu struct {
	spec    *v1alpha1.HeTuTarget
	o       Options
	backend *redis // nil for an external back end
	port    int32
}

// newHeTu resolves defaults.
func newHeTu(spec *v1alpha1.HeTuTarget, o Options) (*hetu, error) {
	h := &hetu{spec: spec, o: o, port: spec.Port}
	if h.port == 0 {
		h.port = 2466
	}
	for k, v := range spec.ExtraConfig {
		if strings.ContainsAny(k+string(v), "\n\r") || !isConfigKey(k) {
			return nil, fmt.Errorf("hetu extraConfig %q: keys are upper-case config names and values one line", k)
		}
	}
	if spec.Backend.Redis != nil {
		b, err := newRedis(spec.Backend.Redis, o, "redis")
		if err != nil {
			return nil, err
		}
		h.backend = b
	}
	return h, nil
}

// isConfigKey tells whether k looks like a HeTu config key (A-Z, 0-9, _).
func isConfigKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// Kind implements Target.
func (h *hetu) Kind() string { return hetuLabel }

// Provider implements Target.
func (h *hetu) Provider() string {
	if h.backend == nil {
		return "builtin+external"
	}
	return "builtin+" + h.backend.Provider()
}

// Endpoints implements Target: the HeTu server, then the back end's addresses.
func (h *hetu) Endpoints() []v1alpha1.Endpoint {
	eps := []v1alpha1.Endpoint{{Role: RoleHeTu, Address: fmt.Sprintf("%s.%s.svc:%d", naming.Name(h.o.Prefix, "hetu"), h.o.Namespace, h.port)}}
	if h.backend != nil {
		eps = append(eps, h.backend.Endpoints()...)
	} else {
		eps = append(eps, (&external{spec: h.spec.Backend.External}).Endpoints()...)
	}
	return eps
}

// backendEnv is the environment HeTu's config builds its BACKENDS URLs from: the scheme,
// the master address, the servant (read replica) addresses as JSON, and the credentials from
// Secrets. The URLs are composed inside HeTu (config.yml, !eval) with the credentials
// percent-encoded, so any password works; the kubelet's $(VAR) expansion would paste it raw.
func (h *hetu) backendEnv() []corev1.EnvVar {
	scheme := "redis"
	var password, username *v1alpha1.SecretKeyRef
	var masterAddr string
	var readAddrs []string
	if h.backend != nil {
		password = h.backend.spec.PasswordSecretRef
		for _, ep := range h.backend.Endpoints() {
			switch ep.Role {
			case "redis", "master":
				masterAddr = ep.Address
			case "replica":
				readAddrs = append(readAddrs, ep.Address)
			}
		}
	} else {
		ext := h.spec.Backend.External
		password, username = ext.PasswordSecretRef, ext.UsernameSecretRef
		masterAddr, readAddrs = ext.Addresses[0], ext.ReadAddresses
		if ext.TLS != nil && ext.TLS.Enabled {
			scheme = "rediss"
		}
	}
	servants, _ := json.Marshal(append([]string{}, readAddrs...))
	env := []corev1.EnvVar{
		{Name: "HETU_REDIS_SCHEME", Value: scheme},
		{Name: "HETU_REDIS_MASTER", Value: masterAddr},
		{Name: "HETU_REDIS_SERVANT_ADDRS", Value: string(servants)},
	}
	if username != nil {
		env = append(env, secretEnv("REDIS_USERNAME", username))
	}
	if password != nil {
		env = append(env, secretEnv(PasswordEnv, password))
	}
	return env
}

// hetuRedisURL is the Python expression (HeTu config !eval) of the back-end URL for the
// address expression addr: credentials from REDIS_USERNAME / REDIS_PASSWORD, percent-encoded.
func hetuRedisURL(addr string) string {
	return `(lambda e, q, a: e["HETU_REDIS_SCHEME"] + "://" + ((q(e.get("REDIS_USERNAME", ""), safe="") + ":" + q(e["REDIS_PASSWORD"], safe="") + "@") if "REDIS_PASSWORD" in e else "") + a + "/0")(__import__("os").environ, __import__("urllib.parse").parse.quote, ` + addr + `)`
}

// config is HeTu's config.yml: limits lifted for load testing, layers and back end from env.
func (h *hetu) config() string {
	var b strings.Builder
	appFile, namespace := "/srv/hetu-bench/app.py", "bench"
	if a := h.spec.App; a != nil {
		appFile, namespace = hetuAppDir+"/app.py", orDefault(a.Namespace, "bench")
	}
	b.WriteString("APP_FILE: " + appFile + "\nNAMESPACE: " + namespace + `
INSTANCES:
  - ${HETU_INSTANCE}
LISTEN: ${HETU_LISTEN}
WORKER_NUM: !eval [ "int('${HETU_WORKERS}')" ]
DEBUG: 0
ACCESS_LOG: false
PROXIES_COUNT: 0
STARTUP_TIMEOUT: 60
# Lifted for load testing: no message rate limit, no per-IP connection limit.
CLIENT_SEND_LIMITS: []
SERVER_SEND_LIMITS: []
MAX_ANONYMOUS_CONNECTION_BY_IP: 0
ENDPOINT_CALL_IDLE_TIMEOUT: 120
WEBSOCKET_MAX_SIZE: 524288
PACKET_LAYERS: !eval
  - |
    [{"type": "jsonb"}] + ([] if "${HETU_LAYERS}" == "msgpack" else [{"type": "zlib", "level": 1}]) + ([{"type": "crypto", "auth_key": __import__("os").environ.get("HETU_AUTH_KEY", "")}] if "${HETU_LAYERS}" == "msgpack+zlib+crypto" else [])
BACKENDS:
  main:
    type: Redis
    master: !eval
      - |
        ` + hetuRedisURL(`__import__("os").environ["HETU_REDIS_MASTER"]`) + `
    servants: !eval
      - |
        [` + hetuRedisURL("s") + ` for s in __import__("json").loads(__import__("os").environ["HETU_REDIS_SERVANT_ADDRS"])]
    master_weight: 1.0
    max_connections: 64
    pool_timeout: 5
`)
	for _, k := range slices.Sorted(maps.Keys(h.spec.ExtraConfig)) {
		fmt.Fprintf(&b, "%s: %s\n", k, h.spec.ExtraConfig[k])
	}
	return b.String()
}

// Objects implements Target.
func (h *hetu) Objects() ([]client.Object, error) {
	var objs []client.Object
	if h.backend != nil {
		b, err := h.backend.Objects()
		if err != nil {
			return nil, err
		}
		objs = append(objs, b...)
	}
	o := h.o
	cm := &corev1.ConfigMap{ObjectMeta: o.meta("hetu-config", "hetu-config"), Data: map[string]string{"config.yml": h.config()}}
	env := h.backendEnv()
	layers := string(h.spec.PacketLayers)
	if layers == "" {
		layers = string(v1alpha1.LayersMsgpackZlibCrypto)
	}
	instance := h.spec.Instance
	if instance == "" {
		instance = "bench"
	}
	workers := h.spec.Workers
	if workers < 1 {
		workers = 1
	}
	env = append(env,
		corev1.EnvVar{Name: "HETU_LISTEN", Value: fmt.Sprintf("0.0.0.0:%d", h.port)},
		corev1.EnvVar{Name: "HETU_WORKERS", Value: fmt.Sprint(workers)},
		corev1.EnvVar{Name: "HETU_INSTANCE", Value: instance},
		corev1.EnvVar{Name: "HETU_LAYERS", Value: layers},
	)
	if ref := h.spec.AuthKeySecretRef; ref != nil {
		env = append(env, secretEnv("HETU_AUTH_KEY", ref))
	}
	image := h.spec.Image
	if image == "" {
		image = o.Images.HeTu
	}
	replicas := h.spec.Replicas
	if replicas < 1 {
		replicas = 1
	}
	pod := corev1.PodSpec{SecurityContext: naming.PodSecurityContext(), EnableServiceLinks: ptr.To(false), AutomountServiceAccountToken: ptr.To(false)}
	res := placementPod(&h.spec.Placement, &pod)
	pod.Containers = []corev1.Container{{
		Name: "hetu", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"hetu", "start", "--config=/etc/hetu/config.yml"},
		Env:             env,
		Ports:           []corev1.ContainerPort{{Name: "ws", ContainerPort: h.port}},
		Resources:       res,
		SecurityContext: naming.ContainerSecurityContext(),
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(h.port)}},
			PeriodSeconds: 2, FailureThreshold: 3},
		// the root filesystem is read-only: HeTu writes its logs to the app's logs/ directory
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/hetu"}, {Name: "tmp", MountPath: "/tmp"},
			{Name: "logs", MountPath: "/srv/hetu-bench/logs"}},
	}}
	pod.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	h.mountApp(&pod)
	svc := (&redis{o: o}).service("hetu", "hetu", h.port)
	svc.Spec.Ports[0].Name = "ws"
	return append(objs, cm, deployment(o.meta("hetu", "hetu"), replicas, o.withLabels("hetu"), pod), svc), nil
}

// Ready implements Target: the back end first, then the HeTu Deployment.
func (h *hetu) Ready(ctx context.Context, c client.Reader) (bool, string, error) {
	if h.backend != nil {
		if ok, reason, err := h.backend.Ready(ctx, c); err != nil || !ok {
			return ok, reason, err
		}
	}
	return deploymentReady(ctx, c, h.o.Namespace, naming.Name(h.o.Prefix, "hetu"))
}

// Workloads implements Target: the back end's, then the HeTu Deployment.
func (h *hetu) Workloads() []Workload {
	var ws []Workload
	if h.backend != nil {
		ws = h.backend.Workloads()
	}
	return append(ws, Workload{Kind: "Deployment", Name: naming.Name(h.o.Prefix, "hetu")})
}

// hetuAppDir is where a user's app file (spec.app) is mounted: an emptyDir (HeTu writes its
// logs next to the app) with the ConfigMap key as app.py in it.
const hetuAppDir = "/srv/hetu-app"

// mountApp mounts the user's app file (spec.app) at hetuAppDir/app.py, its logs directory
// writable, when the run has one.
func (h *hetu) mountApp(pod *corev1.PodSpec) {
	a := h.spec.App
	if a == nil {
		return
	}
	c := &pod.Containers[0]
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].Name == "logs" {
			c.VolumeMounts[i].MountPath = hetuAppDir + "/logs"
		}
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "app-dir", MountPath: hetuAppDir},
		corev1.VolumeMount{Name: "app", MountPath: hetuAppDir + "/app.py", SubPath: "app.py", ReadOnly: true})
	pod.Volumes = append(pod.Volumes,
		corev1.Volume{Name: "app-dir", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "app", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: a.ConfigMapName},
			Items:                []corev1.KeyToPath{{Key: orDefault(a.Key, "app.py"), Path: "app.py"}}}}})
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// hetuLabel is the kind label of a HeTu target.
const hetuLabel = "hetu"

// wireHeTu gives the scripts the HeTu server, its auth key and its Redis back end.
func wireHeTu(spec *v1alpha1.TargetSpec, endpoints []v1alpha1.Endpoint) (Addresses, []SecretEnv) {
	w, t := newWiring(endpoints), spec.HeTu
	w.out.HeTu = &HeTuAddresses{Addrs: w.byRole[RoleHeTu], Instance: t.Instance, Layers: string(t.PacketLayers)}
	w.secret(EnvHeTuAuthKey, t.AuthKeySecretRef)
	if b := t.Backend.External; b != nil {
		w.externalRedis(b)
	} else if b := t.Backend.Redis; b != nil {
		w.out.Redis = w.redis()
		w.secret(EnvRedisPassword, b.PasswordSecretRef)
	}
	return w.done()
}
