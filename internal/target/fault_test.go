package target

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestFaultRoles: the roles each target kind offers (the same the admission rule on
// spec.faults[].role accepts) and the Service each resolves through.
func TestFaultRoles(t *testing.T) {
	o := Options{Namespace: "ns", Prefix: "run-g1", Images: Images{Redis: "redis:8", HeTu: "hetu:1", Proxy: "proxy:1"}}
	redis := func(mode v1alpha1.RedisMode) *v1alpha1.RedisTarget { return &v1alpha1.RedisTarget{Mode: mode} }
	cases := []struct {
		name string
		spec v1alpha1.TargetSpec
		want string
	}{
		{"redis single", v1alpha1.TargetSpec{Redis: redis(v1alpha1.RedisSingle)}, "[master:run-g1-redis-master]"},
		{"redis ha", v1alpha1.TargetSpec{Redis: redis(v1alpha1.RedisHA)},
			"[master:run-g1-redis-master replica:run-g1-redis-replica sentinel:run-g1-redis-sentinel]"},
		{"redis proxy", v1alpha1.TargetSpec{Redis: redis(v1alpha1.RedisProxy)},
			"[master:run-g1-redis-master replica:run-g1-redis-replica proxy:run-g1-proxy]"},
		{"hetu on ha", v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{Backend: v1alpha1.HeTuBackend{Redis: redis(v1alpha1.RedisHA)}}},
			"[hetu:run-g1-hetu master:run-g1-redis-master replica:run-g1-redis-replica sentinel:run-g1-redis-sentinel]"},
		{"hetu on external", v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{Backend: v1alpha1.HeTuBackend{
			External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis, Addresses: []string{"r:6379"}}}}}, "[hetu:run-g1-hetu]"},
		{"custom", v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{Image: "echo", Ports: []v1alpha1.CustomPort{{Name: "echo", Port: 7}},
			Replicas: 2, ReadinessProbe: &v1alpha1.CustomProbe{TCPSocket: &v1alpha1.ProbePort{Port: "echo"}}}}, "[custom:run-g1-server]"},
	}
	for _, tc := range cases {
		tg, err := New(&tc.spec, o)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f, ok := tg.(Faultable)
		if !ok {
			t.Fatalf("%s: not Faultable", tc.name)
		}
		var got []string
		for _, r := range f.FaultRoles() {
			got = append(got, fmt.Sprintf("%s:%s", r, f.FaultService(r)))
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
		checkFaultServicesExist(t, tc.name, tg, f)
		if s := f.FaultService(v1alpha1.FaultRole("nope")); s != "" {
			t.Errorf("%s: unknown role resolves to %q", tc.name, s)
		}
	}
	ext, _ := New(&v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis, Addresses: []string{"r:6379"}}}, o)
	if _, ok := ext.(Faultable); ok {
		t.Error("an external target is Faultable")
	}
}

// checkFaultServicesExist: every role's Service is one of the target's objects (builtin
// provider), and selects pods.
func checkFaultServicesExist(t *testing.T, name string, tg Target, f Faultable) {
	t.Helper()
	objs, err := tg.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.FaultRoles() {
		found := false
		for _, obj := range objs {
			if svc, ok := obj.(*corev1.Service); ok && svc.Name == f.FaultService(r) && len(svc.Spec.Selector) > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: role %s: no Service %s with a selector among the target's objects", name, r, f.FaultService(r))
		}
	}
}
