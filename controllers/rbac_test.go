package controllers

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/redisrole"
	"github.com/benchrun/benchrun/internal/runner"
)

// installedRBAC is the manager's RBAC as an installation ships it: its ClusterRole and
// ClusterRoleBinding, the redis-role sidecars' ClusterRole, the manager's
// --redis-role-clusterrole flag, and the manager-scope admission policy and its binding.
type installedRBAC struct {
	manager, redisRole rbacv1.ClusterRole
	binding            rbacv1.ClusterRoleBinding
	serviceAccount     string
	flag               string
	policy             []client.Object
}

// managerScopeFile is config/admission's manager-scope policy (the chart's is a copy).
const managerScopeFile = "manager_scope.yaml"

// admissionObjects decodes a ValidatingAdmissionPolicy and its binding from YAML documents,
// replacing old with new in each (the manager's user name).
func admissionObjects(t *testing.T, docs [][]byte, replace ...string) []client.Object {
	t.Helper()
	var objs []client.Object
	for _, doc := range docs {
		doc = []byte(strings.NewReplacer(replace...).Replace(string(doc)))
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		var obj client.Object
		switch meta.Kind {
		case "ValidatingAdmissionPolicy":
			obj = &admissionv1.ValidatingAdmissionPolicy{}
		case "ValidatingAdmissionPolicyBinding":
			obj = &admissionv1.ValidatingAdmissionPolicyBinding{}
		default:
			continue
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
	}
	if len(objs) != 2 {
		t.Fatalf("manager-scope: %d policy objects, want the policy and its binding", len(objs))
	}
	return objs
}

// yamlDocs splits a multi-document YAML file.
func yamlDocs(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var docs [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
	return docs
}

// readYAML reads the single object of a repository file.
func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// managerFlag is the value of --name=... in the manager container's args.
func managerFlag(d *appsv1.Deployment, name string) string {
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// kustomizeRBAC is config/ as `kustomize build config/default` installs it: the generated
// config/rbac/role.yaml, config/rbac/redis_role.yaml and role_binding.yaml with the
// namePrefix of config/default, and the flag of config/manager/manager.yaml.
func kustomizeRBAC(t *testing.T, ns string) installedRBAC {
	var k struct {
		NamePrefix string `json:"namePrefix"`
	}
	data, err := os.ReadFile(filepath.Join("..", "config", "default", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &k); err != nil || k.NamePrefix == "" {
		t.Fatalf("config/default namePrefix %q: %v", k.NamePrefix, err)
	}
	var in installedRBAC
	readYAML(t, filepath.Join("..", "config", "rbac", "role.yaml"), &in.manager)
	readYAML(t, filepath.Join("..", "config", "rbac", "redis_role.yaml"), &in.redisRole)
	readYAML(t, filepath.Join("..", "config", "rbac", "role_binding.yaml"), &in.binding)
	in.manager.Name = k.NamePrefix + in.manager.Name
	in.redisRole.Name = k.NamePrefix + in.redisRole.Name
	in.binding.Name = k.NamePrefix + in.binding.Name
	in.binding.RoleRef.Name = k.NamePrefix + in.binding.RoleRef.Name
	if len(in.binding.Subjects) != 1 {
		t.Fatalf("role_binding.yaml subjects %+v", in.binding.Subjects)
	}
	in.binding.Subjects[0].Name = k.NamePrefix + in.binding.Subjects[0].Name
	in.binding.Subjects[0].Namespace = ns
	in.serviceAccount = in.binding.Subjects[0].Name

	data, err = os.ReadFile(filepath.Join("..", "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range yamlDocs(t, data) {
		var d appsv1.Deployment
		if err := yaml.Unmarshal(doc, &d); err != nil {
			t.Fatalf("config/manager/manager.yaml: %v", err)
		}
		if d.Kind == "Deployment" {
			in.flag = managerFlag(&d, "redis-role-clusterrole")
			if sa := d.Spec.Template.Spec.ServiceAccountName; sa != in.serviceAccount {
				t.Errorf("manager.yaml runs as %q, role_binding.yaml binds %q", sa, in.serviceAccount)
			}
		}
	}
	data, err = os.ReadFile(filepath.Join("..", "config", "admission", managerScopeFile))
	if err != nil {
		t.Fatal(err)
	}
	// installed in namespace ns instead of config/default's benchrun-system
	in.policy = admissionObjects(t, yamlDocs(t, data), "system:serviceaccount:benchrun-system:"+in.serviceAccount,
		"system:serviceaccount:"+ns+":"+in.serviceAccount)
	return in
}

// chartRBAC is what `helm template` of charts/benchrun renders for a cluster-wide release
// rel in ns on a cluster serving ValidatingAdmissionPolicy.
func chartRBAC(t *testing.T, helm, rel, ns string) installedRBAC {
	out, err := exec.Command(helm, "template", rel, filepath.Join("..", "charts", "benchrun"), "-n", ns,
		"--set", "rbac.namespaced=false", "--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy").Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	var in installedRBAC
	roles := map[string]rbacv1.ClusterRole{}
	var scope [][]byte
	for _, doc := range yamlDocs(t, out) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict(doc, &r); err != nil {
				t.Fatal(err)
			}
			roles[r.Name] = r
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			if err := yaml.UnmarshalStrict(doc, &b); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(b.Name, "-manager") {
				in.binding = b
			}
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict(doc, &d); err != nil {
				t.Fatal(err)
			}
			in.flag = managerFlag(&d, "redis-role-clusterrole")
			in.serviceAccount = d.Spec.Template.Spec.ServiceAccountName
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			var m metav1.PartialObjectMetadata
			if err := yaml.Unmarshal(doc, &m); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(m.Name, "-manager-scope") {
				scope = append(scope, doc)
			}
		}
	}
	in.policy = admissionObjects(t, scope)
	in.manager = roles[in.binding.RoleRef.Name]
	in.redisRole = roles[in.flag]
	if in.manager.Name == "" || in.redisRole.Name == "" || len(in.binding.Subjects) != 1 || in.binding.Subjects[0].Name != in.serviceAccount {
		t.Fatalf("chart: manager ClusterRole %q, redis-role ClusterRole %q (flag %q), binding %+v, manager ServiceAccount %q",
			in.manager.Name, in.redisRole.Name, in.flag, in.binding, in.serviceAccount)
	}
	return in
}

// helmBinary is bin/helm (make tools), $HELM or helm on PATH; "" when there is none.
func helmBinary() string {
	for _, p := range []string{os.Getenv("HELM"), filepath.Join("..", "bin", "helm")} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	p, _ := exec.LookPath("helm")
	return p
}

// TestManagerRBAC runs the reconciler on the real kube-apiserver (RBAC authorization, as
// envtest starts it) as a ServiceAccount holding exactly the installed RBAC and under the
// installed manager-scope admission policy, for config/ (kustomize) and the Helm chart
// (cluster-wide): every target kind and the runners are created, run and cleaned up; the
// manager cannot patch pods, create a Role granting that, or bind any ClusterRole but the
// redis-role one, which lets the sidecars label their pods.
func TestManagerRBAC(t *testing.T) {
	installOperatorCRDs(t)
	t.Run("kustomize", func(t *testing.T) {
		e := newEnv(t)
		checkManagerRBAC(t, e, kustomizeRBAC(t, e.ns))
	})
	t.Run("chart", func(t *testing.T) {
		helm := helmBinary()
		if helm == "" {
			t.Skip("no helm (make tools builds bin/helm)")
		}
		e := newEnv(t)
		checkManagerRBAC(t, e, chartRBAC(t, helm, "rbactest", e.ns))
	})
}

// checkManagerRBAC installs in, then drives runs of every target kind through a reconciler
// impersonating the manager's ServiceAccount.
func checkManagerRBAC(t *testing.T, e *env, in installedRBAC) {
	if in.flag != in.redisRole.Name {
		t.Fatalf("manager --redis-role-clusterrole=%q, but the redis-role ClusterRole is %q", in.flag, in.redisRole.Name)
	}
	for _, rule := range in.manager.Rules {
		if slices.Contains(rule.Resources, "pods") && slices.Contains(rule.APIGroups, "") &&
			(slices.Contains(rule.Verbs, "patch") || slices.Contains(rule.Verbs, "update") || slices.Contains(rule.Verbs, "*")) {
			t.Errorf("manager ClusterRole %s may change pods: %+v", in.manager.Name, rule)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: in.serviceAccount, Namespace: e.ns}}
	objs := append([]client.Object{sa, &in.manager, &in.redisRole, &in.binding}, in.policy...)
	for _, obj := range objs {
		obj.SetResourceVersion("")
		if err := k8sClient.Create(e.ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, obj := range objs[1:] {
			_ = k8sClient.Delete(e.ctx, obj)
		}
	})
	user := fmt.Sprintf("system:serviceaccount:%s:%s", e.ns, in.serviceAccount)
	manager := impersonate(t, user)
	waitAllowed(t, manager, authorizationv1.ResourceAttributes{Namespace: e.ns, Verb: "create", Group: "apps", Resource: "statefulsets"})
	waitPolicy(t, manager, e.ns)

	e.r = e.reconciler(manager)
	e.r.APIReader = manager
	e.r.RedisRoleClusterRole = in.flag
	e.r.NetworkPolicies = &NetworkPolicyConfig{} // netpol.go: per-run policies, the API server's EndpointSlices
	if cidrs := e.r.NetworkPolicies.apiServer(e.ctx, manager); len(cidrs) == 0 {
		t.Error("the manager cannot read the kubernetes EndpointSlices (per-run NetworkPolicies)")
	}

	// What the manager must not do: patch pods, grant that through a Role, bind other roles.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: e.ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:t"}}}}
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		t.Fatal(err)
	}
	imagePatch := client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"c","image":"evil:t"}]}}`))
	if err := manager.Patch(e.ctx, pod.DeepCopy(), imagePatch); !kerrors.IsForbidden(err) {
		t.Errorf("manager patching a pod's image: want Forbidden, got %v", err)
	}
	podPatcher := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-patcher", Namespace: e.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "patch"}}}}
	if err := manager.Create(e.ctx, podPatcher); !kerrors.IsForbidden(err) {
		t.Errorf("manager creating a Role granting pods patch: want Forbidden, got %v", err)
	}
	// Bind only the redis-role ClusterRole: not cluster-admin, not a same-rules copy of it.
	// (Aggregated bootstrap roles such as edit are empty without a controller-manager, and a
	// role whose rules the manager holds anyway may be bound: those prove nothing here.)
	copyRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-pod-patcher"}, Rules: in.redisRole.Rules}
	if err := k8sClient.Create(e.ctx, copyRole); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(e.ctx, copyRole) })
	for _, other := range []string{"cluster-admin", copyRole.Name} {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bind-" + other, Namespace: e.ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: other},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: e.ns}}}
		if err := manager.Create(e.ctx, rb); !kerrors.IsForbidden(err) {
			t.Errorf("manager binding ClusterRole %s: want Forbidden, got %v", other, err)
		}
	}
	// The manager may create and delete Events (the recorder) and ConfigMaps (runs), not Secrets.
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "rbac-check", Namespace: e.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "victim", Namespace: e.ns}, Reason: "Check", Type: corev1.EventTypeNormal}
	if err := manager.Create(e.ctx, ev); err != nil {
		t.Errorf("manager creating an Event: %v", err)
	}
	var warnings corev1.EventList // as targetWarning reads them
	if err := manager.List(e.ctx, &warnings, client.InNamespace(e.ns), client.MatchingFields{"type": corev1.EventTypeWarning}); err != nil {
		t.Errorf("manager listing Warning Events: %v", err)
	}
	if err := manager.List(e.ctx, &corev1.SecretList{}, client.InNamespace(e.ns)); !kerrors.IsForbidden(err) {
		t.Errorf("manager listing Secrets: want Forbidden, got %v", err)
	}

	// The Redis operator would create pods as whatever a RedisReplication names: not through
	// the manager (the manager-scope policy).
	smuggled := operatorObject("RedisReplication")
	smuggled.SetNamespace(e.ns)
	smuggled.SetName("smuggled-g1-redis")
	smuggled.SetLabels(map[string]string{"bench.benchrun.io/run": "smuggled", "bench.benchrun.io/generation": "1"})
	smuggled.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkRun",
		Name: "smuggled", UID: "0b1c2d3e-0000-4000-8000-000000000002", Controller: ptr.To(true)}})
	smuggled.Object["spec"] = map[string]any{"clusterSize": int64(1), "serviceAccountName": "default",
		"kubernetesConfig": map[string]any{"image": "redis:t"}}
	if err := manager.Create(e.ctx, smuggled, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "only without a ServiceAccount") {
		t.Errorf("manager creating a RedisReplication running as another ServiceAccount: want refused, got %v", err)
	}

	// Every target kind, then the runners, collection and cleanup, as the manager.
	single := e.redisRun("single", 2)
	ha := e.redisRun("ha", 1)
	ha.Spec.Target.Redis = &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin,
		Replicas: ptr.To[int32](1), Sentinels: ptr.To[int32](3)}
	proxy := e.redisRun("proxy", 1)
	proxy.Spec.Target.Redis = &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy, Provider: v1alpha1.ProviderBuiltin, Replicas: ptr.To[int32](2)}
	hetu := e.redisRun("hetu", 1)
	hetu.Spec.Target = v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{
		Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin, Replicas: ptr.To[int32](1), Sentinels: ptr.To[int32](3)}}}}
	hetu.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "hello", Type: v1alpha1.ScenarioHeTuHelloWorld}}
	operator := e.redisRun("ot", 1)
	operator.Spec.Target.Redis = &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderRedisOperator,
		Replicas: ptr.To[int32](2), Sentinels: ptr.To[int32](3)}
	external := e.redisRun("external", 1)
	external.Spec.Target = v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis, Addresses: []string{"redis.example:6379"}}}

	for _, run := range []*v1alpha1.BenchmarkRun{single, ha, proxy, hetu, operator, external} {
		e.create(run)
		if run.Spec.Target.External != nil {
			run = e.until(run.Name, v1alpha1.PhaseStarting) // nothing to deploy
		} else {
			run = e.until(run.Name, v1alpha1.PhaseProvisioning)
			if !e.exists(&corev1.ConfigMap{}, targetName(run, "redis-config")) {
				t.Fatalf("%s: no target objects", run.Name)
			}
		}
		if run.Status.Target.Provider == "redis-operator" {
			if !e.exists(operatorObject("RedisReplication"), targetName(run, "redis")) || !e.exists(operatorObject("RedisSentinel"), targetName(run, "redis")) {
				t.Fatalf("%s: no redis-operator resources", run.Name)
			}
			operatorStatefulSets(t, e, run)
		}
		if r := run.Spec.Target.Redis; (r != nil && r.Mode != v1alpha1.RedisSingle) || run.Spec.Target.HeTu != nil {
			if run.Status.Target.Provider != "redis-operator" {
				checkSidecarAccess(t, e, run, in.redisRole.Name)
			}
		}
		e.targetReady(run.Name)
		run = e.until(run.Name, v1alpha1.PhaseStarting)
		var role rbacv1.Role
		if !e.exists(&role, runner.AccountName(prefix(run, run.Generation))) || !e.exists(&batchv1.Job{}, runner.JobName(prefix(run, run.Generation))) {
			t.Fatalf("%s: no runner Role or Job", run.Name)
		}
		e.readyRunners(run)
		run = e.until(run.Name, v1alpha1.PhaseRunning)
		for i := range int(run.Status.Runners.Desired) {
			e.finishRunner(run, i, 10)
		}
		run = e.until(run.Name, v1alpha1.PhaseSucceeded)
		e.reconcile(run.Name) // cleanup (policy OnSuccess)
		if e.exists(&batchv1.Job{}, runner.JobName(prefix(run, run.Generation))) || e.exists(&rbacv1.Role{}, runner.AccountName(prefix(run, run.Generation))) {
			t.Fatalf("%s: runner objects not cleaned up", run.Name)
		}
		if e.exists(&rbacv1.RoleBinding{}, targetName(run, "redis-role")) || e.exists(&corev1.Service{}, targetName(run, "redis-master")) ||
			e.exists(operatorObject("RedisReplication"), targetName(run, "redis")) {
			t.Fatalf("%s: target objects not cleaned up", run.Name)
		}
		if !e.exists(&corev1.ConfigMap{}, run.Status.Report.ConfigMapName) {
			t.Fatalf("%s: no report", run.Name)
		}
	}
}

// impersonate is a client acting as user (the test's own client is system:masters).
func impersonate(t *testing.T, user string) client.Client {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user}
	cl, err := client.New(c, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// waitAllowed waits until c may do attrs (the API server's RBAC cache follows new bindings).
func waitAllowed(t *testing.T, c client.Client, attrs authorizationv1.ResourceAttributes) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}
		if err := c.Create(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not allowed after 20s: %+v (%s)", attrs, r.Status.Reason)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkSidecarAccess: the redis-role sidecars' ServiceAccount, bound by the manager to the
// redis-role ClusterRole, may read and label a Redis pod of its run (as the sidecar does) but
// nothing in other namespaces.
func checkSidecarAccess(t *testing.T, e *env, run *v1alpha1.BenchmarkRun, clusterRole string) {
	t.Helper()
	var rb rbacv1.RoleBinding
	if !e.exists(&rb, targetName(run, "redis-role")) || rb.RoleRef.Kind != "ClusterRole" || rb.RoleRef.Name != clusterRole {
		t.Fatalf("%s: redis-role RoleBinding %+v", run.Name, rb.RoleRef)
	}
	if e.exists(&rbacv1.Role{}, targetName(run, "redis-role")) {
		t.Fatalf("%s: a per-run redis-role Role", run.Name)
	}
	var sts appsv1.StatefulSet
	if !e.exists(&sts, targetName(run, "redis-replica")) || sts.Spec.Template.Spec.ServiceAccountName != rb.Subjects[0].Name {
		t.Fatalf("%s: replica StatefulSet does not run as the bound ServiceAccount", run.Name)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sts.Name + "-0", Namespace: e.ns, Labels: sts.Spec.Template.Labels},
		Spec: sts.Spec.Template.Spec}
	if err := k8sClient.Create(e.ctx, pod); err != nil {
		t.Fatal(err)
	}
	sidecar := impersonate(t, fmt.Sprintf("system:serviceaccount:%s:%s", e.ns, rb.Subjects[0].Name))
	waitAllowed(t, sidecar, authorizationv1.ResourceAttributes{Namespace: e.ns, Verb: "patch", Resource: "pods", Name: pod.Name})
	if err := sidecar.Get(e.ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); !kerrors.IsForbidden(err) {
		t.Errorf("%s: sidecar reading a pod (it only patches its own): want Forbidden, got %v", run.Name, err)
	}
	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+redisrole.Label+`":"master"}}}`))
	if err := sidecar.Patch(e.ctx, pod.DeepCopy(), label); err != nil {
		t.Errorf("%s: sidecar labelling its pod: %v", run.Name, err)
	}
	if err := sidecar.List(e.ctx, &corev1.PodList{}, client.InNamespace("default")); !kerrors.IsForbidden(err) {
		t.Errorf("%s: sidecar listing pods of another namespace: want Forbidden, got %v", run.Name, err)
	}
	if err := k8sClient.Delete(e.ctx, pod); err != nil {
		t.Fatal(err)
	}
}

// operatorStatefulSets creates what the redis-operator would: StatefulSets <name> and
// <name>-sentinel (envtest runs no operator).
func operatorStatefulSets(t *testing.T, e *env, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	for _, name := range []string{targetName(run, "redis"), targetName(run, "redis") + "-sentinel"} {
		sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: "redis:t"}}}}}}
		if err := k8sClient.Create(e.ctx, sts); err != nil {
			t.Fatal(err)
		}
	}
}

// waitPolicy waits until the manager-scope policy refuses the manager a ConfigMap of no run
// in ns (a dry-run: nothing is created).
func waitPolicy(t *testing.T, manager client.Client, ns string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe", Namespace: ns}}
		err := manager.Create(t.Context(), cm, client.DryRunAll)
		if kerrors.IsInvalid(err) || kerrors.IsForbidden(err) {
			if !strings.Contains(err.Error(), "only objects of a run") {
				t.Fatalf("policy probe: %v", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the manager-scope policy is not in force after 30s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
