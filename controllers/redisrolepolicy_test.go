package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/redisrole"
	"github.com/benchrun/benchrun/internal/target"
)

// redisRolePods creates, as the operator would, the redis-role ServiceAccount and RoleBinding
// of an ha target of run generation run-g1 (bound to clusterRole), then one pod per
// StatefulSet of its Redis servers, named like the StatefulSet controller names them (-0).
// It returns the pods by StatefulSet name suffix (redis-master, redis-replica).
func (e *env) redisRolePods(run, clusterRole string) map[string]*corev1.Pod {
	e.t.Helper()
	o := target.Options{Namespace: e.ns, Prefix: naming.Prefix(run, 1), Labels: naming.RunLabels(run, 1),
		Images: target.Images{Redis: "redis:t", Agent: "runner:t"}, RedisRoleClusterRole: clusterRole}
	tg, err := target.New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin}}, o)
	if err != nil {
		e.t.Fatal(err)
	}
	objs, err := tg.Objects()
	if err != nil {
		e.t.Fatal(err)
	}
	pods := map[string]*corev1.Pod{}
	for _, obj := range objs {
		switch w := obj.(type) {
		case *corev1.ServiceAccount, *rbacv1.RoleBinding:
			if err := k8sClient.Create(e.ctx, obj); err != nil {
				e.t.Fatal(err)
			}
		case *appsv1.StatefulSet:
			if w.Spec.Template.Spec.ServiceAccountName == "" {
				continue // the sentinels
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-0", Namespace: e.ns, Labels: w.Spec.Template.Labels},
				Spec: w.Spec.Template.Spec}
			if err := k8sClient.Create(e.ctx, pod); err != nil {
				e.t.Fatal(err)
			}
			pods[strings.TrimPrefix(w.Name, o.Prefix+"-")] = pod
		}
	}
	return pods
}

// redisRoleClient acts as run generation run-g1's redis-role account from pod (its
// pod-bound token's user info; no pod name when pod is "").
func (e *env) redisRoleClient(run, pod string) client.Client {
	e.t.Helper()
	sa := naming.Name(naming.Prefix(run, 1), "redis-role")
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", e.ns, sa),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + e.ns, "system:authenticated"}}
	if pod != "" {
		c.Impersonate.Extra = map[string][]string{podNameExtra: {pod}}
	}
	cl, err := client.New(c, client.Options{Scheme: scheme})
	if err != nil {
		e.t.Fatal(err)
	}
	return cl
}

// mergePatch applies a strategic merge patch (a JSON merge patch for metadata) to pod as c.
func mergePatch(ctx context.Context, c client.Client, pod *corev1.Pod, patch string) error {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	return c.Patch(ctx, p, client.RawPatch(types.StrategicMergePatchType, []byte(patch)))
}

// roleLabelPatch is the patch the sidecar sends (redisrole.Follower.label).
func roleLabelPatch(role string) string {
	return fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, redisrole.Label, role)
}

// deniedByPolicy tells whether err is a denial of the redis-role policy (not of RBAC).
func deniedByPolicy(err error) bool {
	return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy") && strings.Contains(err.Error(), "redis-role")
}

