package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/local"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
)

// runnerStopGrace is how long interrupted runners may take to write their partial results.
const runnerStopGrace = 30 * time.Second

// runner is one local k6 process.
type runner struct {
	index  int
	inv    plan.Invocation
	script string // entry script path
	api    string // k6 REST API address
	result string // result document path
	log    string
	proc   *local.Process
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", "-f run.yaml [--runners N] [--output table|markdown|json|csv] [--out-dir DIR] [--k6 PATH]", stderr)
	file := fs.String("f", "", "run file (YAML or JSON; may also hold the Secrets it references)")
	name := fs.String("name", "", "the BenchmarkRun to run when the file holds several")
	nRunners := fs.Int("runners", 0, "number of local k6 runner processes (default: spec.load.runners.parallelism, else 1)")
	output := fs.String("output", "table", "output format on stdout: table, markdown, json or csv")
	outDir := fs.String("out-dir", "", "directory for runner results and reports (default: benchrun-results/NAME-TIME)")
	k6Flag := fs.String("k6", "", "benchrun's k6 binary (default: next to benchrun, or bin/k6)")
	verbose := fs.Bool("v", false, "log every process started and stopped")
	gate := addGateFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	fail := func(format string, a ...any) int {
		_, _ = fmt.Fprintf(stderr, "benchrun run: "+format+"\n", a...)
		return exitFailed
	}
	switch {
	case len(pos) > 0:
		_, _ = fmt.Fprintf(stderr, "benchrun run: unexpected argument %q (give the run file with -f)\n", pos[0])
		return exitUsage
	case *file == "":
		_, _ = fmt.Fprintln(stderr, "benchrun run: give the run file with -f run.yaml")
		return exitUsage
	case *nRunners < 0:
		_, _ = fmt.Fprintln(stderr, "benchrun run: --runners must be at least 1")
		return exitUsage
	}
	if err := checkOutput(*output); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun run: %v\n", err)
		return exitUsage
	}

	// Everything that can be checked is checked before anything starts.
	run, f, err := loadRunFile(ctx, *file, *name)
	if err != nil {
		return fail("%v", err)
	}
	if err := gate.load(run); err != nil {
		return fail("%v", err)
	}
	root, err := findRoot()
	if err != nil {
		return fail("%v", err)
	}
	k6, err := findK6(*k6Flag, root)
	if err != nil {
		return fail("%v", err)
	}
	count := *nRunners
	if count == 0 {
		count = max(1, int(run.Spec.Load.Runners.Parallelism))
	}
	scriptDir := filepath.Join(root, "scripts", "k6")
	scripts, err := scriptSources(run, f.Objects)
	if err != nil {
		return fail("%s: %v", *file, err)
	}
	withScripts := plan.WithScripts(scripts)
	// A dry plan with placeholder endpoints catches plan errors (unsupported scenario types,
	// too many runners) and names the secrets before a target is started.
	dry := []v1alpha1.Endpoint{{Role: plan.RoleHeTu, Address: "127.0.0.1:1"}, {Role: plan.RoleRedis, Address: "127.0.0.1:1"}}
	for i := range count {
		if _, err := plan.ForRunnerIn(scriptDir, run, dry, i, count, withScripts); err != nil {
			return fail("%v", err)
		}
	}
	secrets, err := local.SecretsFrom(f.Objects)
	if err != nil {
		return fail("%s: %v", *file, err)
	}
	inv0, _ := plan.ForRunnerIn(scriptDir, run, dry, 0, count, withScripts)
	secretEnv := make([]string, 0, len(inv0.SecretEnv))
	for _, se := range inv0.SecretEnv {
		v, err := secrets.Get(se.Secret)
		if err != nil {
			return fail("%s: %v", *file, err)
		}
		secretEnv = append(secretEnv, se.Name+"="+v)
	}
	logW := &lateWriter{}
	target, err := local.New(&run.Spec.Target, local.Options{
		Secrets: secrets, Log: logW, HeTuApp: filepath.Join(root, "examples", "hetu-bench"),
	})
	if err != nil {
		return fail("%v", err)
	}
	if *outDir == "" {
		*outDir = filepath.Join("benchrun-results", run.Name+"-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return fail("%v", err)
	}
	logFile, err := os.Create(filepath.Join(*outDir, "benchrun.log"))
	if err != nil {
		return fail("%v", err)
	}
	defer func() { _ = logFile.Close() }()
	logW.w = logFile
	if *verbose {
		logW.w = io.MultiWriter(logFile, stderr)
	}
	// A benchrun killed by SIGKILL took its processes with it (parent-death signal) but not
	// its temporary directories: remove those of owners no longer alive.
	removed, err := local.RemoveStale(local.Options{})
	for _, d := range removed {
		_, _ = fmt.Fprintf(logW, "removed stale temporary directory %s\n", d)
	}
	if len(removed) > 0 {
		_, _ = fmt.Fprintf(stderr, "benchrun: removed temporary directories left by killed runs: %d (listed in benchrun.log)\n", len(removed))
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun: removing temporary directories of killed runs: %v\n", err)
	}

	// From here on processes run: Ctrl-C (SIGINT) and SIGTERM stop them cleanly. A second
	// Ctrl-C kills benchrun at once; its children die with it (parent-death signal).
	sigCtx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	go func() { <-sigCtx.Done(); stopSignals() }()

	readyTimeout := 10 * time.Minute
	if t := run.Spec.Timeouts.TargetReady; t != nil {
		readyTimeout = t.Duration
	}
	t0 := time.Now()
	_, _ = fmt.Fprintf(stderr, "benchrun: %s: starting the %s target (ready timeout %s)\n", run.Name, describeTarget(&run.Spec.Target), readyTimeout)
	if err := local.StartWithin(sigCtx, target, readyTimeout); err != nil {
		if ctx.Err() == nil && sigCtx.Err() != nil {
			_, _ = fmt.Fprintln(stderr, "benchrun run: interrupted while starting the target; everything stopped")
			return exitInterrupted
		}
		return fail("%v", err)
	}
	defer func() { _ = target.Stop() }()
	eps := target.Endpoints()
	_, _ = fmt.Fprintf(stderr, "benchrun: target ready in %.1fs%s\n", time.Since(t0).Seconds(), describeEndpoints(eps))

	runners := make([]*runner, count)
	for i := range count {
		inv, err := plan.ForRunnerIn(scriptDir, run, eps, i, count, withScripts)
		if err != nil {
			return fail("%v", err)
		}
		// Script scenarios: the plan's generated entry module and scripts go to a work dir.
		script, err := inv.Materialize(filepath.Join(*outDir, "scripts", fmt.Sprintf("runner-%d", i)))
		if err != nil {
			return fail("%v", err)
		}
		runners[i] = &runner{index: i, inv: inv, script: script,
			result: filepath.Join(*outDir, fmt.Sprintf("runner-%d.json", i)),
			log:    filepath.Join(*outDir, fmt.Sprintf("runner-%d.log", i))}
	}
	spec, _ := planSpec(runners[0].inv)
	runTimeout := runners[0].inv.Duration + readyTimeout + 10*time.Minute
	if t := run.Spec.Timeouts.Run; t != nil {
		runTimeout = t.Duration - time.Since(t0)
	}
	totalVUs := int(run.Spec.Load.Workers) * int(run.Spec.Load.TasksPerWorker)
	_, _ = fmt.Fprintf(stderr, "benchrun: %d scenario(s) × ~%s, %d VUs over %d local k6 runner(s); results in %s\n",
		len(spec.Scenarios), approxScenario(spec), totalVUs, count, *outDir)
	for _, r := range runners {
		if err := r.start(k6, secretEnv, logW); err != nil {
			stopRunners(runners)
			return fail("%v", err)
		}
	}
	defer stopRunners(runners)

	var prog *progress
	if isTerminal(stderr) {
		prog = newProgress(stderr, spec, runners)
		go prog.run()
	}
	interrupted, timedOut, crashed := waitRunners(sigCtx, runners, runTimeout)
	if prog != nil {
		prog.stop()
	}
	switch {
	case interrupted:
		_, _ = fmt.Fprintln(stderr, "benchrun: interrupted: stopping the runners (they write partial results)")
	case timedOut:
		_, _ = fmt.Fprintf(stderr, "benchrun: run timeout (spec.timeouts.run) reached: stopping the runners\n")
	case crashed != nil:
		_, _ = fmt.Fprintf(stderr, "benchrun: k6 runner %d failed (%s, see %s): stopping the others\n",
			crashed.index, exitText(crashed.proc.ExitCode()), crashed.log)
	}
	stopped := interrupted || timedOut || crashed != nil
	if stopped {
		for _, r := range runners {
			r.proc.Signal(syscall.SIGINT)
		}
		waitAll(runners, runnerStopGrace)
	}
	stopRunners(runners)
	if err := target.Stop(); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun: cleaning up the target: %v\n", err)
	}

	doc, failed, err := collect(runners, crashed, stopped)
	if err != nil {
		return fail("%v", err)
	}
	opts := plan.SummaryOptions(run)
	sum := results.Summarize(doc, opts)
	if err := writeReports(*outDir, run.Name, doc, sum); err != nil {
		return fail("writing reports: %v", err)
	}
	if err := render(stdout, *output, "benchrun: "+run.Name, sum); err != nil {
		return fail("%v", err)
	}
	thresholdsFailed, err := gate.judge(stdout, stderr, *output, run, sum, *outDir)
	if err != nil {
		return fail("%v", err)
	}
	_, _ = fmt.Fprintf(stderr, "benchrun: done in %.0fs; wrote report.md, results.json and merged.json in %s\n", time.Since(t0).Seconds(), *outDir)
	switch {
	case interrupted:
		return exitInterrupted
	case timedOut || failed:
		return exitFailed
	case thresholdsFailed:
		return exitThresholds
	}
	return exitOK
}

