package chart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// access asks the API server whether user may do verb on the resource.
func access(ctx context.Context, t *testing.T, user string, a authorizationv1.ResourceAttributes) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: []string{"system:serviceaccounts", "system:authenticated"}, ResourceAttributes: &a}}
	if err := k8s.Create(ctx, sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}

// TestNamespacedRBAC installs the RBAC of a namespaced release for real and asks the API
// server's authorizer what the manager's ServiceAccount may do: everything a run needs in the
// watched namespaces, nothing in others nor cluster-wide except reading nodes (kubelet
// metrics) — and in cluster mode the same rights everywhere.
func TestNamespacedRBAC(t *testing.T) {
	ctx := context.Background()
	sys, watched, other := "rbac-sys", []string{"rbac-a", "rbac-b"}, "rbac-other"
	for _, ns := range append(watched, sys, other) {
		ensureNamespace(ctx, t, ns)
	}
	out, err := render(t, sys, "--set", "rbac.namespaced=true", "--set", "watchNamespaces={rbac-a,rbac-b}")
	if err != nil {
		t.Fatal(err)
	}
	var sa string
	for _, o := range objects(t, out) {
		switch o.GetKind() {
		case "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
			if o.GetAnnotations()["helm.sh/hook"] != "" {
				continue // the test and upgrade hooks' own accounts
			}
			if o.GetKind() == "ClusterRoleBinding" && o.GetName() == "rel-benchrun-manager" {
				t.Errorf("namespaced install renders the cluster-wide manager binding")
			}
			if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
			}
		case "Deployment":
			args := fmt.Sprint(nested(o, "spec", "template", "spec", "containers"))
			if !contains(args, "--watch-namespaces=rbac-a,rbac-b") {
				t.Errorf("manager args lack --watch-namespaces=rbac-a,rbac-b: %s", args)
			}
			sa = fmt.Sprint(nested(o, "spec", "template", "spec", "serviceAccountName"))
		}
	}
	user := "system:serviceaccount:" + sys + ":" + sa
	ra := func(ns, verb, group, resource, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Name: name}
	}
	for _, ns := range watched {
		for _, a := range []authorizationv1.ResourceAttributes{
			ra(ns, "create", "apps", "statefulsets", ""),
			ra(ns, "watch", "bench.benchrun.io", "benchmarkruns", ""),
			ra(ns, "patch", "bench.benchrun.io", "benchmarkruns", ""),
			ra(ns, "create", "batch", "jobs", ""),
			ra(ns, "create", "rbac.authorization.k8s.io", "roles", ""),
			ra(ns, "bind", "rbac.authorization.k8s.io", "clusterroles", "rel-benchrun-redis-role"),
		} {
			if !access(ctx, t, user, a) {
				t.Errorf("manager may not %s %s/%s in watched namespace %s", a.Verb, a.Group, a.Resource, ns)
			}
		}
	}
	for _, a := range []authorizationv1.ResourceAttributes{
		ra(other, "create", "apps", "statefulsets", ""),
		ra(other, "list", "bench.benchrun.io", "benchmarkruns", ""),
		ra("", "list", "bench.benchrun.io", "benchmarkruns", ""),
		ra("", "list", "", "pods", ""),
		ra(watched[0], "get", "", "secrets", ""),
		ra(watched[0], "patch", "", "pods", ""),
		ra(watched[0], "bind", "rbac.authorization.k8s.io", "clusterroles", "cluster-admin"),
		ra("", "list", "", "nodes", ""),
	} {
		if access(ctx, t, user, a) {
			t.Errorf("namespaced manager may %s %s/%s %s in namespace %q", a.Verb, a.Group, a.Resource, a.Name, a.Namespace)
		}
	}
	if !access(ctx, t, user, ra("", "get", "", "nodes", "n1")) {
		t.Error("namespaced manager with kubelet metrics may not get nodes")
	}
	checkKubeletReader(ctx, t, sys, user)
}

