package target

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/redisrole"
)

// opts are test options in namespace ns with prefix run-g1.
func opts(operator bool) Options {
	return Options{Namespace: "ns", Prefix: "run-g1", Labels: map[string]string{naming.LabelRun: "run", naming.LabelGeneration: "1"},
		Images: Images{Redis: "redis:t", Valkey: "valkey:t", HeTu: "hetu:t", Proxy: "proxy:t"}, OperatorInstalled: operator}
}

// byName indexes objects by type and name.
func byName(objs []client.Object) map[string]client.Object {
	m := map[string]client.Object{}
	for _, o := range objs {
		kind := strings.Split(typeName(o), ".")[1]
		m[kind+"/"+o.GetName()] = o
	}
	return m
}

// typeName is the Go type of o, e.g. *v1.StatefulSet, or the kind of an unstructured object.
func typeName(o client.Object) string {
	if u, ok := o.(*unstructured.Unstructured); ok {
		return "*x." + u.GetKind()
	}
	switch o.(type) {
	case *appsv1.StatefulSet:
		return "*v1.StatefulSet"
	case *appsv1.Deployment:
		return "*v1.Deployment"
	case *corev1.Service:
		return "*v1.Service"
	case *corev1.ConfigMap:
		return "*v1.ConfigMap"
	case *rbacv1.Role:
		return "*v1.Role"
	case *rbacv1.RoleBinding:
		return "*v1.RoleBinding"
	}
	return "*v1.Unused"
}

func TestBuiltinHA(t *testing.T) {
	tg, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Engine: v1alpha1.EngineValkey,
		Provider: v1alpha1.ProviderAuto, Replicas: ptr.To[int32](2), Sentinels: ptr.To[int32](3),
		Config: map[string]v1alpha1.RedisConfigValue{"io-threads": "4"}, PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}}, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind() != "valkey/ha" || tg.Provider() != "builtin" {
		t.Fatalf("%s %s", tg.Kind(), tg.Provider())
	}
	objs, _ := tg.Objects()
	m := byName(objs)
	master := m["StatefulSet/run-g1-redis-master"].(*appsv1.StatefulSet)
	replica := m["StatefulSet/run-g1-redis-replica"].(*appsv1.StatefulSet)
	sentinel := m["StatefulSet/run-g1-redis-sentinel"].(*appsv1.StatefulSet)
	if *replica.Spec.Replicas != 2 || *sentinel.Spec.Replicas != 3 || master.Spec.Template.Spec.Containers[0].Image != "valkey:t" {
		t.Fatal("replica counts or image")
	}
	script := replica.Spec.Template.Spec.Containers[0].Command[2]
	if !strings.Contains(script, "replicaof run-g1-redis-master.ns.svc 6379") {
		t.Fatalf("replica script: %s", script)
	}
	if !strings.Contains(sentinel.Spec.Template.Spec.Containers[0].Command[2], "sentinel monitor mymaster run-g1-redis-master-0.run-g1-redis-hl.ns.svc 6379 2") {
		t.Fatal("sentinel monitor line")
	}
	if cfg := m["ConfigMap/run-g1-redis-config"].(*corev1.ConfigMap).Data["redis.conf"]; !strings.Contains(cfg, "io-threads 4\n") || !strings.Contains(cfg, "dir /tmp") {
		t.Fatalf("config %q", cfg)
	}
	for _, name := range []string{"run-g1-redis-master", "run-g1-redis-replica", "run-g1-redis-sentinel"} {
		if _, ok := m["Service/"+name]; !ok {
			t.Errorf("no Service %s", name)
		}
	}
	// Role-following Services: selected by the role label the sidecar keeps current.
	if sel := m["Service/run-g1-redis-master"].(*corev1.Service).Spec.Selector; sel[redisrole.Label] != "master" || sel[naming.LabelComponent] != "" {
		t.Errorf("master selector %v", sel)
	}
	if sel := m["Service/run-g1-redis-replica"].(*corev1.Service).Spec.Selector; sel[redisrole.Label] != "replica" {
		t.Errorf("replica selector %v", sel)
	}
	if replica.Spec.Template.Labels[redisrole.Label] != "replica" || master.Spec.Template.Labels[redisrole.Label] != "master" {
		t.Error("initial role labels")
	}
	if len(replica.Spec.Template.Spec.Containers) != 2 || replica.Spec.Template.Spec.Containers[1].Name != "redis-role" ||
		replica.Spec.Template.Spec.ServiceAccountName != "run-g1-redis-role" {
		t.Error("no redis-role sidecar")
	}
	// The sidecars' ServiceAccount is bound to the installed ClusterRole, no per-run Role
	// (creating one would need the operator to hold pods patch itself).
	rb, _ := m["RoleBinding/run-g1-redis-role"].(*rbacv1.RoleBinding)
	if rb == nil || rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: DefaultRedisRoleClusterRole}) ||
		len(rb.Subjects) != 1 || rb.Subjects[0] != (rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "run-g1-redis-role", Namespace: "ns"}) {
		t.Fatalf("redis-role RoleBinding %+v", rb)
	}
	if _, ok := m["Role/run-g1-redis-role"]; ok {
		t.Fatal("per-run Role for the sidecars")
	}
	o := opts(false)
	o.RedisRoleClusterRole = "rel-benchrun-redis-role"
	tg2, _ := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin}}, o)
	objs2, _ := tg2.Objects()
	if rb := byName(objs2)["RoleBinding/run-g1-redis-role"].(*rbacv1.RoleBinding); rb.RoleRef.Name != "rel-benchrun-redis-role" {
		t.Fatalf("ClusterRole name not from the options: %+v", rb.RoleRef)
	}
	pod := master.Spec.Template.Spec
	if !*pod.SecurityContext.RunAsNonRoot || *pod.Containers[0].SecurityContext.AllowPrivilegeEscalation {
		t.Fatal("not restricted")
	}
	eps := tg.Endpoints()
	if len(eps) != 3 || eps[0] != (v1alpha1.Endpoint{Role: "master", Address: "run-g1-redis-master.ns.svc:6379"}) || eps[2].Role != "sentinel" {
		t.Fatalf("endpoints %+v", eps)
	}
}

