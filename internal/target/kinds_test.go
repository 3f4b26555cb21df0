package target

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// kindSpecs are one spec per kind and mode.
func kindSpecs() []v1alpha1.TargetSpec {
	custom := &v1alpha1.CustomTarget{Image: "e", Ports: []v1alpha1.CustomPort{{Name: "echo", Port: 7}},
		ReadinessProbe: &v1alpha1.CustomProbe{TCPSocket: &v1alpha1.ProbePort{}}}
	return []v1alpha1.TargetSpec{
		{Redis: &v1alpha1.RedisTarget{}},
		{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA}},
		{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy, Engine: v1alpha1.EngineValkey}},
		{HeTu: &v1alpha1.HeTuTarget{Workers: 1, Port: 2466, Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA}}}},
		{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalRedis, Addresses: []string{"r:6379"}, ReadAddresses: []string{"r2:6379"}}},
		{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalHeTu, Addresses: []string{"h:2466"}}},
		{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalTCP, Addresses: []string{"e:7"}}},
		{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalGRPC, Addresses: []string{"g:50051"}}},
		{Custom: custom},
	}
}

// TestKindsOneHome: every spec selects exactly one kind; its label is the cluster Target's
// Kind (one spelling); every endpoint role its Target publishes is one of the kind's Roles
// (so a dry run plans with every role), and the kind's wiring reaches it.
func TestKindsOneHome(t *testing.T) {
	fields := map[string]bool{}
	for _, k := range Kinds {
		if fields[k.Field] || k.Selected == nil || k.Label == nil || k.Cluster == nil || k.Local == nil || k.Wire == nil {
			t.Errorf("kind %q: duplicate or incomplete entry", k.Field)
		}
		fields[k.Field] = true
	}
	for _, spec := range kindSpecs() {
		n := 0
		for _, k := range Kinds {
			if k.Selected(&spec) {
				n++
			}
		}
		k, err := KindOf(&spec)
		if err != nil || n != 1 {
			t.Fatalf("%+v: %d kinds select it (%v)", spec, n, err)
		}
		tg, err := New(&spec, opts(false))
		if err != nil {
			t.Fatal(err)
		}
		if got := Label(&spec); got != tg.Kind() || strings.Contains(got, " ") {
			t.Errorf("%s: Label %q, Target.Kind %q", k.Field, got, tg.Kind())
		}
		for _, ep := range tg.Endpoints() {
			if !slices.Contains(k.Roles, ep.Role) && !strings.HasPrefix(ep.Role, RoleCustom+"-") {
				t.Errorf("%s: endpoint role %q is not one of the kind's Roles %v", k.Field, ep.Role, k.Roles)
			}
		}
		addrs, _ := k.Wire(&spec, tg.Endpoints())
		dry, _ := k.Wire(&spec, DryRunEndpoints(&spec))
		if (addrs.Redis == nil) != (dry.Redis == nil) || (addrs.HeTu == nil) != (dry.HeTu == nil) || !slices.Equal(slices.Sorted(maps.Keys(addrs.Streams)), slices.Sorted(maps.Keys(dry.Streams))) {
			t.Errorf("%s: the dry run wires %+v, the real endpoints %+v", k.Field, dry, addrs)
		}
	}
	if _, err := KindOf(&v1alpha1.TargetSpec{}); err == nil || Label(&v1alpha1.TargetSpec{}) != "" {
		t.Error("an empty target spec selects a kind")
	}
}
