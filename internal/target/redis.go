package target

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/redisrole"
)

// Redis ports and the sentinel master group name.
const (
	redisPort    = 6379
	sentinelPort = 26379
	masterGroup  = "mymaster"
)

// redis deploys Redis or Valkey: builtin StatefulSets, or OT redis-operator resources
// (redis_operator.go); mode proxy adds a read/write-splitting proxy (proxy.go).
type redis struct {
	spec      *v1alpha1.RedisTarget
	o         Options
	name      string // base name suffix: "redis" (a HeTu back end uses the same)
	mode      v1alpha1.RedisMode
	engine    v1alpha1.RedisEngine
	image     string
	replicas  int32
	sentinels int32
	operator  bool
}

// newRedis resolves defaults and the provider.
func newRedis(spec *v1alpha1.RedisTarget, o Options, name string) (*redis, error) {
	r := &redis{spec: spec, o: o, name: name, mode: spec.Mode, engine: spec.Engine, image: spec.Image}
	if r.mode == "" {
		r.mode = v1alpha1.RedisSingle
	}
	if r.engine == "" {
		r.engine = v1alpha1.EngineRedis
	}
	if r.image == "" {
		r.image = o.Images.Redis
		if r.engine == v1alpha1.EngineValkey {
			r.image = o.Images.Valkey
		}
		if spec.Version != "" {
			r.image = WithTag(r.image, spec.Version)
		}
	}
	if r.mode != v1alpha1.RedisSingle {
		r.replicas = ptr.Deref(spec.Replicas, 2)
	}
	if r.mode == v1alpha1.RedisHA {
		r.sentinels = ptr.Deref(spec.Sentinels, 3)
	}
	switch spec.Provider {
	case v1alpha1.ProviderRedisOperator:
		if !o.OperatorInstalled {
			return nil, fmt.Errorf("provider redis-operator: the OT-CONTAINER-KIT redis-operator CRDs (redis.redis.opstreelabs.in) are not installed")
		}
		r.operator = true
	case v1alpha1.ProviderAuto, "":
		r.operator = o.OperatorInstalled
	}
	return r, nil
}

// Kind implements Target.
func (r *redis) Kind() string { return redisKindLabel(r.spec) }

// Provider implements Target.
func (r *redis) Provider() string {
	if r.operator {
		return string(v1alpha1.ProviderRedisOperator)
	}
	return string(v1alpha1.ProviderBuiltin)
}

// svc is the in-cluster address of a Service of this run.
func (r *redis) svc(suffix string, port int) string {
	return fmt.Sprintf("%s.%s.svc:%d", naming.Name(r.o.Prefix, suffix), r.o.Namespace, port)
}

// Service names: the write endpoint, the read endpoint, the sentinels.
func (r *redis) masterSvc() string   { return r.name + "-master" }
func (r *redis) replicaSvc() string  { return r.name + "-replica" }
func (r *redis) sentinelSvc() string { return r.name + "-sentinel" }

// Endpoints implements Target.
func (r *redis) Endpoints() []v1alpha1.Endpoint {
	master, replica, sentinel := r.svc(r.masterSvc(), redisPort), r.svc(r.replicaSvc(), redisPort), r.svc(r.sentinelSvc(), sentinelPort)
	if r.operator {
		master, replica = r.svc(r.name+"-master", redisPort), r.svc(r.name+"-replica", redisPort)
		if r.mode == v1alpha1.RedisSingle {
			master = r.svc(r.name, redisPort)
		}
	}
	switch r.mode {
	case v1alpha1.RedisHA:
		return []v1alpha1.Endpoint{{Role: RoleMaster, Address: master}, {Role: RoleReplica, Address: replica}, {Role: RoleSentinel, Address: sentinel}}
	case v1alpha1.RedisProxy:
		return []v1alpha1.Endpoint{{Role: RoleProxy, Address: r.svc(proxySuffix, proxyPort)}, {Role: RoleMaster, Address: master}, {Role: RoleReplica, Address: replica}}
	}
	return []v1alpha1.Endpoint{{Role: RoleRedis, Address: master}}
}

