package validation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/workload"
)

// scenarioFields are the settings each scenario type needs to be valid at all.
var scenarioFields = map[v1alpha1.ScenarioType]string{
	v1alpha1.ScenarioHeTuCall:     ", hetuCall: {rpc: just_get}",
	v1alpha1.ScenarioRedisCommand: ", redisCommand: {command: 'GET k:__rand_int__'}",
	v1alpha1.ScenarioScript:       ", script: {configMapName: s}",
	v1alpha1.ScenarioGRPC:         ", grpc: {method: benchrun.echo.v1.Echo/Echo}",
	v1alpha1.ScenarioHTTP:         ", http: {method: POST}",
}

// targetFor is a target every built-in type runs against (for the setting being tested).
func targetFor(d workload.Descriptor) string {
	switch {
	case workload.IsHeTu(d.Type):
		return "{hetu: {backend: {redis: {}}}}"
	case d.Custom:
		return "{custom: {image: echo, ports: [{name: echo, port: 7007}], readinessProbe: {tcpSocket: {port: echo}}}}"
	}
	return "{redis: {}}"
}

// TestWorkloadRegistryMatchesCEL checks the CRD's CEL rules (their lists of types are
// generated from internal/workload's descriptors by hack/workload-cel, and the hetu.*/redis.*
// target rules are written by hand) by what admission does: for every built-in scenario type,
// admission accepts bodySize, arrival, each params key, a custom target and each external
// kind exactly when the descriptor says the type supports it.
func TestWorkloadRegistryMatchesCEL(t *testing.T) {
	v := newValidator(t)
	valid := func(target, scenario string) error {
		spec := fmt.Sprintf("target: %s\nload: {scenarios: [%s]}\n", target, scenario)
		_, err := v.ParseFile(context.Background(), strings.NewReader(doc("reg", spec)))
		return err
	}
	kinds := v1alpha1.ExternalKinds()
	for _, d := range workload.All() {
		t.Run(string(d.Type), func(t *testing.T) {
			sc := func(extra string) string {
				return fmt.Sprintf("{name: a, type: %s%s%s}", d.Type, scenarioFields[d.Type], extra)
			}
			check := func(what string, want bool, err error) {
				t.Helper()
				if (err == nil) != want {
					t.Errorf("%s: the registry says %v, admission: %v", what, want, err)
				}
			}
			check("the type alone", true, valid(targetFor(d), sc("")))
			check("bodySize", d.BodySize, valid(targetFor(d), sc(", bodySize: 100")))
			check("arrival", d.OpenModel, valid(targetFor(d), sc(", arrival: {rate: 100}")))
			for k, val := range map[string]string{"batch": "5", "seed": "true", "prefill": "false", "serverCounts": "false", "FREE_PARAM": "1"} {
				check("params key "+k, d.ReadsParam(k), valid(targetFor(d), sc(fmt.Sprintf(", params: {%s: '%s'}", k, val))))
			}
			check("a custom target", d.Custom, valid("{custom: {image: echo, ports: [{name: echo, port: 7007}], readinessProbe: {tcpSocket: {port: echo}}}}", sc("")))
			for _, k := range kinds {
				want := d.External == nil || slices.Contains(d.External, k)
				check("external kind "+string(k), want, valid(fmt.Sprintf("{external: {kind: %s, addresses: ['h:1']}}", k), sc("")))
			}
		})
	}
}

// TestWorkloadRegistryMatchesDriver: scripts/k6/benchrun.js exports the function of every
// built-in type but script (which runs the user's own function) under the name it derives
// from the type (workload.Descriptor.Exec), and no other scenario function; it names no
// type's exec function or target address in a table of its own (the plan passes the
// address, TestPlanScenarioAddress).
func TestWorkloadRegistryMatchesDriver(t *testing.T) {
	js, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "k6", "benchrun.js"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "const EXEC = {") || strings.Contains(string(js), "function targetOf(") {
		t.Error("benchrun.js has a per-type exec or address table again: derive them from the plan (execOf, TARGET[s.address])")
	}
	if !strings.Contains(string(js), "s.type.replace(/\\./g, '_')") {
		t.Error("benchrun.js: execOf no longer derives the function from the type as workload.Descriptor.Exec does")
	}
	exported := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^export function ([a-z0-9_]+)\(`).FindAllStringSubmatch(string(js), -1) {
		exported[m[1]] = true
	}
	known := map[string]bool{"setup": true, "teardown": true, "open_loop": true, "benchrun_counts": true, "benchrun_done": true}
	for _, d := range workload.All() {
		if d.Type == v1alpha1.ScenarioScript {
			continue
		}
		if !exported[d.Exec()] {
			t.Errorf("benchrun.js exports no %s() for type %s", d.Exec(), d.Type)
		}
		known[d.Exec()] = true
	}
	for f := range exported {
		if !known[f] {
			t.Errorf("benchrun.js exports %s(), which no type of the registry runs", f)
		}
	}
}

// TestExternalKindsMatchEnum: v1alpha1.ExternalKinds (which internal/target wires and lists
// as an external endpoint's roles) is the ExternalKind Enum marker, in its order.
func TestExternalKindsMatchEnum(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "api", "v1alpha1", "target_types.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\+kubebuilder:validation:Enum=([a-z;]+)\n(?:// \+workloadcel:end\n)?type ExternalKind string`).FindSubmatch(src)
	if m == nil {
		t.Fatal("target_types.go: no Enum marker on ExternalKind")
	}
	var got []string
	for _, k := range v1alpha1.ExternalKinds() {
		got = append(got, string(k))
	}
	if want := strings.Split(string(m[1]), ";"); !slices.Equal(got, want) {
		t.Errorf("ExternalKinds() %v, Enum %v", got, want)
	}
}
