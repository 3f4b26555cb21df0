package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/benchrun/benchrun/internal/naming"
	"github.com/benchrun/benchrun/internal/runner"
)

func TestCacheOptions(t *testing.T) {
	o, err := cacheOptions("")
	if err != nil || o.DefaultNamespaces != nil || len(o.ByObject) != 5 {
		t.Fatalf("cluster-wide: %+v %v", o, err)
	}
	// Result ConfigMaps (the runners' documents) and reports never enter the cache; the rest of ours do.
	var sel labels.Selector
	for obj, by := range o.ByObject {
		if _, isCM := obj.(*corev1.ConfigMap); isCM {
			sel = by.Label
		}
	}
	for _, c := range []struct {
		component string
		cached    bool
	}{{"runner", true}, {naming.ComponentReport, false}, {runner.ComponentResult, false}} {
		l := labels.Set{naming.LabelRun: "r", naming.LabelComponent: c.component}
		if sel == nil || sel.Matches(l) != c.cached {
			t.Errorf("ConfigMap selector %v on component %s: cached %v, want %v", sel, c.component, !c.cached, c.cached)
		}
	}
	o, err = cacheOptions("team-a, team-b,")
	if err != nil || len(o.DefaultNamespaces) != 2 {
		t.Fatalf("namespaced: %+v %v", o.DefaultNamespaces, err)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if _, ok := o.DefaultNamespaces[ns]; !ok {
			t.Errorf("%s not watched: %v", ns, o.DefaultNamespaces)
		}
	}
	if _, err := cacheOptions("Team_A"); err == nil || !strings.Contains(err.Error(), `--watch-namespaces: "Team_A" is not a namespace name`) {
		t.Errorf("bad namespace: %v", err)
	}
}
