package target

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/internal/naming"
)

// OperatorGroupVersion is the API of the OT-CONTAINER-KIT redis-operator.
var OperatorGroupVersion = schema.GroupVersion{Group: "redis.redis.opstreelabs.in", Version: "v1beta2"}

// operatorObjects are the redis-operator resources: Redis (single) or RedisReplication
// (ha, proxy) plus RedisSentinel (ha), and the ConfigMap with the extra server config that
// makes a plain image work without persistence (dir /tmp, writable
// without a volume).
func (r *redis) operatorObjects() []client.Object {
	o := r.o
	extra := &corev1.ConfigMap{ObjectMeta: o.meta(r.name+"-config", "redis-config"),
		Data: map[string]string{"redis-additional.conf": r.serverConfig()}}
	kubernetesConfig := map[string]any{"image": r.image, "imagePullPolicy": "IfNotPresent"}
	if res := r.spec.Resources; res != nil {
		kubernetesConfig["resources"] = toMap(ptr.To(res.Core()))
	}
	spec := map[string]any{
		"kubernetesConfig":   kubernetesConfig,
		"redisConfig":        map[string]any{"additionalRedisConfig": extra.Name},
		"podSecurityContext": toMap(naming.PodSecurityContext()),
		"securityContext":    operatorSecurityContext(),
		"initContainer":      r.operatorInitContainer(false),
	}
	if ref := r.spec.PasswordSecretRef; ref != nil {
		kubernetesConfig["redisSecret"] = map[string]any{"name": ref.Name, "key": ref.Key}
		spec["readinessProbe"], spec["livenessProbe"] = operatorProbe(false), operatorProbe(true)
	}
	if len(r.spec.NodeSelector) > 0 {
		spec["nodeSelector"] = stringMap(r.spec.NodeSelector)
	}
	if len(r.spec.Tolerations) > 0 {
		spec["tolerations"] = toSlice(r.spec.Tolerations)
	}
	kind := "Redis"
	if r.mode != "single" {
		kind = "RedisReplication"
		spec["clusterSize"] = int64(1 + r.replicas)
	}
	objs := []client.Object{extra, r.operatorResource(kind, r.name, spec)}
	if r.sentinels > 0 {
		sentinelSpec := map[string]any{
			"clusterSize":        int64(r.sentinels),
			"kubernetesConfig":   map[string]any{"image": r.image, "imagePullPolicy": "IfNotPresent"},
			"podSecurityContext": toMap(naming.PodSecurityContext()),
			"securityContext":    operatorSecurityContext(),
			"initContainer":      r.operatorInitContainer(true),
			"redisSentinelConfig": map[string]any{
				"redisReplicationName": naming.Name(o.Prefix, r.name),
				"masterGroupName":      masterGroup,
				"redisPort":            "6379",
				"quorum":               itoa(r.sentinels/2 + 1),
			},
		}
		if ref := r.spec.PasswordSecretRef; ref != nil {
			sentinelSpec["redisSentinelConfig"].(map[string]any)["redisReplicationPassword"] = map[string]any{
				"secretKeyRef": map[string]any{"name": ref.Name, "key": ref.Key}}
		}
		objs = append(objs, r.operatorResource("RedisSentinel", r.name, sentinelSpec))
	}
	return objs
}

// operatorSecurityContext is the restricted container context of the redis-operator's pods
// with a writable root filesystem: the operator's StatefulSets mount none of benchrun's
// emptyDirs, and Redis writes its replication RDB under dir /tmp (a read-only root broke
// replication: replicas never synced and the operator found no master).
func operatorSecurityContext() map[string]any {
	sc := naming.ContainerSecurityContext()
	sc.ReadOnlyRootFilesystem = ptr.To(false)
	return toMap(sc)
}

// operatorInitContainer gives the operator's config-writing init container (feature gate
// GenerateConfigInInitContainer) our restricted security context: without one, namespaces
// enforcing the restricted Pod Security Standard reject the pods and the target never starts.
// Enabled switches on the operator's user init container, which runs after the config one:
// with a password it is ours and quotes the password in the generated config
// (operatorPasswordScript; sentinel: sentinel.conf), else it stays off.
func (r *redis) operatorInitContainer(sentinel bool) map[string]any {
	ic := map[string]any{
		"enabled":         false,
		"image":           r.image,
		"securityContext": operatorSecurityContext(),
	}
	if ref := r.spec.PasswordSecretRef; ref != nil {
		ic["enabled"], ic["imagePullPolicy"] = true, "IfNotPresent" // as the Redis container
		ic["command"] = []any{"sh", "-c", operatorPasswordScript(sentinel)}
		ic["env"] = []any{toMap(ptr.To(secretEnv(PasswordEnv, ref)))}
		if res := r.spec.Resources; res != nil && !sentinel { // as the operator's config container
			ic["resources"] = toMap(ptr.To(res.Core()))
		}
	}
	return ic
}

// operatorResource is one redis-operator custom resource named prefix-suffix.
func (r *redis) operatorResource(kind, suffix string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(OperatorGroupVersion.WithKind(kind))
	m := r.o.meta(suffix, "redis")
	u.SetName(m.Name)
	u.SetNamespace(m.Namespace)
	u.SetLabels(m.Labels)
	return u
}

// operatorReadyChecks follow what the operator exposes: its resources have no useful status,
// so readiness is their StatefulSets' (<name> for Redis/RedisReplication, <name>-sentinel).
func (r *redis) operatorReadyChecks() []readyCheck {
	checks := []readyCheck{r.stsCheck(r.name)}
	if r.sentinels > 0 {
		checks = append(checks, r.stsCheck(r.name+"-sentinel"))
	}
	return checks
}

// toMap converts a typed value to the unstructured form.
func toMap(v any) map[string]any {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		return nil
	}
	return m
}

// toSlice converts a typed slice to the unstructured form.
func toSlice[T any](v []T) []any {
	out := make([]any, 0, len(v))
	for i := range v {
		out = append(out, toMap(&v[i]))
	}
	return out
}

// itoa formats an int32 in base 10.
func itoa(n int32) string { return strconv.Itoa(int(n)) }

// stringMap converts a map of strings to the unstructured form.
func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
