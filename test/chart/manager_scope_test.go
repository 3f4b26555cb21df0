package chart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/suite"
)

// vapAPI makes helm template render as for a cluster serving ValidatingAdmissionPolicy.
const vapAPI = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy"

// installScope renders the chart cluster-wide as release "scope" in ns (VAP served,
// extra protected namespace team-secrets) and creates for real its RBAC (hooks aside), its
// ServiceAccounts and the manager-scope policy; all deleted when t ends. It returns the
// manager's user name.
func installScope(ctx context.Context, t *testing.T, ns string) string {
	t.Helper()
	out, err := renderRelease(t, "scope", ns, "--set", "rbac.namespaced=false",
		"--set", "rbac.clusterWide.protectedNamespaces={team-secrets}", "--api-versions", vapAPI)
	if err != nil {
		t.Fatal(err)
	}
	sa := ""
	for _, o := range objects(t, out) {
		switch o.GetKind() {
		case "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "ServiceAccount":
			if o.GetAnnotations()["helm.sh/hook"] != "" {
				continue
			}
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			if !strings.HasSuffix(o.GetName(), "-manager-scope") {
				continue
			}
		case "Deployment":
			sa = nested(o, "spec", "template", "spec", "serviceAccountName").(string)
			continue
		default:
			continue
		}
		if o.GetNamespace() == "" && o.GetKind() != "ClusterRole" && o.GetKind() != "ClusterRoleBinding" &&
			!strings.HasPrefix(o.GetKind(), "Validating") {
			o.SetNamespace(ns)
		}
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), o) })
	}
	return "system:serviceaccount:" + ns + ":" + sa
}

// impersonated is a client acting as user.
func impersonated(t *testing.T, user string) client.Client {
	t.Helper()
	c := rest.CopyConfig(restCfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user}
	s := clientgoscheme.Scheme
	cl, err := client.New(c, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// runMeta is the metadata benchrun gives an object of run "run", generation 1: the run
// labels and a controller reference to the BenchmarkRun.
func runMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: naming.RunLabels("run", 1),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkRun", Name: "run",
			UID: types.UID("0b1c2d3e-0000-4000-8000-000000000001"), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}}
}

// refused asserts that err is the API server's refusal (RBAC or the policy) containing want.
func refused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
		t.Errorf("%s: want refused, got %v", what, err)
		return
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: refused, but not for %q: %v", what, want, err)
	}
}

