package suite

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

func suiteFromYAML(t *testing.T, name, spec string) *v1alpha1.BenchmarkSuite {
	t.Helper()
	s := &v1alpha1.BenchmarkSuite{}
	s.Name = name
	if err := yaml.UnmarshalStrict([]byte(spec), &s.Spec); err != nil {
		t.Fatal(err)
	}
	return s
}

const redisCompare = `
template:
  target: {redis: {version: "8.0", config: {maxmemory: 1gb}}}
  load: {workers: 2, scenarios: [{name: get, type: redis.get}, {name: set, type: redis.set}]}
variants:
- name: redis8
- name: redis8-io8
  redis: {config: {io-threads: "8"}}
- name: valkey9
  redis: {engine: valkey, image: valkey/valkey:9}
- name: tair
  target: {external: {kind: redis, addresses: ["r-bp1.redis.rds.aliyuncs.com:6379"]}}
  load: {workers: 4}
  scenarioParams: {get: {batch: "10"}}
repeat: 2
`

// TestExpandInterleaved: 4 variants × repeat 2 in the order A B C D A B C D, with predictable
// names and each variant's changes applied to a copy of the template.
func TestExpandInterleaved(t *testing.T) {
	s := suiteFromYAML(t, "cmp", redisCompare)
	kids, err := Expand(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range kids {
		names = append(names, c.Name)
	}
	want := "cmp-redis8-r1 cmp-redis8-io8-r1 cmp-valkey9-r1 cmp-tair-r1 cmp-redis8-r2 cmp-redis8-io8-r2 cmp-valkey9-r2 cmp-tair-r2"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("order:\n got %s\nwant %s", got, want)
	}
	if r := kids[0].Spec.Target.Redis; r.Version != "8.0" || len(r.Config) != 1 {
		t.Errorf("redis8 changed the template: %+v", r)
	}
	if r := kids[1].Spec.Target.Redis; r.Config["io-threads"] != "8" || r.Config["maxmemory"] != "1gb" || r.Version != "8.0" {
		t.Errorf("io8: config not merged: %+v", r)
	}
	if r := kids[2].Spec.Target.Redis; r.Engine != "valkey" || r.Image != "valkey/valkey:9" || r.Version != "" {
		t.Errorf("valkey: %+v", r)
	}
	tair := kids[3].Spec
	if tair.Target.Redis != nil || tair.Target.External == nil || tair.Load.Workers != 4 || tair.Load.Scenarios[0].Params["batch"] != "10" {
		t.Errorf("tair: %+v", tair)
	}
	if s.Spec.Template.Target.Redis.Config["io-threads"] != "" || s.Spec.Template.Load.Scenarios[0].Params != nil {
		t.Error("the template was changed")
	}
	if kids[4].Repetition != 2 || kids[4].Variant != "redis8" {
		t.Errorf("kids[4] = %+v", kids[4])
	}
}

// TestExpandSweeps: sweeps expand as a product, the last fastest, each point for every variant.
func TestExpandSweeps(t *testing.T) {
	s := suiteFromYAML(t, "echo", `
template:
  target: {custom: {image: echo:1}}
  load: {scenarios: [{name: echo, type: tcp.echo}]}
variants: [{name: a}, {name: b, load: {parallelism: 2}}]
sweeps: [{field: workers, values: [1, 4]}, {field: bodySize, values: [64, 1024]}]
`)
	kids, err := Expand(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 8 {
		t.Fatalf("%d children, want 8", len(kids))
	}
	if kids[0].Name != "echo-a-w1-b64-r1" || kids[1].Name != "echo-b-w1-b64-r1" || kids[2].Name != "echo-a-w1-b1024-r1" || kids[7].Name != "echo-b-w4-b1024-r1" {
		t.Errorf("names: %s %s %s %s", kids[0].Name, kids[1].Name, kids[2].Name, kids[7].Name)
	}
	if k := kids[7]; k.Spec.Load.Workers != 4 || *k.Spec.Load.Scenarios[0].BodySize != 1024 || k.Spec.Load.Runners.Parallelism != 2 || k.Sweep() != "workers=4,bodySize=1024" {
		t.Errorf("kids[7] = %+v sweep %s", k.Spec.Load, k.Sweep())
	}
}

// TestChildNameIsDNSSafe: long names are cut to 63 characters with a hash, still distinct.
func TestChildNameIsDNSSafe(t *testing.T) {
	long := strings.Repeat("s", 30)
	v := strings.Repeat("v", 30)
	a := ChildName(long, v, []SweepValue{{v1alpha1.SweepRate, 100000}}, 1)
	b := ChildName(long, v, []SweepValue{{v1alpha1.SweepRate, 100000}}, 2)
	if len(a) > 63 || a == b || strings.HasSuffix(a, "-") {
		t.Errorf("names %q %q", a, b)
	}
}

// TestApplyRedisNeedsRedis: a redis change on an external target is an error naming why.
func TestApplyRedisNeedsRedis(t *testing.T) {
	tpl := v1alpha1.BenchmarkRunSpec{Target: v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: "redis"}}}
	_, err := Apply(&tpl, &v1alpha1.SuiteVariant{Name: "x", Redis: &v1alpha1.VariantRedis{Version: ptr.Deref(ptr.To("8"), "")}}, nil)
	if err == nil || !strings.Contains(err.Error(), "no Redis benchrun deploys") {
		t.Errorf("err = %v", err)
	}
}
