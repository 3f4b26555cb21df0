package lifecycle

import "github.com/benchrun/benchrun/internal/plan"

// K6Args is k6's command line for an invocation: `run`, paused when asked (the runner
// protocol's barrier), its REST API on address, the benchrun output writing resultFile,
// the plan's arguments, and the entry script.
func K6Args(inv plan.Invocation, paused bool, address, resultFile, script string) []string {
	args := []string{"run"}
	if paused {
		args = append(args, "--paused")
	}
	args = append(args, "--address", address, "--out", "benchrun="+resultFile)
	args = append(args, inv.Args...)
	return append(args, script)
}