// Objects implements Target.
func (r *redis) Objects() ([]client.Object, error) {
	var objs []client.Object
	if r.operator {
		objs = r.operatorObjects()
	} else {
		objs = r.builtinObjects()
	}
	if r.mode == v1alpha1.RedisProxy {
		objs = append(objs, r.proxyObjects()...)
	}
	return objs, nil
}

// Ready implements Target.
func (r *redis) Ready(ctx context.Context, c client.Reader) (bool, string, error) {
	checks := r.serverChecks()
	if r.mode == v1alpha1.RedisProxy {
		checks = append(checks, func(ctx context.Context, c client.Reader) (bool, string, error) {
			return deploymentReady(ctx, c, r.o.Namespace, naming.Name(r.o.Prefix, proxySuffix))
		})
	}
	return allReady(ctx, c, checks...)
}

// Deferred implements Staged: the proxy Deployment starts once its upstreams serve.
func (r *redis) Deferred(obj client.Object) bool {
	_, isDeployment := obj.(*appsv1.Deployment)
	return r.mode == v1alpha1.RedisProxy && isDeployment && obj.GetLabels()[naming.LabelComponent] == "proxy"
}

// BaseReady implements Staged: the servers (and sentinels) serve.
func (r *redis) BaseReady(ctx context.Context, c client.Reader) (bool, string, error) {
	return allReady(ctx, c, r.serverChecks()...)
}

// serverChecks are the readiness checks of the Redis servers and sentinels.
func (r *redis) serverChecks() []readyCheck {
	var checks []readyCheck
	if r.operator {
		checks = r.operatorReadyChecks()
	} else {
		checks = append(checks, r.stsCheck(r.masterSvc()))
		if r.replicas > 0 {
			checks = append(checks, r.stsCheck(r.replicaSvc()))
		}
		if r.sentinels > 0 {
			checks = append(checks, r.stsCheck(r.sentinelSvc()))
		}
	}
	return checks
}

// stsCheck checks the StatefulSet named prefix-suffix.
func (r *redis) stsCheck(suffix string) readyCheck {
	return func(ctx context.Context, c client.Reader) (bool, string, error) {
		return statefulSetReady(ctx, c, r.o.Namespace, naming.Name(r.o.Prefix, suffix))
	}
}

// Workloads implements Target: the servers' and sentinels' StatefulSets (with the
// redis-operator: its resources and the StatefulSets it creates for them) and the proxy.
func (r *redis) Workloads() []Workload {
	var ws []Workload
	sts := func(suffix string) {
		ws = append(ws, Workload{Kind: "StatefulSet", Name: naming.Name(r.o.Prefix, suffix)})
	}
	if r.operator {
		kind := "Redis"
		if r.mode != v1alpha1.RedisSingle {
			kind = "RedisReplication"
		}
		ws = append(ws, Workload{Kind: kind, Name: naming.Name(r.o.Prefix, r.name)})
		sts(r.name)
		if r.sentinels > 0 {
			ws = append(ws, Workload{Kind: "RedisSentinel", Name: naming.Name(r.o.Prefix, r.name)})
			sts(r.name + "-sentinel")
		}
	} else {
		sts(r.masterSvc())
		if r.replicas > 0 {
			sts(r.replicaSvc())
		}
		if r.sentinels > 0 {
			sts(r.sentinelSvc())
		}
	}
	if r.mode == v1alpha1.RedisProxy {
		ws = append(ws, Workload{Kind: "Deployment", Name: naming.Name(r.o.Prefix, proxySuffix)})
	}
	return ws
}

// serverConfig is the redis.conf shared by every server: benchmark-friendly defaults (no
// persistence, writable dir for non-root replicas) then the user's directives, sorted.
func (r *redis) serverConfig() string {
	var b strings.Builder
	// repl-diskless-sync-delay 0: replicas of a fresh, empty server sync at once instead of
	// after the default 5 s batching wait. spec.config comes last and overrides any default.
	b.WriteString("port 6379\nbind * -::*\nprotected-mode no\ndir /tmp\nsave \"\"\nappendonly no\nrepl-diskless-sync-delay 0\n")
	for _, k := range slices.Sorted(maps.Keys(r.spec.Config)) {
		fmt.Fprintf(&b, "%s %s\n", k, r.spec.Config[k])
	}
	return b.String()
}

