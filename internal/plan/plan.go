// Package plan turns a BenchmarkRun into the k6 invocation of each runner: script, arguments
// and environment (never secrets: those reach the runner pods through secretKeyRef env).
//
// TODO(plan): minimal stand-in written by the controller work so the operator builds and
// runs; the load-engine owner replaces it with the real mapping of every scenario type.
package plan

import (
	"fmt"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// ScriptDir is where the runner image keeps scripts/k6.
const ScriptDir = "/opt/benchrun/scripts/k6"

// Invocation is how one runner runs k6: `k6 run --out benchrun=FILE Args... Script` with Env added.
type Invocation struct {
	// Script is the k6 script path inside the runner image.
	Script string `json:"script"`
	// Args are extra k6 run arguments.
	Args []string `json:"args,omitempty"`
	// Env are extra environment variables (no secrets).
	Env map[string]string `json:"env,omitempty"`
}

// ForRunner is the invocation of runner index (0-based) of count: its share of the workers,
// the target endpoints and the scenario list.
func ForRunner(run *v1alpha1.BenchmarkRun, endpoints []v1alpha1.Endpoint, index, count int) (Invocation, error) {
	if count < 1 || index < 0 || index >= count {
		return Invocation{}, fmt.Errorf("plan: runner %d of %d", index, count)
	}
	load := run.Spec.Load
	workers := share(int(load.Workers), index, count)
	var names []string
	script := "redis_basic.js"
	for _, s := range load.Scenarios {
		names = append(names, s.Name)
		switch {
		case s.Type == v1alpha1.ScenarioRedisUpsert:
			script = "redis_upsert.js"
		case strings.HasPrefix(string(s.Type), "hetu."):
			script = "hetu_rpc.js"
		}
	}
	env := map[string]string{
		"SCENARIOS":        strings.Join(names, ","),
		"WORKERS":          fmt.Sprint(max(workers, 1)),
		"TASKS_PER_WORKER": fmt.Sprint(load.TasksPerWorker),
		"DURATION":         load.Duration.Duration.String(),
		"BENCHRUN_RUNNER":  fmt.Sprintf("runner-%d", index),
	}
	for _, ep := range endpoints {
		switch ep.Role {
		case "redis", "master", "proxy":
			if _, ok := env["REDIS_ADDR"]; !ok || ep.Role == "proxy" {
				env["REDIS_ADDR"] = ep.Address
			}
		case "hetu":
			env["HETU_ADDR"] = ep.Address
		}
	}
	return Invocation{Script: ScriptDir + "/" + script, Env: env}, nil
}

// share is runner index's part of n split over count runners (the first ones get the remainder).
func share(n, index, count int) int {
	s := n / count
	if index < n%count {
		s++
	}
	return s
}
