package target

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
)

// routes is the proxy target's route table: the write URL and the read URLs (one, or the
// resources of a random read list).
func routes(t *testing.T, tg Target) (write string, reads []string) {
	t.Helper()
	objs, _ := tg.Objects()
	cm := byName(objs)["ConfigMap/run-g1-proxy-config"].(*corev1.ConfigMap)
	var table struct {
		Type      string
		Operation struct {
			Type  string
			Write string
			Read  json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(cm.Data["resource-table.json"]), &table); err != nil {
		t.Fatal(err)
	}
	if table.Type != "simple" || table.Operation.Type != "rw_separate" {
		t.Fatalf("route table %s", cm.Data["resource-table.json"])
	}
	var one string
	if err := json.Unmarshal(table.Operation.Read, &one); err == nil {
		return table.Operation.Write, []string{one}
	}
	var list struct {
		Type      string
		Resources []string
	}
	if err := json.Unmarshal(table.Operation.Read, &list); err != nil || list.Type != "random" || len(list.Resources) < 2 {
		t.Fatalf("read %s: %v", table.Operation.Read, err)
	}
	return table.Operation.Write, list.Resources
}

// TestProxyRoutes: writes go to the master and reads to every replica by its stable per-pod
// name (a random read list: camellia picks a server per command), the password is a
// placeholder filled in at container start, and the names exist (headless governing Service).
func TestProxyRoutes(t *testing.T) {
	spec := &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy, Provider: v1alpha1.ProviderBuiltin,
		PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}
	tg, _ := New(&v1alpha1.TargetSpec{Redis: spec}, opts(false))
	objs, _ := tg.Objects()
	m := byName(objs)
	write, reads := routes(t, tg)
	if write != "redis://@REDIS_PASSWORD@@run-g1-redis-master.ns.svc:6379" {
		t.Fatalf("write %s", write)
	}
	if want := []string{"redis://@REDIS_PASSWORD@@run-g1-redis-replica-0.run-g1-redis-hl.ns.svc:6379",
		"redis://@REDIS_PASSWORD@@run-g1-redis-replica-1.run-g1-redis-hl.ns.svc:6379"}; !slices.Equal(reads, want) {
		t.Fatalf("reads %v", reads)
	}
	// The per-pod names resolve: the StatefulSets' governing Service is headless, selects
	// master and replicas, and publishes pods before they are ready.
	hl := m["Service/run-g1-redis-hl"].(*corev1.Service)
	if hl.Spec.ClusterIP != corev1.ClusterIPNone || !hl.Spec.PublishNotReadyAddresses || hl.Spec.Selector[redisLabel] != "redis" {
		t.Fatalf("headless Service %+v", hl.Spec)
	}
	for _, name := range []string{"run-g1-redis-master", "run-g1-redis-replica"} {
		sts := m["StatefulSet/"+name].(*appsv1.StatefulSet)
		if sts.Spec.ServiceName != "run-g1-redis-hl" || sts.Spec.Template.Labels[redisLabel] != "redis" {
			t.Fatalf("%s: serviceName %q labels %v", name, sts.Spec.ServiceName, sts.Spec.Template.Labels)
		}
	}
	app := m["ConfigMap/run-g1-proxy-config"].(*corev1.ConfigMap).Data["application.yml"]
	if !strings.Contains(app, "password: ${BENCHRUN_PROXY_PASSWORD}") || !strings.Contains(app, "benchrun:\n  dollar: \"$\"\n") {
		t.Fatalf("proxy password not from the environment: %s", app)
	}
	ctr := m["Deployment/run-g1-proxy"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	if ctr.Env[0].Name != PasswordEnv || ctr.Env[0].ValueFrom.SecretKeyRef.Name != "s" || ctr.Command[2] != proxyScript {
		t.Fatalf("proxy container %+v", ctr)
	}
	// A proxy whose Spring context died (upstream not ready at start) must be restarted.
	if lp := ctr.LivenessProbe; lp == nil || lp.TCPSocket == nil || lp.TCPSocket.Port.IntValue() != 6380 {
		t.Fatalf("proxy liveness probe %+v", lp)
	}
	// camellia starts only once every upstream answers: an init container waits for them
	// (password from the Secret, never in the arguments).
	pod := m["Deployment/run-g1-proxy"].(*appsv1.Deployment).Spec.Template.Spec
	if len(pod.InitContainers) != 1 {
		t.Fatalf("init containers %+v", pod.InitContainers)
	}
	wait := pod.InitContainers[0]
	if want := []string{"benchrun-runner", "wait-redis", "run-g1-redis-master.ns.svc:6379",
		"run-g1-redis-replica-0.run-g1-redis-hl.ns.svc:6379", "run-g1-redis-replica-1.run-g1-redis-hl.ns.svc:6379"}; !slices.Equal(wait.Command, want) {
		t.Fatalf("wait-upstreams command %q", wait.Command)
	}
	if wait.Image != opts(false).Images.Agent || len(wait.Env) != 1 || wait.Env[0].Name != PasswordEnv || wait.Env[0].ValueFrom.SecretKeyRef.Name != "s" ||
		wait.SecurityContext == nil || *wait.SecurityContext.AllowPrivilegeEscalation {
		t.Fatalf("wait-upstreams container %+v", wait)
	}
	if eps := tg.Endpoints(); eps[0].Role != "proxy" || eps[0].Address != "run-g1-proxy.ns.svc:6380" {
		t.Fatalf("endpoints %+v", eps)
	}
}

// TestProxyReadPolicies: every read policy and provider, with and without a password.
func TestProxyReadPolicies(t *testing.T) {
	const (
		master  = "redis://@run-g1-redis-master.ns.svc:6379"
		replica = "redis://@run-g1-redis-replica-%d.run-g1-redis-hl.ns.svc:6379"
	)
	r := func(i int) string { return strings.Replace(replica, "%d", string(rune('0'+i)), 1) }
	for _, c := range []struct {
		policy   v1alpha1.ReadPolicy
		replicas int32
		operator bool
		write    string
		reads    []string
	}{
		{policy: "", replicas: 3, write: master, reads: []string{r(0), r(1), r(2)}},
		{policy: v1alpha1.ReadReplicas, replicas: 1, write: master, reads: []string{r(0)}},
		{policy: v1alpha1.ReadReplicasAndMaster, replicas: 2, write: master, reads: []string{master, r(0), r(1)}},
		{policy: v1alpha1.ReadMaster, replicas: 2, write: master, reads: []string{master}},
		// The redis-operator picks the master: its role Services, or every pod for replicas-and-master.
		{policy: v1alpha1.ReadReplicas, replicas: 2, operator: true,
			write: "redis://@run-g1-redis-master.ns.svc:6379", reads: []string{"redis://@run-g1-redis-replica.ns.svc:6379"}},
		{policy: v1alpha1.ReadReplicasAndMaster, replicas: 2, operator: true, write: "redis://@run-g1-redis-master.ns.svc:6379",
			reads: []string{"redis://@run-g1-redis-0.run-g1-redis-headless.ns.svc:6379", "redis://@run-g1-redis-1.run-g1-redis-headless.ns.svc:6379",
				"redis://@run-g1-redis-2.run-g1-redis-headless.ns.svc:6379"}},
		{policy: v1alpha1.ReadMaster, replicas: 2, operator: true,
			write: "redis://@run-g1-redis-master.ns.svc:6379", reads: []string{"redis://@run-g1-redis-master.ns.svc:6379"}},
	} {
		tg, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy, Provider: v1alpha1.ProviderAuto,
			Replicas: ptr.To(c.replicas), Proxy: &v1alpha1.RedisProxySpec{ReadPolicy: c.policy}}}, opts(c.operator))
		if err != nil {
			t.Fatal(err)
		}
		write, reads := routes(t, tg)
		if write != c.write || !slices.Equal(reads, c.reads) {
			t.Errorf("%q, %d replicas, operator %v: write %s reads %v; want %s %v", c.policy, c.replicas, c.operator, write, reads, c.write, c.reads)
		}
		objs, _ := tg.Objects()
		if app := byName(objs)["ConfigMap/run-g1-proxy-config"].(*corev1.ConfigMap).Data["application.yml"]; strings.Contains(app, "password") {
			t.Errorf("a proxy password without a Secret: %s", app)
		}
	}
}