// builtinObjects are the ConfigMap, StatefulSets and Services of the builtin provider.
func (r *redis) builtinObjects() []client.Object {
	o := r.o
	headless := r.name + "-hl"
	cm := &corev1.ConfigMap{ObjectMeta: o.meta(r.name+"-config", "redis-config"),
		Data: map[string]string{"redis.conf": r.serverConfig()}}
	hl := &corev1.Service{ObjectMeta: o.meta(headless, "redis-headless"), Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
		Selector: map[string]string{naming.LabelRun: o.Labels[naming.LabelRun], naming.LabelGeneration: o.Labels[naming.LabelGeneration], redisLabel: r.name},
		Ports:    []corev1.ServicePort{{Name: "redis", Port: redisPort}},
	}}
	// Sentinels monitor the master pod by its stable name. Replicas follow the role-following
	// master Service instead: that name resolves as soon as the Service exists, whereas a
	// per-pod name looked up before the pod is published is cached as a miss by CoreDNS
	// (30 s), which held replication, and so the target, back by that much.
	masterHost := fmt.Sprintf("%s-0.%s.%s.svc", naming.Name(o.Prefix, r.masterSvc()), naming.Name(o.Prefix, headless), o.Namespace)
	masterService := fmt.Sprintf("%s.%s.svc", naming.Name(o.Prefix, r.masterSvc()), o.Namespace)
	// Objects are created in this order: the redis-role ServiceAccount and RoleBinding come
	// before the StatefulSets whose pods run as that account, or the StatefulSet controller
	// fails its first pod creations (a FailedCreate Warning on every healthy run).
	objs := []client.Object{cm, hl}
	if r.replicas > 0 {
		objs = append(objs, r.roleAccess()...)
	}
	objs = append(objs, r.server(r.masterSvc(), "redis-master", 1, ""),
		r.roleService(r.masterSvc(), "redis-master", "master"))
	if r.replicas > 0 {
		objs = append(objs, r.server(r.replicaSvc(), "redis-replica", r.replicas, masterService),
			r.roleService(r.replicaSvc(), "redis-replica", "replica"))
	}
	if r.sentinels > 0 {
		objs = append(objs, r.sentinel(masterHost, masterService), r.service(r.sentinelSvc(), "sentinel", sentinelPort))
	}
	return objs
}

// service is a ClusterIP Service selecting the pods of one component.
func (r *redis) service(suffix, component string, port int32) *corev1.Service {
	o := r.o
	return &corev1.Service{ObjectMeta: o.meta(suffix, component), Spec: corev1.ServiceSpec{
		Selector: map[string]string{naming.LabelRun: o.Labels[naming.LabelRun], naming.LabelGeneration: o.Labels[naming.LabelGeneration], naming.LabelComponent: component},
		Ports:    []corev1.ServicePort{{Name: "redis", Port: port, TargetPort: intstr.FromInt32(port)}},
	}}
}

// roleService selects the Redis servers by their current role (kept by the redis-role
// sidecar), so the write and read Services follow a failover; a single server is selected
// by component.
func (r *redis) roleService(suffix, component, role string) *corev1.Service {
	svc := r.service(suffix, component, redisPort)
	if r.replicas > 0 {
		delete(svc.Spec.Selector, naming.LabelComponent)
		svc.Spec.Selector[redisLabel] = r.name
		svc.Spec.Selector[redisrole.Label] = role
	}
	return svc
}

// redisLabel marks the Redis server pods (master and replicas) of a target.
const redisLabel = "bench.benchrun.io/redis"

