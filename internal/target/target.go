// Package target builds the system under test of a BenchmarkRun: one file per kind (hetu,
// redis builtin, redis-operator, proxy, external, custom) behind the Target interface. It only builds
// objects and reads their state; the controller creates them with owner references.
package target

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// PasswordEnv is the environment variable holding the Redis password in target pods
// (always from a Secret, never a literal).
const PasswordEnv = "REDIS_PASSWORD"

// Images are the default images for the target kinds.
type Images struct {
	// Redis is the Redis server image.
	Redis string
	// Valkey is the Valkey server image (redis-server etc. symlinked to valkey binaries).
	Valkey string
	// HeTu is the HeTu bench app image.
	HeTu string
	// Proxy is the camellia-redis-proxy image.
	Proxy string
	// Agent is the image with benchrun-runner, whose `redis-role` sidecar keeps builtin
	// Redis pods' role labels current (the runner image).
	Agent string
}

// Options are what every target kind needs to build its objects.
type Options struct {
	// Namespace is the BenchmarkRun's namespace.
	Namespace string
	// Prefix starts every object name, e.g. "myrun-g2" (short enough for DNS labels).
	Prefix string
	// Labels go on every object and pod.
	Labels map[string]string
	// Images are the default images.
	Images Images
	// OperatorInstalled tells whether the OT-CONTAINER-KIT redis-operator CRDs are installed.
	OperatorInstalled bool
	// RedisRoleClusterRole is the installed ClusterRole (pods patch) the redis-role
	// sidecars are bound to; DefaultRedisRoleClusterRole when empty.
	RedisRoleClusterRole string
}

// DefaultRedisRoleClusterRole is the name the chart (release "benchrun") and config/ give the
// redis-role sidecars' ClusterRole (config/rbac/redis_role.yaml).
const DefaultRedisRoleClusterRole = "benchrun-redis-role"

// Target is one system under test.
type Target interface {
	// Kind summarises the target, e.g. redis/ha.
	Kind() string
	// Provider is what deploys it: builtin, redis-operator or external.
	Provider() string
	// Objects are the objects to create (without owner references).
	Objects() ([]client.Object, error)
	// Ready tells whether the target serves; when not, reason says what it waits for.
	Ready(ctx context.Context, c client.Reader) (ready bool, reason string, err error)
	// Endpoints are the addresses runners use, by role.
	Endpoints() []v1alpha1.Endpoint
	// Workloads are the objects whose pods serve the target (none for external ones).
	Workloads() []Workload
}

// Staged is implemented by targets some of whose objects must wait until the others serve:
// a proxy resolves its upstreams' per-pod DNS names at start, and a name looked up before its
// pod exists stays unresolvable for the DNS negative-cache TTL (30 s with the usual CoreDNS
// configuration), which delayed the load by that much.
type Staged interface {
	// Deferred tells whether obj, one of Objects, is created only once BaseReady.
	Deferred(obj client.Object) bool
	// BaseReady tells whether the objects that are not deferred serve.
	BaseReady(ctx context.Context, c client.Reader) (ready bool, reason string, err error)
}

// Workload is an object whose pods serve a target. Warning Events on it, on its pods and on
// a Deployment's ReplicaSets tell why a target does not become ready.
type Workload struct {
	// Kind is StatefulSet, Deployment, or a redis-operator kind (Redis, RedisReplication,
	// RedisSentinel) whose StatefulSets are Workloads of their own.
	Kind string
	// Name is the object's name in the run's namespace.
	Name string
}

// New builds the Target of spec (its kind's KindInfo.Cluster).
func New(spec *v1alpha1.TargetSpec, o Options) (Target, error) {
	k, err := KindOf(spec)
	if err != nil {
		return nil, err
	}
	return k.Cluster(spec, o)
}

// withLabels returns o.Labels plus component.
func (o Options) withLabels(component string) map[string]string {
	l := make(map[string]string, len(o.Labels)+1)
	for k, v := range o.Labels {
		l[k] = v
	}
	l[naming.LabelComponent] = component
	return l
}

// meta is the ObjectMeta of an object named prefix-suffix.
func (o Options) meta(suffix, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: naming.Name(o.Prefix, suffix), Namespace: o.Namespace, Labels: o.withLabels(component)}
}

// secretEnv is an environment variable read from a Secret key.
func secretEnv(name string, ref *v1alpha1.SecretKeyRef) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: ref.Key}}}
}

// statefulSetReady tells whether the StatefulSet has all its replicas ready.
func statefulSetReady(ctx context.Context, c client.Reader, ns, name string) (bool, string, error) {
	var sts appsv1.StatefulSet
	return replicasReady(ctx, c, ns, name, "StatefulSet", &sts, func() (int32, int32) {
		return ptr.Deref(sts.Spec.Replicas, 1), sts.Status.ReadyReplicas
	})
}

// deploymentReady tells whether the Deployment has all its replicas ready.
func deploymentReady(ctx context.Context, c client.Reader, ns, name string) (bool, string, error) {
	var d appsv1.Deployment
	return replicasReady(ctx, c, ns, name, "Deployment", &d, func() (int32, int32) {
		return ptr.Deref(d.Spec.Replicas, 1), d.Status.ReadyReplicas
	})
}

// replicasReady reads the workload ns/name of the given kind into obj and tells whether the
// ready replicas (replicas gives wanted and ready, read from obj) reach the wanted count.
func replicasReady(ctx context.Context, c client.Reader, ns, name, kind string, obj client.Object,
	replicas func() (want, ready int32)) (bool, string, error) {
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, kind + " " + name + " not created yet", nil
		}
		return false, "", err
	}
	if want, ready := replicas(); ready < want {
		return false, fmt.Sprintf("%s %s: %d/%d ready", kind, name, ready, want), nil
	}
	return true, "", nil
}

// readyCheck is one named readiness test.
type readyCheck func(ctx context.Context, c client.Reader) (bool, string, error)

// allReady runs checks in order and stops at the first not ready.
func allReady(ctx context.Context, c client.Reader, checks ...readyCheck) (bool, string, error) {
	for _, check := range checks {
		if ok, reason, err := check(ctx, c); err != nil || !ok {
			return ok, reason, err
		}
	}
	return true, "", nil
}

// placementPod applies a Placement to a pod spec and returns the container resources.
func placementPod(p *v1alpha1.Placement, spec *corev1.PodSpec) corev1.ResourceRequirements {
	spec.NodeSelector = p.NodeSelector
	spec.Tolerations = p.Tolerations
	if p.Resources != nil {
		return p.Resources.Core()
	}
	return naming.DefaultResources()
}

// helperResources are the fixed resources of benchrun's helper containers (sentinels, the
// redis-role sidecar, the proxy's wait-upstreams init container).
func helperResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}
}

// WithTag replaces the tag (and any digest) of an image reference: WithTag("redis:8.2", "7.4")
// is "redis:7.4"; a registry port ("host:5000/redis") is not a tag.
func WithTag(image, tag string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image + ":" + tag
}