// start starts the runner's k6 process.
func (r *runner) start(k6 string, secretEnv []string, log io.Writer) error {
	port, err := local.FreePort()
	if err != nil {
		return err
	}
	r.api = "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"run"}, r.inv.Args...)
	args = append(args, "--address", r.api, "--out", "benchrun="+r.result, r.script)
	cmd := exec.Command(k6, args...)
	env := make([]string, 0, len(os.Environ())+len(r.inv.Env)+len(secretEnv)+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BENCHRUN_") && !strings.HasPrefix(kv, "K6_") {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.inv.Env)) {
		env = append(env, k+"="+r.inv.Env[k])
	}
	cmd.Env = append(append(env, secretEnv...), "K6_NO_USAGE_REPORT=true")
	lf, err := os.Create(r.log)
	if err != nil {
		return err
	}
	defer func() { _ = lf.Close() }()
	cmd.Stdout, cmd.Stderr = lf, lf
	_ = os.Remove(r.result)
	r.proc, err = local.StartProcess(fmt.Sprintf("k6 runner %d (%d VUs)", r.index, r.inv.VUs), cmd, log)
	return err
}

// lateWriter discards writes until its writer is set (the log file is created once the
// run file passed every check).
type lateWriter struct{ w io.Writer }

// Write implements io.Writer.
func (l *lateWriter) Write(p []byte) (int, error) {
	if l.w == nil {
		return len(p), nil
	}
	return l.w.Write(p)
}