// roleAccess binds the redis-role sidecars' ServiceAccount (one per run generation,
// <prefix>-redis-role) to the installed ClusterRole (o.RedisRoleClusterRole: pods patch) in
// the run's namespace.
//
// RBAC alone cannot narrow this: a per-run Role naming the run's pods (resourceNames) would
// need the operator itself to hold pods patch everywhere (the API server's escalation check),
// and a pod patch can swap a container image. So the operator holds only bind on that one
// ClusterRole, and the redis-role ValidatingAdmissionPolicy (config/admission/redis_role.yaml,
// the chart's redis-role-policy.yaml) narrows what the binding allows: an account
// <prefix>-redis-role may change only the role label (master or replica) of the very pod its
// pod-bound token belongs to, and only when that pod belongs to run generation <prefix>;
// nothing else of that pod, no other pod. Only the redis-role sidecar mounts the token
// (roleToken), and it runs as its own UID and GID (roleSidecarUID), so the Redis container,
// whose image the user picks, cannot reach it even when the pod shares its process namespace
// (pause faults).
func (r *redis) roleAccess() []client.Object {
	o := r.o
	name := naming.Name(o.Prefix, r.name+"-role")
	clusterRole := o.RedisRoleClusterRole
	if clusterRole == "" {
		clusterRole = DefaultRedisRoleClusterRole
	}
	meta := o.meta(r.name+"-role", "redis-role")
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta, AutomountServiceAccountToken: ptr.To(false)},
		&rbacv1.RoleBinding{ObjectMeta: meta,
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: o.Namespace}}},
	}
}

// roleSidecar runs `benchrun-runner redis-role` beside a Redis server.
func (r *redis) roleSidecar() corev1.Container {
	env := []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
	}
	if ref := r.spec.PasswordSecretRef; ref != nil {
		env = append(env, secretEnv(PasswordEnv, ref))
	}
	if r.sentinels > 0 {
		// the sentinels' newest configuration decides who keeps the master label
		// (redisrole.Decide); they name the servers by the announced pod host names
		o := r.o
		env = append(env,
			corev1.EnvVar{Name: "REDIS_SENTINEL", Value: fmt.Sprintf("%s.%s.svc:%d", naming.Name(o.Prefix, r.sentinelSvc()), o.Namespace, sentinelPort)},
			corev1.EnvVar{Name: "REDIS_SENTINEL_ASKS", Value: fmt.Sprint(min(r.sentinels, 5))},
			corev1.EnvVar{Name: "REDIS_MASTER_GROUP", Value: masterGroup},
			corev1.EnvVar{Name: "REDIS_SELF", Value: fmt.Sprintf("$(POD_NAME).%s.%s.svc", naming.Name(o.Prefix, r.name+"-hl"), o.Namespace)})
	}
	return corev1.Container{
		Name: "redis-role", Image: r.o.Images.Agent, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"benchrun-runner", "redis-role"},
		Env:             env,
		SecurityContext: roleSidecarSecurityContext(),
		Resources:       helperResources(),
		// the only container with the ServiceAccount token (the pod does not automount it)
		VolumeMounts: []corev1.VolumeMount{{Name: roleTokenVolume, MountPath: serviceAccountDir, ReadOnly: true}},
	}
}

