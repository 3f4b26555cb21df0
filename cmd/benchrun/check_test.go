package main

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/local"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/validation"
)

// TestValidateRefusesWhatRunRefuses walks the spec checks of `benchrun run` past admission
// (localRun.check: the dry plan of every runner, then local.New): each case is a spec that one
// of them refuses when handed the spec unvalidated, and `benchrun validate` (the validator
// admission shares) must refuse it too, so no spec problem is found only once the run starts.
// Problems of the machine (no k6, no HeTu runtime, a Secret missing from the file) and local
// limits (mode proxy, custom targets without command) are not spec problems and not here.
func TestValidateRefusesWhatRunRefuses(t *testing.T) {
	needRedis(t)
	const base = "workers: 1\n    tasksPerWorker: 1\n    duration: 10s\n    runners: {parallelism: 1}\n"
	for _, tc := range []struct{ name, target, load, runErr string }{
		{"redis config over two lines", `{redis: {mode: single, config: {maxmemory: "4gb\nrequirepass x"}}}`, "scenarios: [{name: a, type: redis.get}]", "keys and values must be single-line"},
		{"redis config key with a space", `{redis: {mode: single, config: {"io threads": "4"}}}`, "scenarios: [{name: a, type: redis.get}]", "keys and values must be single-line"},
		{"hetu auth key without crypto", `{hetu: {instance: bench, packetLayers: msgpack, authKeySecretRef: {name: s, key: k}, backend: {redis: {mode: single}}}}`, "scenarios: [{name: a, type: hetu.get}]", "an auth key needs packetLayers"},
		{"hetu instance with a dot", `{hetu: {instance: my.bench, backend: {redis: {mode: single}}}}`, "scenarios: [{name: a, type: hetu.get}]", "hetu instance"},
		{"custom target without ports", `{custom: {image: echo, command: [echo-server], readinessProbe: {tcpSocket: {port: echo}}}}`, "scenarios: [{name: a, type: tcp.echo}]", "needs at least one port"},
		{"fewer virtual users than runners", `{redis: {mode: single}}`, "workers: 1\n    tasksPerWorker: 1\n    runners: {parallelism: 2}\n    scenarios: [{name: a, type: redis.get}]", "gets no virtual user"},
		{"hetu scenario on a redis target", `{redis: {mode: single}}`, "scenarios: [{name: a, type: hetu.get}]", "needs a HeTu endpoint"},
		{"redis scenario on an external http target", `{external: {kind: http, addresses: ['web:80']}}`, "scenarios: [{name: a, type: redis.get}]", "needs a Redis endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			load := tc.load
			if !strings.Contains(load, "workers:") {
				load = base + "    " + load
			}
			doc := "apiVersion: bench.benchrun.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: check}\nspec:\n  target: " + tc.target + "\n  load:\n    " + load + "\n"
			var run v1alpha1.BenchmarkRun
			if err := yaml.Unmarshal([]byte(doc), &run); err != nil {
				t.Fatal(err)
			}
			if err := runCheck(&run); err == nil || !strings.Contains(err.Error(), tc.runErr) {
				t.Fatalf("benchrun run's check: got %v, want %q (the case does not reach the check it is about)", err, tc.runErr)
			}
			v, err := validation.New()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.ParseFile(context.Background(), strings.NewReader(doc)); err == nil {
				t.Errorf("benchrun validate accepts a spec benchrun run refuses (%s)", tc.runErr)
			} else {
				t.Logf("validate: %v", err)
			}
		})
	}
}

// runCheck is the spec part of localRun.check: the dry plan of every runner, then the local
// target (with the Secret its references name).
func runCheck(run *v1alpha1.BenchmarkRun) error {
	dry := []v1alpha1.Endpoint{{Role: plan.RoleHeTu, Address: "127.0.0.1:1"}, {Role: plan.RoleRedis, Address: "127.0.0.1:1"},
		{Role: plan.RoleCustom, Address: "127.0.0.1:1"}}
	count := max(1, int(run.Spec.Load.Runners.Parallelism))
	for i := range count {
		if _, err := plan.ForRunner(run, dry, i, count); err != nil {
			return err
		}
	}
	_, err := local.New(&run.Spec.Target, local.Options{Secrets: local.Secrets{"s": {"k": "key"}}}) // New starts nothing
	return err
}