// waitRunners waits until every runner exited, ctx ends (interrupted), timeout passes, or a
// runner fails (crashed).
func waitRunners(ctx context.Context, runners []*runner, timeout time.Duration) (interrupted, timedOut bool, crashed *runner) {
	deadline := time.NewTimer(max(timeout, time.Second))
	defer deadline.Stop()
	exited := make(chan *runner, len(runners))
	for _, r := range runners {
		go func() { <-r.proc.Done(); exited <- r }()
	}
	for range runners {
		select {
		case r := <-exited:
			if r.proc.ExitCode() != 0 {
				return false, false, r
			}
		case <-ctx.Done():
			return true, false, nil
		case <-deadline.C:
			return false, true, nil
		}
	}
	return false, false, nil
}

// waitAll waits up to d for every runner to exit.
func waitAll(runners []*runner, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for _, r := range runners {
		select {
		case <-r.proc.Done():
		case <-t.C:
			return
		}
	}
}

func stopRunners(runners []*runner) {
	for _, r := range runners {
		if r != nil && r.proc != nil {
			r.proc.Stop(5 * time.Second)
		}
	}
}

// collect merges the runners' result documents. The result is partial when the run was
// stopped early (k6 marks its documents) or a runner failed or left no document; failed
// reports the latter.
func collect(runners []*runner, crashed *runner, stopped bool) (*results.Document, bool, error) {
	var docs []*results.Document
	var reasons []string
	failed := crashed != nil
	for _, r := range runners {
		name := r.inv.Env[plan.EnvRunner]
		code := r.proc.ExitCode()
		doc, err := readDocument(r.result)
		if err != nil {
			failed = true
			reasons = append(reasons, fmt.Sprintf("%s: no result document (k6 %s, see %s)", name, exitText(code), r.log))
			continue
		}
		if code != 0 && (!stopped || r == crashed) {
			failed = true
			doc.Partial = true
			doc.PartialReasons = append(doc.PartialReasons, fmt.Sprintf("%s: k6 %s (see %s)", name, exitText(code), r.log))
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		// The first runner that failed holds the cause; the others were stopped because of it.
		first := runners[0]
		if crashed != nil {
			first = crashed
		}
		return nil, true, fmt.Errorf("no runner wrote results:\n  %s%s", strings.Join(reasons, "\n  "), logTail(first.log))
	}
	doc, err := results.Merge(docs...)
	if err != nil {
		return nil, true, fmt.Errorf("merging runner results: %w", err)
	}
	if len(reasons) > 0 {
		doc.Partial = true
		doc.PartialReasons = append(doc.PartialReasons, reasons...)
	}
	if stopped && !doc.Partial {
		doc.Partial = true
		doc.PartialReasons = append(doc.PartialReasons, "run stopped before its end")
	}
	return doc, failed, nil
}

// exitText describes a process exit code.
func exitText(code int) string {
	if code < 0 {
		return "killed by a signal"
	}
	return fmt.Sprintf("exit code %d", code)
}

// logTail is the end of a runner log for error messages.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "\nlast lines of " + path + ":\n  " + strings.Join(lines, "\n  ")
}