// roleTokenVolume holds the redis-role ServiceAccount's token, mounted only in the sidecar.
const (
	roleTokenVolume   = "redis-role-token"
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// roleSidecarUID is the UID and GID of the redis-role sidecar: no other container of a Redis
// pod runs as it (the servers run as naming.PodSecurityContext's 65532, and so does a pause
// fault's ephemeral container, which takes the server's UID).
const roleSidecarUID int64 = 65533

// roleSidecarSecurityContext is the restricted context with the sidecar's own UID and GID.
// With another UID than the sidecar's, a process of the Redis container (sharing the pod's
// process namespace during a pause fault) fails the kernel's ptrace access check on the
// sidecar's processes, so /proc/<pid>/root, /proc/<pid>/cwd, /proc/<pid>/fd and /proc/<pid>/mem
// of the sidecar, the only ways into its mount namespace and so to its token, are refused
// (EACCES); it cannot signal the sidecar either.
func roleSidecarSecurityContext() *corev1.SecurityContext {
	sc := naming.ContainerSecurityContext()
	sc.RunAsUser, sc.RunAsGroup = ptr.To(roleSidecarUID), ptr.To(roleSidecarUID)
	return sc
}

// roleToken is the projected volume the kubelet would automount (token, CA, namespace), so
// that only the redis-role sidecar, not the Redis server container (whose image the user
// chooses), can use the ServiceAccount's rights.
//
// File ownership, by the kubelet's rules for projected service-account tokens (KEP
// "svcacct-token-volumes", file permission handling): when every container of the pod runs as
// one UID the token is chowned to it with mode 0600; else, with a pod fsGroup, it is 0640
// root:fsGroup (and every container of the pod gets fsGroup as a supplementary group); else
// it is root-owned with defaultMode. The sidecar's UID differs from the server's, so neither
// of the first two can make the token the sidecar's alone: the pods that mount it set no
// fsGroup (which would hand the token's group to the Redis container too), and the token is
// root-owned 0444 (a non-root sidecar could not read 0400 root). It is readable only inside
// the sidecar's mount namespace, which processes of another UID cannot enter
// (roleSidecarSecurityContext); test/e2e/sidecar_token_test.go checks that from the Redis
// container of a pod sharing its process namespace.
func roleToken() corev1.Volume {
	return corev1.Volume{Name: roleTokenVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o444),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}

// serverScript starts redis-server from the shared config plus the password (from the
// environment, never written to the API; any bytes, quoted by appendPasswordConf) and, for a
// replica, replicaof.
func serverScript(replicaOf, announce string) string {
	s := `set -e
umask 077
cp /etc/benchrun/redis.conf /tmp/redis.conf
` + appendPasswordConf("/tmp/redis.conf", "requirepass", "masterauth")
	if announce != "" {
		s += fmt.Sprintf("printf 'replica-announce-ip %%s\\n' \"$POD_NAME.%s\" >> /tmp/redis.conf\n", announce)
	}
	if replicaOf != "" {
		s += fmt.Sprintf("printf 'replicaof %s %d\\n' >> /tmp/redis.conf\n", replicaOf, redisPort)
	}
	return s + "exec redis-server /tmp/redis.conf\n"
}

// podEnv is POD_NAME plus the password and REDISCLI_AUTH (for probes) from the Secret.
func (r *redis) podEnv() []corev1.EnvVar {
	env := []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	if ref := r.spec.PasswordSecretRef; ref != nil {
		env = append(env, secretEnv(PasswordEnv, ref), secretEnv("REDISCLI_AUTH", ref))
	}
	return env
}

// server is the StatefulSet of the master (replicaOf empty) or of the replicas.
func (r *redis) server(suffix, component string, replicas int32, replicaOf string) *appsv1.StatefulSet {
	o := r.o
	labels := o.withLabels(component)
	labels[redisLabel] = r.name
	if r.replicas > 0 {
		labels[redisrole.Label] = "master" // the sidecar corrects it after a failover
		if replicaOf != "" {
			labels[redisrole.Label] = "replica"
		}
	}
	announce := ""
	if r.mode != v1alpha1.RedisSingle {
		announce = fmt.Sprintf("%s.%s.svc", naming.Name(o.Prefix, r.name+"-hl"), o.Namespace)
	}
	pod := corev1.PodSpec{SecurityContext: naming.PodSecurityContext(), EnableServiceLinks: ptr.To(false), AutomountServiceAccountToken: ptr.To(false)}
	res := placementPod(&r.spec.Placement, &pod)
	pod.Containers = []corev1.Container{{
		Name: "redis", Image: r.image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"sh", "-c", serverScript(replicaOf, announce)},
		Env:             r.podEnv(),
		Ports:           []corev1.ContainerPort{{Name: "redis", ContainerPort: redisPort}},
		Resources:       res,
		SecurityContext: naming.ContainerSecurityContext(),
		// Ready = serving its role: a master answers, a replica has its link to the master up
		// (a replica still syncing would serve empty reads to the benchmark).
		ReadinessProbe: execProbe("redis-cli -p 6379 info replication | grep -q -e '^role:master' -e '^master_link_status:up'"),
		VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/benchrun"}, {Name: "data", MountPath: "/tmp"}},
	}}
	pod.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: naming.Name(o.Prefix, r.name+"-config")}}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if r.replicas > 0 {
		// the pod runs as the redis-role ServiceAccount, but its token is mounted only in the
		// sidecar (AutomountServiceAccountToken stays false)
		pod.ServiceAccountName = naming.Name(o.Prefix, r.name+"-role")
		pod.SecurityContext.FSGroup = nil // no group shared with the token (roleToken)
		pod.Containers = append(pod.Containers, r.roleSidecar())
		pod.Volumes = append(pod.Volumes, roleToken())
	}
	return statefulSet(o.meta(suffix, component), naming.Name(o.Prefix, r.name+"-hl"), replicas, labels, pod)
}

