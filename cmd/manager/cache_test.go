package main

import (
	"strings"
	"testing"
)

func TestCacheOptions(t *testing.T) {
	o, err := cacheOptions("")
	if err != nil || o.DefaultNamespaces != nil || len(o.ByObject) != 3 {
		t.Fatalf("cluster-wide: %+v %v", o, err)
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