func TestOperatorProvider(t *testing.T) {
	if _, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Provider: v1alpha1.ProviderRedisOperator}}, opts(false)); err == nil {
		t.Fatal("redis-operator without its CRDs accepted")
	}
	tg, _ := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle, Provider: v1alpha1.ProviderAuto,
		PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}}, opts(true))
	objs, _ := tg.Objects()
	m := byName(objs)
	r := m["Redis/run-g1-redis"].(*unstructured.Unstructured)
	if secret, _, _ := unstructured.NestedString(r.Object, "spec", "kubernetesConfig", "redisSecret", "name"); secret != "s" {
		t.Fatalf("redis %v", r.Object)
	}
	if cm, _, _ := unstructured.NestedString(r.Object, "spec", "redisConfig", "additionalRedisConfig"); cm != "run-g1-redis-config" {
		t.Fatal("no additional config")
	}
	// The operator's config init container must pass the restricted Pod Security Standard.
	if nonRoot, _, _ := unstructured.NestedBool(r.Object, "spec", "initContainer", "securityContext", "runAsNonRoot"); !nonRoot {
		t.Fatalf("initContainer without a restricted securityContext: %v", r.Object["spec"])
	}
	if drop, _, _ := unstructured.NestedStringSlice(r.Object, "spec", "initContainer", "securityContext", "capabilities", "drop"); len(drop) != 1 || drop[0] != "ALL" {
		t.Fatalf("initContainer capabilities not dropped: %v", drop)
	}
	// Redis in the operator's pods writes its replication RDB under dir /tmp on the root
	// filesystem (the operator mounts none of our emptyDirs): it must stay writable.
	if ro, found, _ := unstructured.NestedBool(r.Object, "spec", "securityContext", "readOnlyRootFilesystem"); !found || ro {
		t.Fatalf("operator Redis securityContext readOnlyRootFilesystem %v (found %v), want false", ro, found)
	}
	if tg.Endpoints()[0].Address != "run-g1-redis.ns.svc:6379" {
		t.Fatalf("endpoints %+v", tg.Endpoints())
	}
}