// writeReports writes report.md, results.json (summary) and merged.json (result document).
func writeReports(dir, name string, doc *results.Document, sum results.Summary) error {
	var md, js, merged bytes.Buffer
	if err := results.RenderMarkdown(&md, "benchrun: "+name, sum); err != nil {
		return err
	}
	if err := results.RenderJSON(&js, sum); err != nil {
		return err
	}
	if err := results.Encode(&merged, doc); err != nil {
		return err
	}
	for f, b := range map[string][]byte{"report.md": md.Bytes(), "results.json": js.Bytes(), "merged.json": merged.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// planSpec decodes the scenario plan of an invocation.
func planSpec(inv plan.Invocation) (plan.Spec, error) {
	var s plan.Spec
	err := jsonUnmarshal([]byte(inv.Env[plan.EnvPlan]), &s)
	return s, err
}

// approxScenario is the duration of the first scenario for the start line.
func approxScenario(s plan.Spec) string {
	if len(s.Scenarios) == 0 {
		return "0s"
	}
	return (time.Duration(s.Scenarios[0].DurationMs) * time.Millisecond).String()
}

// describeEndpoints lists endpoints for the log line.
func describeEndpoints(eps []v1alpha1.Endpoint) string {
	if len(eps) == 0 {
		return ""
	}
	parts := make([]string, len(eps))
	for i, e := range eps {
		parts[i] = e.Role + " " + e.Address
	}
	return ": " + strings.Join(parts, ", ")
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
