// Command k6 is benchrun's k6 binary: k6 v2 with extensions compiled in: xk6-redis
// (k6/x/redis), benchrun's k6/x/benchrun and k6/x/hetu modules, and the "benchrun" output.
//
// When BENCHRUN_RESULT_FILE is set, `k6 run` gets `--out benchrun` added (unless the command
// line already names that output), so the result document is written without extra flags.
package main

import (
	"os"
	"strings"

	_ "github.com/grafana/xk6-redis"
	k6cmd "go.k6.io/k6/v2/cmd"

	"github.com/benchrun/benchrun/k6ext/bench"
	_ "github.com/benchrun/benchrun/k6ext/hetu"
)

func main() {
	if os.Getenv(bench.ResultFileEnv) != "" {
		os.Args = withBenchrunOutput(os.Args)
	}
	k6cmd.Execute()
}

// withBenchrunOutput adds "--out benchrun" after the "run" subcommand unless an
// --out/-o flag already selects the benchrun output.
func withBenchrunOutput(args []string) []string {
	run := -1
	for i, a := range args[1:] {
		if a == "run" {
			run = i + 1
			break
		}
		if !strings.HasPrefix(a, "-") {
			return args // another subcommand
		}
	}
	if run < 0 {
		return args
	}
	for i, a := range args {
		v := ""
		switch {
		case (a == "--out" || a == "-o") && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(a, "--out="):
			v = strings.TrimPrefix(a, "--out=")
		case strings.HasPrefix(a, "-o="):
			v = strings.TrimPrefix(a, "-o=")
		}
		if v == bench.OutputName || strings.HasPrefix(v, bench.OutputName+"=") {
			return args
		}
	}
	out := append([]string{}, args[:run+1]...)
	out = append(out, "--out", bench.OutputName)
	return append(out, args[run+1:]...)
}