// checkKubeletReader: the kubelets' nodes/metrics is the kubelet reader's right, not the
// manager's (its token never goes to a kubelet); the manager may only request tokens of the
// reader, which may do nothing else.
func checkKubeletReader(ctx context.Context, t *testing.T, ns, manager string) {
	t.Helper()
	metrics := authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "metrics", Name: "n1"}
	if access(ctx, t, manager, metrics) {
		t.Error("the manager may get nodes/metrics itself")
	}
	reader := "system:serviceaccount:" + ns + ":rel-benchrun-kubelet-reader"
	if !access(ctx, t, reader, metrics) {
		t.Error("the kubelet reader may not get nodes/metrics")
	}
	token := func(name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: name}
	}
	if !access(ctx, t, manager, token("rel-benchrun-kubelet-reader")) {
		t.Error("the manager may not request the kubelet reader's tokens")
	}
	for _, a := range []authorizationv1.ResourceAttributes{token("rel-benchrun-manager"), token("default"),
		{Verb: "get", Resource: "nodes", Subresource: "proxy", Name: "n1"}, {Verb: "list", Resource: "pods"}} {
		if access(ctx, t, manager, a) && a.Subresource == "token" {
			t.Errorf("the manager may request tokens of %s", a.Name)
		}
		if access(ctx, t, reader, a) {
			t.Errorf("the kubelet reader may %s %s/%s %s", a.Verb, a.Resource, a.Subresource, a.Name)
		}
	}
}

// nested is a field of an unstructured object.
func nested(o *unstructured.Unstructured, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	return v
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestNetworkPolicy: the runner policy selects the runner pods, admits no ingress, and lets
// them reach the run's pods, DNS, the API server CIDRs and the extra egress only.
func TestNetworkPolicy(t *testing.T) {
	out, err := render(t, "np", "--set", "networkPolicy.enabled=true", "--set", "networkPolicy.apiServerCIDRs={10.0.0.1/32}",
		"--set", "networkPolicy.extraEgress[0].ports[0].port=6380", "--set", "networkPolicy.namespaces={np-a}")
	if err != nil {
		t.Fatal(err)
	}
	var np networkingv1.NetworkPolicy
	for _, o := range objects(t, out) {
		if o.GetKind() == "NetworkPolicy" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &np); err != nil {
				t.Fatal(err)
			}
		}
	}
	if np.Namespace != "np-a" || np.Spec.PodSelector.MatchLabels["bench.benchrun.io/component"] != "runner" || len(np.Spec.Ingress) != 0 ||
		len(np.Spec.PolicyTypes) != 2 {
		t.Fatalf("policy %s/%s: %+v", np.Namespace, np.Name, np.Spec)
	}
	eg := np.Spec.Egress
	if len(eg) != 4 || eg[0].To[0].PodSelector.MatchExpressions[0].Key != "bench.benchrun.io/run" ||
		eg[1].Ports[0].Port.IntValue() != 53 || eg[2].To[0].IPBlock.CIDR != "10.0.0.1/32" || eg[3].Ports[0].Port.IntValue() != 6380 {
		t.Errorf("egress rules: %+v", eg)
	}
	if out, err := render(t, "np"); err != nil || strings.Contains(string(out), "kind: NetworkPolicy") {
		t.Errorf("NetworkPolicy rendered by default (err %v)", err)
	}
}

// config/manager (kustomize) names the same images as the chart's defaults: the manager at
// the chart's appVersion and the same --*-image flags.
func TestKustomizeImagesMatchChart(t *testing.T) {
	out, err := render(t, "x")
	if err != nil {
		t.Fatal(err)
	}
	var chartImage string
	var chartFlags []string
	for _, o := range objects(t, out) {
		if o.GetKind() != "Deployment" {
			continue
		}
		c := nested(o, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
		chartImage = c["image"].(string)
		for _, a := range c["args"].([]any) {
			if s := a.(string); strings.HasSuffix(strings.SplitN(s, "=", 2)[0], "-image") {
				chartFlags = append(chartFlags, s)
			}
		}
	}
	manifest, err := os.ReadFile(filepath.Join(repoRoot, "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manifest), "image: "+chartImage+"\n") {
		t.Errorf("config/manager/manager.yaml does not run the chart's manager image %s", chartImage)
	}
	for _, f := range chartFlags {
		if !strings.Contains(string(manifest), `"`+f+`"`) {
			t.Errorf("config/manager/manager.yaml lacks the chart's %s", f)
		}
	}
	if len(chartFlags) != 5 {
		t.Errorf("chart image flags: %v", chartFlags)
	}
}
