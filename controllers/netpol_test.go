package controllers

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/runner"
)

// selects tells whether sel matches set.
func selects(t *testing.T, sel *metav1.LabelSelector, set map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return s.Matches(labels.Set(set))
}

// TestNetworkPolicies: with --network-policies the manager creates, before the target, a
// run's two NetworkPolicies on the real API server (which validates them), owned by the run;
// checked against the pod labels of the StatefulSets and runner Job it creates: the runner
// policy selects the runner pods only, denies them all ingress and lets them reach only the
// run's pods, DNS (53), the API server (its EndpointSlice's addresses, the ports) and the
// remote-write endpoint's namespace; the target policy selects every target pod and admits
// only the run's pods, not another run's. Without the option no policy is created. The local
// cluster's bridge CNI enforces no NetworkPolicy, so this is where they are tested.
func TestNetworkPolicies(t *testing.T) {
	e := newEnv(t)
	e.r.NetworkPolicies = &NetworkPolicyConfig{}
	run := e.redisRun("np", 1)
	run.Spec.Target.Redis.Mode = v1alpha1.RedisHA
	run.Spec.Collect.PrometheusRemoteWriteURL = "http://prometheus.monitoring.svc:9090/api/v1/write"
	e.create(run)
	e.until("np", v1alpha1.PhaseProvisioning)
	get := func(name string) *networkingv1.NetworkPolicy {
		var np networkingv1.NetworkPolicy
		if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &np); err != nil {
			t.Fatalf("NetworkPolicy %s: %v", name, err)
		}
		if ref := metav1.GetControllerOf(&np); ref == nil || ref.Kind != "BenchmarkRun" || ref.Name != "np" {
			t.Errorf("NetworkPolicy %s is not owned by the run: %+v", name, np.OwnerReferences)
		}
		return &np
	}
	runners, targets := get("np-g1-runners"), get("np-g1-target")
	e.targetReady("np")
	var sts appsv1.StatefulSetList
	if err := k8sClient.List(e.ctx, &sts, client.InNamespace(e.ns)); err != nil || len(sts.Items) != 3 {
		t.Fatalf("%d StatefulSets: %v", len(sts.Items), err)
	}
	var job batchv1.Job
	if err := k8sClient.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: runner.JobName("np-g1")}, &job); err != nil {
		t.Fatal(err)
	}
	runnerPod := job.Spec.Template.Labels
	other := map[string]string{"bench.benchrun.io/run": "other", "bench.benchrun.io/component": "runner"}
	if !selects(t, &runners.Spec.PodSelector, runnerPod) || selects(t, &targets.Spec.PodSelector, runnerPod) {
		t.Errorf("runner pods %v: selected by runners %v, by target %v", runnerPod,
			selects(t, &runners.Spec.PodSelector, runnerPod), selects(t, &targets.Spec.PodSelector, runnerPod))
	}
	if len(runners.Spec.Ingress) != 0 || len(runners.Spec.PolicyTypes) != 2 {
		t.Errorf("runner ingress %+v, policy types %v", runners.Spec.Ingress, runners.Spec.PolicyTypes)
	}
	for _, s := range sts.Items {
		pod := s.Spec.Template.Labels
		if !selects(t, &targets.Spec.PodSelector, pod) || selects(t, &runners.Spec.PodSelector, pod) {
			t.Errorf("target pods of %s not selected by the target policy alone", s.Name)
		}
		// runners reach them; they reach each other (replication, sentinels)
		if !selects(t, runners.Spec.Egress[0].To[0].PodSelector, pod) || !selects(t, targets.Spec.Ingress[0].From[0].PodSelector, pod) {
			t.Errorf("pods of %s are not the run's pods of the rules", s.Name)
		}
	}
	from := targets.Spec.Ingress[0].From
	if len(targets.Spec.Ingress) != 1 || len(from) != 1 || from[0].NamespaceSelector != nil || from[0].IPBlock != nil ||
		!selects(t, from[0].PodSelector, runnerPod) || selects(t, from[0].PodSelector, other) {
		t.Errorf("target ingress %+v", targets.Spec.Ingress)
	}
	eg := runners.Spec.Egress
	if len(eg) != 4 {
		t.Fatalf("runner egress rules: %+v", eg)
	}
	if selects(t, eg[0].To[0].PodSelector, other) || eg[0].To[0].NamespaceSelector != nil {
		t.Errorf("runners may reach another run's pods: %+v", eg[0])
	}
	if len(eg[1].Ports) != 2 || eg[1].Ports[0].Port.IntVal != 53 || !selects(t, eg[1].To[0].PodSelector, map[string]string{"k8s-app": "kube-dns"}) {
		t.Errorf("DNS rule %+v", eg[1])
	}
	if len(eg[2].To) == 0 || eg[2].To[0].IPBlock == nil || len(eg[2].Ports) < 2 {
		t.Errorf("API server rule not narrowed to its EndpointSlice's addresses: %+v", eg[2])
	} else {
		t.Logf("API server: %s, %d ports", eg[2].To[0].IPBlock.CIDR, len(eg[2].Ports))
	}
	if len(eg[3].To) != 1 || !selects(t, eg[3].To[0].NamespaceSelector, map[string]string{"kubernetes.io/metadata.name": "monitoring"}) ||
		selects(t, eg[3].To[0].NamespaceSelector, map[string]string{"kubernetes.io/metadata.name": e.ns}) {
		t.Errorf("remote-write rule %+v", eg[3])
	}

	// off: no policy
	e.r.NetworkPolicies = nil
	e.create(e.redisRun("plain", 1))
	e.until("plain", v1alpha1.PhaseProvisioning)
	var list networkingv1.NetworkPolicyList
	if err := k8sClient.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil || len(list.Items) != 2 {
		t.Errorf("%d NetworkPolicies in the namespace (want np's 2): %v", len(list.Items), err)
	}
}
