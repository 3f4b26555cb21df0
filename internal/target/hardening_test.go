package target

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// podSpecs are the pod templates of the StatefulSets and Deployments among objs.
func podSpecs(t *testing.T, tg Target) map[string]corev1.PodSpec {
	t.Helper()
	objs, err := tg.Objects()
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]corev1.PodSpec{}
	for _, o := range objs {
		switch w := o.(type) {
		case *appsv1.StatefulSet:
			pods[w.Name] = w.Spec.Template.Spec
		case *appsv1.Deployment:
			pods[w.Name] = w.Spec.Template.Spec
		}
	}
	return pods
}

// Every builtin target pod: read-only root filesystem and explicit resources in every
// container; no pod automounts a ServiceAccount token; the redis-role token (ha and proxy) is
// mounted in the redis-role sidecar only, never in the Redis server container.
func TestPodHardening(t *testing.T) {
	redis := func(mode v1alpha1.RedisMode) *v1alpha1.TargetSpec {
		return &v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: mode, Provider: v1alpha1.ProviderBuiltin}}
	}
	specs := map[string]*v1alpha1.TargetSpec{
		"single": redis(v1alpha1.RedisSingle), "ha": redis(v1alpha1.RedisHA), "proxy": redis(v1alpha1.RedisProxy),
		"hetu":    {HeTu: &v1alpha1.HeTuTarget{Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle}}}},
		"hetu-ha": {HeTu: &v1alpha1.HeTuTarget{Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA}}}},
		"custom": {Custom: &v1alpha1.CustomTarget{Image: "echo:t", Ports: []v1alpha1.CustomPort{{Name: "echo", Port: 7007}},
			ReadinessProbe: &v1alpha1.CustomProbe{TCPSocket: &v1alpha1.ProbePort{}}}},
	}
	for name, spec := range specs {
		tg, err := New(spec, opts(false))
		if err != nil {
			t.Fatal(err)
		}
		pods := podSpecs(t, tg)
		if len(pods) == 0 {
			t.Fatalf("%s: no pods", name)
		}
		sidecars := 0
		defer func() {
			if want := name == "ha" || name == "proxy" || name == "hetu-ha"; want != (sidecars > 0) {
				t.Errorf("%s: %d redis-role sidecars", name, sidecars)
			}
		}()
		for pod, ps := range pods {
			if ptr.Deref(ps.AutomountServiceAccountToken, true) {
				t.Errorf("%s %s: the pod automounts a ServiceAccount token", name, pod)
			}
			for _, c := range append(append([]corev1.Container{}, ps.InitContainers...), ps.Containers...) {
				if !ptr.Deref(c.SecurityContext.ReadOnlyRootFilesystem, false) {
					t.Errorf("%s %s/%s: root filesystem not read-only", name, pod, c.Name)
				}
				if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
					t.Errorf("%s %s/%s: no explicit requests: %+v", name, pod, c.Name, c.Resources)
				}
				token := false
				for _, m := range c.VolumeMounts {
					token = token || m.Name == roleTokenVolume
				}
				if c.Name == "redis-role" {
					sidecars++
				}
				if token != (c.Name == "redis-role") {
					t.Errorf("%s %s/%s: mounts the redis-role token: %v", name, pod, c.Name, token)
				}
			}
			if ps.ServiceAccountName != "" && len(ps.Containers) != 2 {
				t.Errorf("%s %s: ServiceAccount %s without the redis-role sidecar", name, pod, ps.ServiceAccountName)
			}
			checkTokenOwner(t, name+" "+pod, ps)
		}
	}
}

// checkTokenOwner: in a pod that mounts the redis-role token, the redis-role sidecar runs as
// a UID and GID no other container (nor a pause fault's ephemeral container, which takes the
// first container's UID) runs as, and the pod sets no fsGroup (which every container would get
// as a supplementary group, and the kubelet would give the token file); the token volume is the
// projected service-account token, root-owned 0444 by the kubelet's rules for pods of mixed
// UIDs (see roleToken).
func checkTokenOwner(t *testing.T, name string, ps corev1.PodSpec) {
	t.Helper()
	var vol *corev1.Volume
	for i := range ps.Volumes {
		if ps.Volumes[i].Name == roleTokenVolume {
			vol = &ps.Volumes[i]
		}
	}
	if vol == nil {
		return
	}
	if ps.SecurityContext.FSGroup != nil {
		t.Errorf("%s: fsGroup %d with the redis-role token", name, *ps.SecurityContext.FSGroup)
	}
	if p := vol.Projected; p == nil || len(p.Sources) == 0 || p.Sources[0].ServiceAccountToken == nil || ptr.Deref(p.DefaultMode, 0) != 0o444 {
		t.Errorf("%s: the redis-role token volume %+v", name, vol.VolumeSource)
	}
	uid := func(c *corev1.Container) (int64, int64) {
		u, g := *ps.SecurityContext.RunAsUser, *ps.SecurityContext.RunAsGroup
		if c.SecurityContext.RunAsUser != nil {
			u = *c.SecurityContext.RunAsUser
		}
		if c.SecurityContext.RunAsGroup != nil {
			g = *c.SecurityContext.RunAsGroup
		}
		return u, g
	}
	var sidecarUID, sidecarGID int64 = -1, -1
	for i := range ps.Containers {
		if ps.Containers[i].Name == "redis-role" {
			sidecarUID, sidecarGID = uid(&ps.Containers[i])
		}
	}
	if sidecarUID != roleSidecarUID || sidecarGID != roleSidecarUID {
		t.Errorf("%s: the redis-role sidecar runs as %d:%d", name, sidecarUID, sidecarGID)
	}
	for _, c := range append(append([]corev1.Container{}, ps.InitContainers...), ps.Containers...) {
		if u, g := uid(&c); c.Name != "redis-role" && (u == sidecarUID || g == sidecarGID) {
			t.Errorf("%s/%s runs as the sidecar's UID or GID (%d:%d)", name, c.Name, u, g)
		}
	}
	if slices.Contains(ps.SecurityContext.SupplementalGroups, sidecarGID) {
		t.Errorf("%s: the sidecar's GID is a supplementary group of every container", name)
	}
}