// runAwk runs program with awk (argv prefix) over input, the password in the environment.
func runAwk(t *testing.T, awk []string, password, input string, args ...string) string {
	t.Helper()
	cmd := exec.Command(awk[0], append(slices.Clone(awk[1:]), args...)...)
	cmd.Env = []string{"LC_ALL=C", PasswordEnv + "=" + password}
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return string(out)
}

// TestRouteAwk: every awk puts any password into the route table as camellia reads it: a
// JSON string holding redis://USERINFO@host where USERINFO is the password, or default:
// and the password when it has a colon (camellia splits user info at the first colon).
func TestRouteAwk(t *testing.T) {
	table := `{"w":"redis://` + passwordPlaceholder + `@h:1","r":["redis://` + passwordPlaceholder + `@h2:2"]}`
	for _, awk := range awks(t) {
		for _, p := range nastyPasswords {
			out := runAwk(t, awk, p, table+"\n", "-v", "ph="+passwordPlaceholder, routeAwk)
			var got struct {
				W string
				R []string
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%s, %q: %v in %s", awk[0], p, err, out)
			}
			userinfo := p
			if strings.Contains(p, ":") {
				userinfo = "default:" + p
			}
			if got.W != "redis://"+userinfo+"@h:1" || len(got.R) != 1 || got.R[0] != "redis://"+userinfo+"@h2:2" {
				t.Errorf("%s, %q: %+v", awk[0], p, got)
			}
		}
	}
}

