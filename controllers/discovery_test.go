package controllers

import (
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestServedRecheckSeesNewAPI: a remembered "not served" is reused by served (so a missing
// metrics API costs no discovery per reconcile), but servedRecheck asks again, so a run
// created right after the redis-operator's CRDs were installed is not refused for a minute
// (found by the e2e TestRedisHAOperator: the manager had asked before the install).
func TestServedRecheckSeesNewAPI(t *testing.T) {
	needEnvtest(t)
	gvk := schema.GroupVersionKind{Group: "recheck.benchrun.test", Version: "v1", Kind: "Thing"}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	r := &BenchmarkRunReconciler{Client: c}
	if r.served(gvk) {
		t.Fatal("served before its CRD exists")
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.recheck.benchrun.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gvk.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: gvk.Kind, ListKind: "ThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: gvk.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = envtest.UninstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}})
	})
	if r.served(gvk) {
		t.Error("served did not reuse its remembered answer")
	}
	deadline := time.Now().Add(30 * time.Second)
	for !r.servedRecheck(gvk) {
		if time.Now().After(deadline) {
			t.Fatal("servedRecheck never saw the installed CRD")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !r.served(gvk) {
		t.Error("served forgot the fresh answer")
	}
}