// TestManagerScope: the chart's cluster-wide install (its RBAC and manager-scope policy, as
// helm renders them for a cluster serving ValidatingAdmissionPolicy) on the real API server,
// the manager's ServiceAccount impersonated. Its token cannot patch a kube-system ConfigMap
// (nor one of a configured protected namespace), create a Job running as another
// ServiceAccount, delete an unrelated pod, create a RoleBinding to cluster-admin, take over a
// ConfigMap by labelling it, create a Role wider than the runners', or run a privileged or
// host pod; the objects benchrun creates for a run (internal/runner's exact shapes) are
// still allowed, and so are the deletes and updates of a run's objects.
func TestManagerScope(t *testing.T) {
	ctx := context.Background()
	sys, work := "scope-sys", "scope-work"
	for _, ns := range []string{sys, work, "team-secrets"} {
		ensureNamespace(ctx, t, ns)
	}
	user := installScope(ctx, t, sys)
	mgr := impersonated(t, user)

	// the policy takes effect within seconds of its creation
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := mgr.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: work, Name: "probe"}}, client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "only objects of a run") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("manager-scope policy not in force after 30s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// objects that exist already (created by an administrator)
	victims := []client.Object{
		&corev1.ConfigMap{ObjectMeta: runMeta("kube-system", "scope-victim"), Data: map[string]string{"k": "v"}},
		&corev1.ConfigMap{ObjectMeta: runMeta("team-secrets", "scope-victim"), Data: map[string]string{"k": "v"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: work, Name: "app-config"}, Data: map[string]string{"k": "v"}},
		restrictedPod(metav1.ObjectMeta{Namespace: work, Name: "bystander"}),
		restrictedPod(runMeta(work, "run-g1-redis-master-0")),
	}
	for _, o := range victims {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), o) })
	}
	labels := client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"evil"}}`))
	refused(t, "patching a kube-system ConfigMap", mgr.Patch(ctx, victims[0], labels), "protected namespace kube-system")
	refused(t, "patching a ConfigMap of a protected namespace", mgr.Patch(ctx, victims[1], labels), "protected namespace team-secrets")
	takeover := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"bench.benchrun.io/run":"run","bench.benchrun.io/generation":"1"}}}`))
	refused(t, "labelling an unrelated ConfigMap to take it over", mgr.Patch(ctx, victims[2], takeover), "only objects of a run")
	refused(t, "deleting an unrelated pod", mgr.Delete(ctx, victims[3]), "only objects of a run")

	o := runner.Options{Namespace: work, Prefix: naming.Prefix("run", 1), Labels: naming.RunLabels("run", 1), Image: "runner:t",
		Spec: v1alpha1.RunnerSpec{Parallelism: 2}}
	owned := func(obj client.Object) client.Object {
		m := runMeta(work, obj.GetName())
		obj.SetOwnerReferences(m.OwnerReferences)
		return obj
	}
	job := runner.Job(o)
	job.Spec.Template.Spec.ServiceAccountName = "default"
	refused(t, "a Job running as the namespace's default ServiceAccount", mgr.Create(ctx, owned(job), client.DryRunAll), "only as the ServiceAccounts it creates")
	job.Spec.Template.Spec.ServiceAccountName = "build-robot"
	refused(t, "a Job running as another ServiceAccount", mgr.Create(ctx, owned(job), client.DryRunAll), "only as the ServiceAccounts it creates")
	admin := &rbacv1.RoleBinding{ObjectMeta: runMeta(work, "run-g1-admin"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "run-g1-runner", Namespace: work}}}
	refused(t, "a RoleBinding to cluster-admin", mgr.Create(ctx, admin), "")
	wide := &rbacv1.Role{ObjectMeta: runMeta(work, "run-g1-runner"), Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "update"}}}}
	refused(t, "a runner Role on every ConfigMap", mgr.Create(ctx, wide), "only the runners Role")
	dep := &appsv1.Deployment{ObjectMeta: runMeta(work, "run-g1-custom"), Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: naming.RunLabels("run", 1)},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: naming.RunLabels("run", 1)},
			Spec: restrictedPod(metav1.ObjectMeta{}).Spec}}}
	refused(t, "a Deployment with the default ServiceAccount's token", mgr.Create(ctx, dep, client.DryRunAll), "without a token")
	dep.Spec.Template.Spec.AutomountServiceAccountToken = ptr.To(false)
	dep.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	refused(t, "a Deployment mounting the node's filesystem", mgr.Create(ctx, dep, client.DryRunAll), "hostPath")
	dep.Spec.Template.Spec.Volumes = nil
	dep.OwnerReferences = nil
	refused(t, "a Deployment owned by no BenchmarkRun", mgr.Create(ctx, dep, client.DryRunAll), "controller-owned by a BenchmarkRun")

	// what benchrun creates for a run: the runners' account, Role, binding, ConfigMaps and Job
	for _, obj := range append(runner.Access(o), runner.Barrier(o), runner.StateConfigMaps(o, []string{"a", "b"})[0], runner.Job(o)) {
		if err := mgr.Create(ctx, owned(obj)); err != nil {
			t.Errorf("the manager creating the run's %T %s: %v", obj, obj.GetName(), err)
		}
	}
	// a suite's report ConfigMap: its run label (suite.ReportRunLabel) is no run's
	suiteReport := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: work, Name: "cmp-report", Labels: map[string]string{
		naming.LabelRun: suite.ReportRunLabel("cmp"), naming.LabelGeneration: "1", naming.LabelComponent: naming.ComponentReport}}}
	if err := mgr.Create(ctx, suiteReport, client.DryRunAll); err != nil {
		t.Errorf("the manager creating a suite's report ConfigMap: %v", err)
	}
	barrier := runner.Barrier(o)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(barrier), barrier); err != nil {
		t.Fatal(err)
	}
	barrier.Data = map[string]string{"startAt": "2026-11-27T03:00:00Z"}
	if err := mgr.Update(ctx, barrier); err != nil {
		t.Errorf("the manager releasing the run's barrier: %v", err)
	}
	if err := mgr.Delete(ctx, victims[4], client.GracePeriodSeconds(0)); err != nil {
		t.Errorf("the manager deleting a pod of the run (kill fault): %v", err)
	}
	if err := mgr.Delete(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: work, Name: runner.JobName(o.Prefix)}},
		client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Errorf("the manager deleting the run's Job: %v", err)
	}
	checkScopeCopy(t)
}

