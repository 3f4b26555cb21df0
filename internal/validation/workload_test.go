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

// TestWorkloadRegistryMatchesCEL is the drift test between internal/workload's descriptors and
// the CRD's CEL rules (which cannot read Go): for every built-in scenario type, admission
// accepts bodySize, arrival, each params key, a custom target and each external kind exactly
// when the descriptor says the type supports it.
func TestWorkloadRegistryMatchesCEL(t *testing.T) {
	v := newValidator(t)
	valid := func(target, scenario string) error {
		spec := fmt.Sprintf("target: %s\nload: {scenarios: [%s]}\n", target, scenario)
		_, err := v.ParseFile(context.Background(), strings.NewReader(doc("reg", spec)))
		return err
	}
	kinds := []v1alpha1.ExternalKind{v1alpha1.ExternalRedis, v1alpha1.ExternalHeTu, v1alpha1.ExternalTCP, v1alpha1.ExternalHTTP, v1alpha1.ExternalGRPC}
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

// TestWorkloadRegistryMatchesDriver: scripts/k6/benchrun.js dispatches every built-in type but
// script (which runs the user's own function) and no type the registry does not know.
func TestWorkloadRegistryMatchesDriver(t *testing.T) {
	js, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "k6", "benchrun.js"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(js), "const EXEC = {")
	if start < 0 {
		t.Fatal("benchrun.js: no EXEC table")
	}
	table := string(js)[start:]
	table = table[:strings.Index(table, "};")]
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\s*'?([a-z0-9_.]+)'?:`).FindAllStringSubmatch(table, -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, d := range workload.All() {
		if d.Type != v1alpha1.ScenarioScript {
			want = append(want, string(d.Type))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("benchrun.js dispatches %v, the registry has %v", got, want)
	}
}