// TestSpringAwk: every awk doubles the escape of each $ (Spring resolves the value twice).
func TestSpringAwk(t *testing.T) {
	for _, awk := range awks(t) {
		for _, p := range nastyPasswords {
			want := strings.ReplaceAll(p, "$", "${benchrun.dollar}{benchrun.dollar}")
			if got := runAwk(t, awk, p, "", springAwk); got != want {
				t.Errorf("%s, %q: %q, want %q", awk[0], p, got, want)
			}
		}
	}
}

// TestProxyFailure: a proxy pod of this run that refused the password fails the target with
// the script's message; other runs' pods and other termination messages do not.
func TestProxyFailure(t *testing.T) {
	tg, _ := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy, Provider: v1alpha1.ProviderBuiltin,
		PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}}, opts(false))
	f, ok := tg.(Failer)
	if !ok {
		t.Fatal("the redis target is not a Failer")
	}
	pod := func(name, generation, message string, last bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Labels: map[string]string{naming.LabelRun: "run", naming.LabelGeneration: generation, naming.LabelComponent: "proxy"}}}
		term := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: message}}
		cs := corev1.ContainerStatus{Name: "proxy", State: term}
		if last {
			cs = corev1.ContainerStatus{Name: "proxy", LastTerminationState: term,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		return p
	}
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(
		pod("other-gen", "0", proxyRejectPrefix+"the Redis password is not valid UTF-8", false),
		pod("crashed", "1", "java.lang.OutOfMemoryError", false)).Build()
	if msg, err := f.Failure(ctx, c); err != nil || msg != "" {
		t.Fatalf("failure %q, %v", msg, err)
	}
	c = fake.NewClientBuilder().WithObjects(pod("run-g1-proxy-abc", "1", proxyRejectPrefix+"the Redis password is not valid UTF-8; x\n", true)).Build()
	if msg, err := f.Failure(ctx, c); err != nil || msg != "proxy pod run-g1-proxy-abc: the Redis password is not valid UTF-8; x" {
		t.Fatalf("failure %q, %v", msg, err)
	}
	ha, _ := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin}}, opts(false))
	if msg, err := ha.(Failer).Failure(ctx, c); err != nil || msg != "" {
		t.Fatalf("ha target failure %q, %v", msg, err)
	}
}

// TestProxyDeferred: only the proxy Deployment waits for the servers (Staged); no other
// object of a proxy, single or ha target does.
func TestProxyDeferred(t *testing.T) {
	for _, mode := range []v1alpha1.RedisMode{v1alpha1.RedisSingle, v1alpha1.RedisHA, v1alpha1.RedisProxy} {
		tg, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: mode, Provider: v1alpha1.ProviderBuiltin}}, opts(false))
		if err != nil {
			t.Fatal(err)
		}
		objs, _ := tg.Objects()
		var deferred []string
		for _, obj := range objs {
			if tg.(Staged).Deferred(obj) {
				deferred = append(deferred, obj.GetName())
			}
		}
		want := []string(nil)
		if mode == v1alpha1.RedisProxy {
			want = []string{"run-g1-proxy"}
		}
		if !slices.Equal(deferred, want) {
			t.Errorf("%s: deferred %v, want %v", mode, deferred, want)
		}
	}
}
