// Command benchrun runs BenchmarkRuns and BenchmarkSuites without a cluster and renders result documents. It is
// also the kubectl plugin kubectl-benchrun (install the binary under that name on PATH).
//
//	benchrun run -f run.yaml [--runners N] [--output table|markdown|json|csv] [--out-dir DIR] [--k6 PATH]
//	benchrun run -f suite.yaml [--out-dir DIR]
//	benchrun validate -f run.yaml
//	benchrun report [--output ...] FILE|DIR...
//	benchrun compare [--label a,b,...] FILE|DIR...
//
// Exit codes: 0 success, 1 failure (invalid file, target not ready, runner failed), 2 bad
// usage, 3 thresholds not met (run complete, verdict Failed), 130 interrupted (partial
// results are still reported).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

const usage = `benchrun runs BenchmarkRuns on this machine and renders their results.

Usage:
  benchrun run -f run.yaml [--runners N] [--output table|markdown|json|csv] [--out-dir DIR] [--k6 PATH] [--baseline DIR]
      validate the file, start the target locally, run the scenarios with N local k6 runners,
      print the tables and write report.md, results.json and merged.json into the out dir;
      spec.thresholds decide the exit code (3 when not met), --baseline DIR adds deltas
  benchrun run -f suite.yaml [--out-dir DIR] ...
      a BenchmarkSuite: its child runs one after another (interleaved A B A B), each in its
      own subdirectory of the out dir, then the combined table and verdict (report.md,
      table.json, cps.svg, suite.json); exit 1 when a child failed, 3 when the verdict failed
  benchrun validate -f run.yaml
      check the file with the same rules as the cluster (kubectl apply)
  benchrun report [--output table|markdown|json|csv] FILE|DIR...
      merge result documents (runner-*.json, merged.json, or an out dir) and render them;
      a suite's out dir: its combined table (table, markdown, json, or --html)
  benchrun report --html [-o report.html] FILE|DIR...
      one self-contained HTML page: the tables, the charts and the data (no network needed)
  benchrun compare [--label a,b,...] FILE|DIR...
      side-by-side tables of several results (labels default to the file or directory names)

On a cluster (kubectl benchrun ...; current kubeconfig context and namespace, or --kubeconfig,
--context, -n):
  benchrun get [RUN...]                    runs with phase, verdict, target, best CPS
  benchrun report RUN                      the run's report (seed tables, thresholds, deltas)
  benchrun report RUN --html -o report.html
                                           the run's report as one self-contained HTML page
  benchrun compare RUN RUN... [--baseline RUN]
                                           side by side, columns named by run, with deltas
  benchrun watch RUN|SUITE                 phase and progress until it ends, then the report
                                           (exit 0 Succeeded, 3 thresholds not met, 1 failed)

Run "benchrun COMMAND -h" for the flags of a command.
`

func main() {
	os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs the command line args and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		_, _ = fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(ctx, rest, stdout, stderr)
	case "validate":
		return cmdValidate(ctx, rest, stdout, stderr)
	case "report":
		if onCluster(rest) {
			return cmdClusterReport(ctx, rest, stdout, stderr)
		}
		return cmdReport(rest, stdout, stderr)
	case "compare":
		if onCluster(rest) {
			return cmdClusterCompare(ctx, rest, stdout, stderr)
		}
		return cmdCompare(rest, stdout, stderr)
	case "get":
		return cmdGet(ctx, rest, stdout, stderr)
	case "watch":
		return cmdWatch(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		_, _ = fmt.Fprint(stdout, usage)
		return exitOK
	}
	_, _ = fmt.Fprintf(stderr, "benchrun: unknown command %q\n\n%s", cmd, usage)
	return exitUsage
}

// parseFlags parses flags placed before, between or after positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// newFlagSet returns a flag set that reports errors to stderr without exiting.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, "Usage: benchrun %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// flagExit is the exit code of a flag parsing error (0 for -h).
func flagExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// outputFormats are the values of --output.
var outputFormats = []string{"table", "markdown", "json", "csv"}

func checkOutput(s string) error {
	for _, f := range outputFormats {
		if s == f {
			return nil
		}
	}
	return fmt.Errorf("--output %q: must be one of %s", s, strings.Join(outputFormats, ", "))
}

// findRoot returns the benchrun source tree (the directory holding scripts/k6/benchrun.js):
// $BENCHRUN_ROOT, else the working directory or a parent, else next to the executable.
func findRoot() (string, error) {
	var cands []string
	if r := os.Getenv("BENCHRUN_ROOT"); r != "" {
		cands = append(cands, r)
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			cands = append(cands, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			cands = append(cands, filepath.Dir(filepath.Dir(exe)), filepath.Dir(exe))
		}
	}
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, "scripts", "k6", "benchrun.js")); err == nil {
			return filepath.Abs(c) // generated entry modules import benchrun.js by absolute path
		}
	}
	return "", errors.New("benchrun's scripts (scripts/k6/benchrun.js) not found: run from the benchrun repository or set BENCHRUN_ROOT")
}

// findK6 returns benchrun's k6: flag, $BENCHRUN_K6, next to this executable, or ROOT/bin/k6.
// A k6 without benchrun's extensions (a stock k6 on PATH, say) is skipped.
func findK6(flagValue, root string) (string, error) {
	if flagValue != "" {
		if err := isBenchrunK6(flagValue); err != nil {
			return "", fmt.Errorf("--k6 %s: %w", flagValue, err)
		}
		return flagValue, nil
	}
	var cands []string
	if p := os.Getenv("BENCHRUN_K6"); p != "" {
		cands = append(cands, p)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			cands = append(cands, filepath.Join(filepath.Dir(exe), "k6"))
		}
	}
	cands = append(cands, filepath.Join(root, "bin", "k6"))
	var skipped []string
	for _, c := range cands {
		if st, err := os.Stat(c); err != nil || st.IsDir() {
			continue
		}
		if err := isBenchrunK6(c); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s (%v)", c, err))
			continue
		}
		return c, nil
	}
	msg := "benchrun's k6 not found: build it with `make k6` (bin/k6) or pass --k6 PATH"
	if len(skipped) > 0 {
		msg += "; skipped " + strings.Join(skipped, ", ")
	}
	return "", errors.New(msg)
}

// isBenchrunK6 checks that a k6 binary has benchrun's k6/x/benchrun extension.
func isBenchrunK6(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("`k6 version` failed: %w", err)
	}
	if !strings.Contains(string(out), "k6/x/benchrun") {
		return errors.New("not benchrun's k6: it lacks the k6/x/benchrun extension")
	}
	return nil
}
