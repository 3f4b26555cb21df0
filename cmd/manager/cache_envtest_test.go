package main

import (
	"context"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/benchrun/benchrun/internal/naming"
)

// TestCacheHoldsOnlyOurWorkloads: on a real kube-apiserver, the manager's cache (cacheOptions)
// holds the Deployments and StatefulSets labelled with a run and none of the cluster's other
// workloads. Before, every Deployment and StatefulSet of the cluster was cached.
func TestCacheHoldsOnlyOurWorkloads(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs envtest binaries: set KUBEBUILDER_ASSETS (make test does)")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	labelled := map[string]string{naming.LabelRun: "r1", "app": "x"}
	foreign := map[string]string{"app": "x"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: foreign},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	sel := &metav1.LabelSelector{MatchLabels: foreign}
	for name, l := range map[string]map[string]string{"ours": labelled, "theirs": foreign} {
		meta := metav1.ObjectMeta{Name: name, Namespace: "default", Labels: l}
		for _, obj := range []client.Object{
			&appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl}},
			&appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: sel, Template: tmpl}},
		} {
			if err := c.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	o, err := cacheOptions("")
	if err != nil {
		t.Fatal(err)
	}
	o.Scheme = scheme
	ch, err := cache.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ch.Start(ctx) }()
	sync, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if _, err := ch.GetInformer(sync, &appsv1.Deployment{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.GetInformer(sync, &appsv1.StatefulSet{}); err != nil {
		t.Fatal(err)
	}
	if !ch.WaitForCacheSync(sync) {
		t.Fatal("cache not synced")
	}
	var deps appsv1.DeploymentList
	var sets appsv1.StatefulSetList
	if err := ch.List(sync, &deps); err != nil {
		t.Fatal(err)
	}
	if err := ch.List(sync, &sets); err != nil {
		t.Fatal(err)
	}
	if len(deps.Items) != 1 || deps.Items[0].Name != "ours" || len(sets.Items) != 1 || sets.Items[0].Name != "ours" {
		t.Errorf("cached %d Deployments, %d StatefulSets; want only the run's (ours)", len(deps.Items), len(sets.Items))
	}
}