// TestRedisRolePolicy: with config/rbac/redis_role.yaml bound as the operator binds it and
// config/admission/redis_role.yaml on the real kube-apiserver, a run's redis-role account (as
// its pod-bound token authenticates) may set the role label of its own pod, and nothing else:
// not an image, another label, an annotation, a bogus role, another pod of its run, a pod of
// another run, an unrelated pod, no create or delete, not without a pod-bound token. Users are
// not concerned. The chart installs the same file.
func TestRedisRolePolicy(t *testing.T) {
	checkFileCopy(t, filepath.Join("..", "config", "admission", "redis_role.yaml"), filepath.Join("..", "charts", "benchrun", "files", "redis-role-policy.yaml"))
	policy, binding := installAdmissionPolicy(t, "redis_role.yaml")
	t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), binding)
		_ = k8sClient.Delete(context.Background(), policy)
	})
	e := newEnv(t)
	var role rbacv1.ClusterRole
	readYAML(t, filepath.Join("..", "config", "rbac", "redis_role.yaml"), &role)
	role.Name = e.ns + "-redis-role"
	if err := k8sClient.Create(e.ctx, &role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), &role) })
	own := e.redisRolePods("run", role.Name)
	other := e.redisRolePods("other", role.Name)
	unrelated := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: e.ns, Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:t"}}, AutomountServiceAccountToken: ptr.To(false)}}
	if err := k8sClient.Create(e.ctx, unrelated); err != nil {
		t.Fatal(err)
	}
	master, replica := own["redis-master"], own["redis-replica"]
	sidecar := e.redisRoleClient("run", master.Name)

	// until the binding and the policy are in force: RBAC allows, the policy denies
	deadline := time.Now().Add(30 * time.Second)
	err := mergePatch(e.ctx, sidecar, unrelated, roleLabelPatch("master"))
	for !deniedByPolicy(err) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		err = mergePatch(e.ctx, sidecar, unrelated, roleLabelPatch("master"))
	}
	if !deniedByPolicy(err) {
		t.Fatalf("the sidecar labelling an unrelated pod: want a redis-role policy denial, got %v", err)
	}
	// what the sidecar does: its own pod's role label, every value redisrole.Decide gives (none:
	// a deposed master drops the label the master Service selects)
	for _, r := range []string{redisrole.Replica, redisrole.None, redisrole.Master} {
		if err := mergePatch(e.ctx, sidecar, master, roleLabelPatch(r)); err != nil {
			t.Fatalf("the sidecar setting its own pod's role label to %s: %v", r, err)
		}
	}
	var got corev1.Pod
	if err := k8sClient.Get(e.ctx, client.ObjectKeyFromObject(master), &got); err != nil || got.Labels[redisrole.Label] != "master" {
		t.Fatalf("role label %q: %v", got.Labels[redisrole.Label], err)
	}
	image := `{"spec":{"containers":[{"name":"redis","image":"evil:t"}]}}`
	refused := map[string]struct {
		c     client.Client
		pod   *corev1.Pod
		patch string
	}{
		"its own pod's image":              {sidecar, master, image},
		"its own pod's image and role":     {sidecar, master, strings.Replace(image, `{"spec"`, `{"metadata":{"labels":{"`+redisrole.Label+`":"replica"}},"spec"`, 1)},
		"another label of its own pod":     {sidecar, master, fmt.Sprintf(`{"metadata":{"labels":{%q:"x"}}}`, naming.LabelComponent)},
		"removing a label of its own pod":  {sidecar, master, fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, naming.LabelRun)},
		"an annotation of its own pod":     {sidecar, master, `{"metadata":{"annotations":{"a":"b"}}}`},
		"a role other than master/replica": {sidecar, master, roleLabelPatch("owner")},
		"another pod of its run":           {sidecar, replica, roleLabelPatch("master")},
		"a pod of another run":             {e.redisRoleClient("run", other["redis-master"].Name), other["redis-master"], roleLabelPatch("replica")},
		"an unrelated pod":                 {e.redisRoleClient("run", unrelated.Name), unrelated, roleLabelPatch("master")},
		"without a pod-bound token":        {e.redisRoleClient("run", ""), master, roleLabelPatch("replica")},
	}
	for name, c := range refused {
		if err := mergePatch(e.ctx, c.c, c.pod, c.patch); !deniedByPolicy(err) {
			t.Errorf("the sidecar changing %s: want a redis-role policy denial, got %v", name, err)
		}
	}
	if err := sidecar.Delete(e.ctx, replica); err == nil {
		t.Error("the sidecar deleted a pod")
	}
	// the other run's account, from its own pod, may label that pod
	if err := mergePatch(e.ctx, e.redisRoleClient("other", other["redis-master"].Name), other["redis-master"], roleLabelPatch("replica")); err != nil {
		t.Errorf("another run's sidecar labelling its own pod: %v", err)
	}
	// users are not concerned
	if err := mergePatch(e.ctx, k8sClient, master, `{"metadata":{"annotations":{"a":"b"}}}`); err != nil {
		t.Errorf("a user annotating a pod: %v", err)
	}
}

// checkFileCopy fails unless the chart's copy b is identical to a.
func checkFileCopy(t *testing.T, a, b string) {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(da) != string(db) {
		t.Fatalf("%s differs from %s: copy it", b, a)
	}
}

// TestRedisRolePolicyChart: the chart renders the policy and its binding, named for the
// release, the binding naming the policy, with every validation of the file.
func TestRedisRolePolicyChart(t *testing.T) {
	policy, binding := renderedPolicy(t, "templates/redis-role-policy.yaml")
	if policy.Name != "rel-benchrun-redis-role" || binding.Spec.PolicyName != policy.Name || len(policy.Spec.Validations) != 4 {
		t.Fatalf("chart: policy %q with %d validations, binding to %q", policy.Name, len(policy.Spec.Validations), binding.Spec.PolicyName)
	}
}