func TestHeTu(t *testing.T) {
	tg, err := New(&v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{Workers: 4, Port: 2466, ExtraConfig: map[string]v1alpha1.HeTuConfigValue{"CLIENT_SEND_LIMITS": "[[100,1]]"},
		Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin,
			PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}}}}, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	objs, _ := tg.Objects()
	m := byName(objs)
	cfg := m["ConfigMap/run-g1-hetu-config"].(*corev1.ConfigMap).Data["config.yml"]
	for _, want := range []string{"MAX_ANONYMOUS_CONNECTION_BY_IP: 0", "CLIENT_SEND_LIMITS: []", "CLIENT_SEND_LIMITS: [[100,1]]", "servants:"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q", want)
		}
	}
	env := map[string]string{}
	for _, e := range m["Deployment/run-g1-hetu"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["HETU_REDIS_MASTER"] != "run-g1-redis-master.ns.svc:6379" ||
		env["HETU_REDIS_SERVANT_ADDRS"] != `["run-g1-redis-replica.ns.svc:6379"]` || env["HETU_WORKERS"] != "4" {
		t.Fatalf("env %v", env)
	}
	if _, ok := m["StatefulSet/run-g1-redis-sentinel"]; !ok {
		t.Fatal("back end not deployed")
	}
	if _, err := New(&v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{ExtraConfig: map[string]v1alpha1.HeTuConfigValue{"X": "a\nB: c"},
		Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{}}}}, opts(false)); err == nil {
		t.Fatal("multi-line extraConfig accepted")
	}
}

func TestExternal(t *testing.T) {
	tg, _ := New(&v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis,
		Addresses: []string{"r-1.example:6379"}, ReadAddresses: []string{"r-2.example:6379"}}}, opts(false))
	objs, _ := tg.Objects()
	ready, _, _ := tg.Ready(context.Background(), nil)
	if len(objs) != 0 || !ready || tg.Kind() != "external/redis" || len(tg.Endpoints()) != 2 || tg.Endpoints()[1].Role != "replica" {
		t.Fatalf("external %+v", tg.Endpoints())
	}
}

// TestWorkloads: every target kind names the objects whose Warning Events explain it,
// and each of them is one it creates or the redis-operator creates for it.
func TestWorkloads(t *testing.T) {
	w := func(kind, name string) Workload { return Workload{Kind: kind, Name: name} }
	for _, c := range []struct {
		spec     v1alpha1.TargetSpec
		operator bool
		want     []Workload
	}{
		{spec: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle}},
			want: []Workload{w("StatefulSet", "run-g1-redis-master")}},
		{spec: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA}},
			want: []Workload{w("StatefulSet", "run-g1-redis-master"), w("StatefulSet", "run-g1-redis-replica"), w("StatefulSet", "run-g1-redis-sentinel")}},
		{spec: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy}},
			want: []Workload{w("StatefulSet", "run-g1-redis-master"), w("StatefulSet", "run-g1-redis-replica"), w("Deployment", "run-g1-proxy")}},
		{spec: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle}}, operator: true,
			want: []Workload{w("Redis", "run-g1-redis"), w("StatefulSet", "run-g1-redis")}},
		{spec: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA}}, operator: true,
			want: []Workload{w("RedisReplication", "run-g1-redis"), w("StatefulSet", "run-g1-redis"), w("RedisSentinel", "run-g1-redis"), w("StatefulSet", "run-g1-redis-sentinel")}},
		{spec: v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle}}}},
			want: []Workload{w("StatefulSet", "run-g1-redis-master"), w("Deployment", "run-g1-hetu")}},
		{spec: v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis, Addresses: []string{"r:6379"}}}},
	} {
		tg, err := New(&c.spec, opts(c.operator))
		if err != nil {
			t.Fatal(err)
		}
		got := tg.Workloads()
		if !slices.Equal(got, c.want) {
			t.Errorf("%s (%s): %v, want %v", tg.Kind(), tg.Provider(), got, c.want)
		}
		objs, _ := tg.Objects()
		created := map[Workload]bool{}
		for _, o := range objs {
			kind := o.GetObjectKind().GroupVersionKind().Kind
			switch o.(type) {
			case *appsv1.StatefulSet:
				kind = "StatefulSet"
			case *appsv1.Deployment:
				kind = "Deployment"
			}
			created[w(kind, o.GetName())] = true
		}
		for _, wl := range got {
			// The operator's StatefulSets carry the names of its resources.
			byOperator := c.operator && wl.Kind == "StatefulSet" && (created[w("Redis", wl.Name)] ||
				created[w("RedisReplication", wl.Name)] || created[w("RedisSentinel", strings.TrimSuffix(wl.Name, "-sentinel"))])
			if !created[wl] && !byOperator {
				t.Errorf("%s: workload %v is not among the objects", tg.Kind(), wl)
			}
		}
	}
}