// sentinel is the StatefulSet of the sentinels watching the master. A sentinel starts once
// the master answers through its Service (a name that resolves as soon as the Service
// exists): by then the master pod's own DNS name is published. Started before, a sentinel
// looked that name up too early; CoreDNS cached the miss for 30 s, and the sentinel, its
// event loop blocked by the failing lookups (TILT mode: no failover for another 30 s),
// monitored nothing for the first minute of a run.
func (r *redis) sentinel(masterHost, masterService string) *appsv1.StatefulSet {
	o := r.o
	labels := o.withLabels("sentinel")
	script := fmt.Sprintf(`set -e
umask 077
cat > /tmp/sentinel.conf <<EOF
port %d
dir /tmp
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel monitor %s %s %d %d
sentinel down-after-milliseconds %s 5000
sentinel failover-timeout %s 10000
EOF
%suntil redis-cli -h %s -p %d ping 2>&1 | grep -q -e PONG -e NOAUTH; do sleep 0.5; done
exec redis-sentinel /tmp/sentinel.conf
`, sentinelPort, masterGroup, masterHost, redisPort, r.sentinels/2+1, masterGroup, masterGroup,
		appendPasswordConf("/tmp/sentinel.conf", "sentinel auth-pass "+masterGroup), masterService, redisPort)
	pod := corev1.PodSpec{SecurityContext: naming.PodSecurityContext(), EnableServiceLinks: ptr.To(false), AutomountServiceAccountToken: ptr.To(false)}
	placementPod(&r.spec.Placement, &pod)
	pod.Containers = []corev1.Container{{
		Name: "sentinel", Image: r.image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"sh", "-c", script},
		Env:             r.podEnv(),
		Ports:           []corev1.ContainerPort{{Name: "sentinel", ContainerPort: sentinelPort}},
		Resources:       helperResources(),
		SecurityContext: naming.ContainerSecurityContext(),
		ReadinessProbe:  execProbe(fmt.Sprintf("redis-cli -p %d ping | grep -q PONG", sentinelPort)),
		VolumeMounts:    []corev1.VolumeMount{{Name: "data", MountPath: "/tmp"}},
	}}
	pod.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	return statefulSet(o.meta(r.sentinelSvc(), "sentinel"), naming.Name(o.Prefix, r.name+"-hl"), r.sentinels, labels, pod)
}

// statefulSet wraps a pod spec; pods start in parallel.
func statefulSet(meta metav1.ObjectMeta, serviceName string, replicas int32, labels map[string]string, pod corev1.PodSpec) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{
		Replicas:            ptr.To(replicas),
		ServiceName:         serviceName,
		PodManagementPolicy: appsv1.ParallelPodManagement,
		Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{naming.LabelRun: labels[naming.LabelRun], naming.LabelGeneration: labels[naming.LabelGeneration], naming.LabelComponent: labels[naming.LabelComponent]}},
		Template:            corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
	}}
}

// execProbe is a readiness probe running a shell command.
func execProbe(cmd string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", cmd}}},
		PeriodSeconds: 2, TimeoutSeconds: 2, FailureThreshold: 3}
}

// redisKindLabel is the kind label of a Redis target: engine/mode with their defaults (redis/single).
func redisKindLabel(spec *v1alpha1.RedisTarget) string {
	engine, mode := spec.Engine, spec.Mode
	if engine == "" {
		engine = v1alpha1.EngineRedis
	}
	if mode == "" {
		mode = v1alpha1.RedisSingle
	}
	return string(engine) + "/" + string(mode)
}

// wireRedis gives the scripts the proxy, or the master with its replicas, and the password.
func wireRedis(spec *v1alpha1.TargetSpec, endpoints []v1alpha1.Endpoint) (Addresses, []SecretEnv) {
	w := newWiring(endpoints)
	w.out.Redis = w.redis()
	w.secret(EnvRedisPassword, spec.Redis.PasswordSecretRef)
	return w.done()
}
