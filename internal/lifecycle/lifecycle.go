// Package lifecycle holds the phase helpers both drivers of a run share — the operator
// (controllers/) and `benchrun run` (cmd/benchrun): timeouts and their defaults, script
// sources, merging runner results with the reasons they are partial, the report files and
// k6's command line. It only computes; the drivers place things (pods or processes) and
// store what it returns (status and ConfigMaps, or files).
package lifecycle

import (
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/workload"
)

// DefaultTargetReady is timeouts.targetReady when unset.
const DefaultTargetReady = 10 * time.Minute

// runSlack is what the default whole-run timeout allows beyond the target's readiness
// timeout and the scenarios' durations.
const runSlack = 10 * time.Minute

// DefaultRunnersReady is timeouts.runnersReady when unset: long enough for a cluster
// autoscaler to add a node for the load pool.
const DefaultRunnersReady = 10 * time.Minute

// RunnersReadyTimeout is timeouts.runnersReady or its default: how long runners may take,
// from their creation, to all reach the start barrier.
func RunnersReadyTimeout(run *v1alpha1.BenchmarkRun) time.Duration {
	if d := run.Spec.Timeouts.RunnersReady; d != nil {
		return d.Duration
	}
	return DefaultRunnersReady
}

// TargetReadyTimeout is timeouts.targetReady or its default.
func TargetReadyTimeout(run *v1alpha1.BenchmarkRun) time.Duration {
	if d := run.Spec.Timeouts.TargetReady; d != nil {
		return d.Duration
	}
	return DefaultTargetReady
}

// RunTimeout is timeouts.run or its default: the target's readiness timeout, plus every
// scenario's duration, plus 10 minutes. It counts from the run's start.
func RunTimeout(run *v1alpha1.BenchmarkRun) time.Duration {
	if d := run.Spec.Timeouts.Run; d != nil {
		return d.Duration
	}
	total := TargetReadyTimeout(run)
	for i := range run.Spec.Load.Scenarios {
		total += workload.ScenarioLength(&run.Spec, i) // a requests scenario: its bound
	}
	return total + runSlack
}