// restrictedPod is a pod passing the restricted Pod Security Standard.
func restrictedPod(meta metav1.ObjectMeta) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{SecurityContext: naming.PodSecurityContext(),
		Containers: []corev1.Container{{Name: "c", Image: "busybox:t", SecurityContext: naming.ContainerSecurityContext()}}}}
}

// checkScopeCopy: the chart installs the same policy file as config/admission.
func checkScopeCopy(t *testing.T) {
	t.Helper()
	a, err := os.ReadFile(filepath.Join(repoRoot, "config", "admission", "manager_scope.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(chartDir, "files", "manager-scope.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Error("charts/benchrun/files/manager-scope.yaml differs from config/admission/manager_scope.yaml: copy it")
	}
}

// TestSecureMetricsChart: metrics.secure passes --metrics-secure, grants the manager
// tokenreviews and subjectaccessreviews create, ships a metrics-reader ClusterRole, and the
// ServiceMonitor scrapes over HTTPS with Prometheus's token (the Service's scrape
// annotations say https when there is no ServiceMonitor); without it, none of that.
func TestSecureMetricsChart(t *testing.T) {
	sm := "monitoring.coreos.com/v1/ServiceMonitor"
	for _, secure := range []bool{true, false} {
		flag := "metrics.secure=false"
		if secure {
			flag = "metrics.secure=true"
		}
		for _, withSM := range []bool{true, false} {
			args := []string{"--set", flag}
			if withSM {
				args = append(args, "--set", "metrics.serviceMonitor.enabled=true", "--api-versions", sm)
			}
			out, err := render(t, "x", args...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objects(t, out) {
				switch {
				case o.GetKind() == "Deployment" && contains(fmt.Sprint(nested(o, "spec", "template", "spec", "containers")), "--metrics-secure"):
					got = append(got, "flag")
				case o.GetKind() == "ClusterRole" && o.GetName() == "rel-benchrun-metrics-auth":
					got = append(got, "auth")
				case o.GetKind() == "ClusterRole" && o.GetName() == "rel-benchrun-metrics-reader":
					got = append(got, "reader")
				case o.GetKind() == "ServiceMonitor" && nested(o, "spec", "endpoints").([]any)[0].(map[string]any)["scheme"] == "https":
					got = append(got, "sm-https")
				case o.GetKind() == "Service" && o.GetAnnotations()["prometheus.io/scheme"] == "https":
					got = append(got, "annotation-https")
				}
			}
			want := map[bool][]string{true: {"auth", "reader", "flag"}, false: nil}[secure]
			if secure && withSM {
				want = append(want, "sm-https")
			} else if secure {
				want = append(want, "annotation-https")
			}
			slices.Sort(got)
			slices.Sort(want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, ServiceMonitor %v: rendered %v, want %v", flag, withSM, got, want)
			}
		}
	}
}
