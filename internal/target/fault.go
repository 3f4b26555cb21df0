package target

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// Faultable is implemented by targets whose pods spec.faults can act on. Each role is the set
// of pods one of the target's Services selects: the builtin master Service selects the pod
// labelled master by its redis-role sidecar and the redis-operator's master Service the pod the
// operator labels master, so "master" is the master at the moment the fault is applied.
type Faultable interface {
	// FaultRoles are the roles a fault may name for this target (the admission rule on
	// spec.faults[].role lists the same per kind).
	FaultRoles() []v1alpha1.FaultRole
	// FaultService is the name of the Service selecting role's pods ("" for a role the
	// target does not have).
	FaultService(role v1alpha1.FaultRole) string
}

// FaultRoles implements Faultable: master; replica with replicas; sentinel in mode ha; proxy
// in mode proxy.
func (r *redis) FaultRoles() []v1alpha1.FaultRole {
	roles := []v1alpha1.FaultRole{v1alpha1.FaultRoleMaster}
	if r.replicas > 0 {
		roles = append(roles, v1alpha1.FaultRoleReplica)
	}
	if r.sentinels > 0 {
		roles = append(roles, v1alpha1.FaultRoleSentinel)
	}
	if r.mode == v1alpha1.RedisProxy {
		roles = append(roles, v1alpha1.FaultRoleProxy)
	}
	return roles
}

// FaultService implements Faultable: the Services of Endpoints.
func (r *redis) FaultService(role v1alpha1.FaultRole) string {
	if !slices.Contains(r.FaultRoles(), role) {
		return ""
	}
	switch role {
	case v1alpha1.FaultRoleMaster:
		if r.operator && r.mode == v1alpha1.RedisSingle {
			return naming.Name(r.o.Prefix, r.name)
		}
		return naming.Name(r.o.Prefix, r.masterSvc())
	case v1alpha1.FaultRoleReplica:
		return naming.Name(r.o.Prefix, r.replicaSvc())
	case v1alpha1.FaultRoleSentinel:
		return naming.Name(r.o.Prefix, r.sentinelSvc())
	case v1alpha1.FaultRoleProxy:
		return naming.Name(r.o.Prefix, proxySuffix)
	}
	return ""
}

// FaultRoles implements Faultable: hetu, and its Redis back end's roles when deployed with it.
func (h *hetu) FaultRoles() []v1alpha1.FaultRole {
	roles := []v1alpha1.FaultRole{v1alpha1.FaultRoleHeTu}
	if h.backend != nil {
		roles = append(roles, h.backend.FaultRoles()...)
	}
	return roles
}

// FaultService implements Faultable.
func (h *hetu) FaultService(role v1alpha1.FaultRole) string {
	if role == v1alpha1.FaultRoleHeTu {
		return naming.Name(h.o.Prefix, "hetu")
	}
	if h.backend != nil {
		return h.backend.FaultService(role)
	}
	return ""
}

// FaultRoles implements Faultable: the custom server's pods.
func (c *custom) FaultRoles() []v1alpha1.FaultRole {
	return []v1alpha1.FaultRole{v1alpha1.FaultRoleCustom}
}

// FaultService implements Faultable.
func (c *custom) FaultService(role v1alpha1.FaultRole) string {
	if role == v1alpha1.FaultRoleCustom {
		return naming.Name(c.o.Prefix, customSuffix)
	}
	return ""
}

// FaultPod is the pod a fault on role acts on now: of the running, not terminating pods the
// role's Service selects whose names start with prefix + "-" (the run generation's own pods:
// a Service whose selector was edited to match other pods gets none of them deleted), the
// first by name. c should read past any cache (target pods are not cached by the manager).
func FaultPod(ctx context.Context, c client.Reader, t Target, ns, prefix string, role v1alpha1.FaultRole) (*corev1.Pod, error) {
	f, ok := t.(Faultable)
	if !ok || f.FaultService(role) == "" {
		return nil, fmt.Errorf("a %s target has no role %s", t.Kind(), role)
	}
	var svc corev1.Service
	name := f.FaultService(role)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &svc); err != nil {
		return nil, fmt.Errorf("the Service %s of role %s: %w", name, role, err)
	}
	if len(svc.Spec.Selector) == 0 {
		return nil, fmt.Errorf("the Service %s of role %s selects no pods", name, role)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(svc.Spec.Selector)}); err != nil {
		return nil, err
	}
	var live []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Name, prefix+"-") {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil, fmt.Errorf("no running pod of this run holds role %s (Service %s selects %d pods)", role, name, len(pods.Items))
	}
	slices.SortFunc(live, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return live[0], nil
}
