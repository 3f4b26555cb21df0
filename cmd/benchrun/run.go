package main

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/livemetrics"
	"github.com/benchrun/benchrun/internal/local"
	"github.com/benchrun/benchrun/internal/plan"
	liveprogress "github.com/benchrun/benchrun/internal/progress"
	"github.com/benchrun/benchrun/internal/results"
	brunner "github.com/benchrun/benchrun/internal/runner"
	"github.com/benchrun/benchrun/internal/target"
	"github.com/benchrun/benchrun/internal/validation"
)

// runnerStopGrace is how long interrupted runners may take to write their partial results.
const runnerStopGrace = 30 * time.Second

// runner is one local k6 process.
type runner struct {
	index    int
	inv      plan.Invocation
	script   string // entry script path
	api      string // k6 REST API address
	result   string // result document path
	progress string // live progress document path (abortOnFail)
	log      string
	proc     *local.Process
}

// localRun is one `benchrun run`: its flags, the checked run file, and what each phase
// leaves for the next. The phases mirror the operator's Reconcile (controllers/): check,
// provision the target, start the runners, watch the load, collect and report.
type localRun struct {
	stdout, stderr io.Writer
	file, name     string
	nRunners       int
	output, outDir string
	k6Flag         string
	verbose        bool
	gate           *gate

	run         *v1alpha1.BenchmarkRun
	root, k6    string
	scriptDir   string
	count       int
	withScripts plan.Option
	secrets     local.Secrets
	secretEnv   []string
	remoteWrite string // --prometheus-remote-write-url
	logW        *lateWriter
	target      local.Target
	t0          time.Time
	runners     []*runner
	spec        plan.Spec
	faults      *localFaults           // spec.faults being applied (faults.go)
	applied     []v1alpha1.FaultStatus // the faults applied, once the load ended
	probe       *brunner.ProbeReport   // the fault probe's report, once the load ended
	summary     *results.Summary       // the merged figures, once collected
	failure     error                  // why the run failed (fail), for a suite's child list
}

// loadOutcome is how the load ended.
type loadOutcome struct {
	interrupted, timedOut bool
	crashed               *runner
	aborted               string // why an abortOnFail threshold stopped the load
}

// stopped tells whether the load ended before its end.
func (o loadOutcome) stopped() bool {
	return o.interrupted || o.timedOut || o.crashed != nil || o.aborted != ""
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// 1. Flags.
	l, code := parseRunFlags(args, stdout, stderr)
	if l == nil {
		return code
	}
	// 2. Everything that can be checked is checked before anything starts.
	run, s, f, err := loadRunFile(ctx, l.file, l.name)
	if err != nil {
		return l.fail(err)
	}
	if s != nil {
		return runSuite(ctx, l, s, f) // suite.go: its children in turn, each as below
	}
	if err := l.check(run, f); err != nil {
		return l.fail(err)
	}
	return l.execute(ctx)
}

// execute runs a checked run: output directory, target, runners, load, collection and
// reports; the exit code says how it ended.
func (l *localRun) execute(ctx context.Context) int {
	closeLog, err := l.openOutput()
	if err != nil {
		return l.fail(err)
	}
	defer closeLog()

	// From here on processes run: Ctrl-C (SIGINT) and SIGTERM stop them cleanly. A second
	// Ctrl-C kills benchrun at once; its children die with it (parent-death signal).
	sigCtx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	go func() { <-sigCtx.Done(); stopSignals() }()

	// 3. Provision the target.
	if code, ok := l.provision(ctx, sigCtx); !ok {
		return code
	}
	defer func() { _ = l.target.Stop() }()

	// 4. Start the runners.
	if err := l.startRunners(sigCtx); err != nil {
		return l.fail(err)
	}
	defer stopRunners(l.runners)

	// 5. Watch the load, then stop what still runs.
	out := l.watch(sigCtx)
	l.endFaults(out)
	l.stop(out)
	l.warnRemoteWrite() // remotewrite.go: failed pushes to the remote-write endpoint

	// 6. Collect, merge and report.
	return l.collect(out)
}

// parseRunFlags reads run's flags; a nil localRun comes with the exit code.
func parseRunFlags(args []string, stdout, stderr io.Writer) (*localRun, int) {
	fs := newFlagSet("run", "-f run.yaml [--runners N] [--output table|markdown|json|csv] [--out-dir DIR] [--k6 PATH]", stderr)
	l := &localRun{stdout: stdout, stderr: stderr, logW: &lateWriter{}}
	fs.StringVar(&l.file, "f", "", "run file (YAML or JSON; may also hold the Secrets it references): a BenchmarkRun, or a BenchmarkSuite whose child runs run one after another")
	fs.StringVar(&l.name, "name", "", "the BenchmarkRun or BenchmarkSuite to run when the file holds several")
	fs.IntVar(&l.nRunners, "runners", 0, "number of local k6 runner processes (default: spec.load.runners.parallelism, else 1)")
	fs.StringVar(&l.output, "output", "table", "output format on stdout: table, markdown, json or csv (a suite: its report.md, or table.json with json)")
	fs.StringVar(&l.outDir, "out-dir", "", "directory for runner results and reports (default: benchrun-results/NAME-TIME); a suite's child runs each get a subdirectory")
	fs.StringVar(&l.k6Flag, "k6", "", "benchrun's k6 binary (default: next to benchrun, or bin/k6)")
	fs.BoolVar(&l.verbose, "v", false, "log every process started and stopped")
	fs.StringVar(&l.remoteWrite, "prometheus-remote-write-url", "",
		"Prometheus remote-write URL the runners stream live metrics to when the run sets no spec.collect.prometheusRemoteWriteURL")
	l.gate = addGateFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, flagExit(err)
	}
	switch {
	case len(pos) > 0:
		_, _ = fmt.Fprintf(stderr, "benchrun run: unexpected argument %q (give the run file with -f)\n", pos[0])
		return nil, exitUsage
	case l.file == "":
		_, _ = fmt.Fprintln(stderr, "benchrun run: give the run file with -f run.yaml")
		return nil, exitUsage
	case l.nRunners < 0:
		_, _ = fmt.Fprintln(stderr, "benchrun run: --runners must be at least 1")
		return nil, exitUsage
	}
	if l.remoteWrite != "" {
		if err := livemetrics.CheckURL(l.remoteWrite); err != nil {
			_, _ = fmt.Fprintf(stderr, "benchrun run: --prometheus-remote-write-url: %v\n", err)
			return nil, exitUsage
		}
	}
	if err := checkOutput(l.output); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun run: %v\n", err)
		return nil, exitUsage
	}
	return l, exitOK
}

// fail reports err and is the exit code of a failed run.
func (l *localRun) fail(err error) int {
	l.failure = err
	_, _ = fmt.Fprintf(l.stderr, "benchrun run: %v\n", err)
	return exitFailed
}

// check takes the run (of the run file f), finds k6, and plans every runner against
// placeholder endpoints (unsupported scenario types, too many runners), resolving the
// secrets the plan names, before a target is started.
func (l *localRun) check(run *v1alpha1.BenchmarkRun, f *validation.File) error {
	l.run = run
	err := l.gate.load(run)
	if err != nil {
		return err
	}
	if l.root, err = findRoot(); err != nil {
		return err
	}
	if l.k6, err = findK6(l.k6Flag, l.root); err != nil {
		return err
	}
	l.count = l.nRunners
	if l.count == 0 {
		l.count = max(1, int(run.Spec.Load.Runners.Parallelism))
	}
	l.scriptDir = filepath.Join(l.root, "scripts", "k6")
	scripts, err := scriptSources(run, f.Objects)
	if err != nil {
		return fmt.Errorf("%s: %w", l.file, err)
	}
	l.withScripts = plan.All(plan.WithScripts(scripts), plan.WithRemoteWriteDefault(l.remoteWrite))
	dry := target.DryRunEndpoints(&run.Spec.Target)
	for i := range l.count {
		if _, err := plan.ForRunnerIn(l.scriptDir, run, dry, i, l.count, l.withScripts); err != nil {
			return err
		}
	}
	if l.secrets, err = local.SecretsFrom(f.Objects); err != nil {
		return fmt.Errorf("%s: %w", l.file, err)
	}
	inv0, _ := plan.ForRunnerIn(l.scriptDir, run, dry, 0, l.count, l.withScripts)
	for _, se := range inv0.SecretEnv {
		v, err := l.secrets.Get(se.Secret)
		if err != nil {
			return fmt.Errorf("%s: %w", l.file, err)
		}
		l.secretEnv = append(l.secretEnv, se.Name+"="+v)
	}
	l.target, err = local.New(&run.Spec.Target, local.Options{
		Secrets: l.secrets, Log: l.logW, HeTuApp: filepath.Join(l.root, "examples", "hetu-bench"),
		ConfigMaps: configMaps(f.Objects), FollowMaster: len(run.Spec.Faults) > 0,
	})
	return err
}

// openOutput creates the output directory and benchrun.log, and removes the temporary
// directories of killed runs; the returned function closes the log.
func (l *localRun) openOutput() (func(), error) {
	if l.outDir == "" {
		l.outDir = filepath.Join("benchrun-results", l.run.Name+"-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(l.outDir, 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(l.outDir, "benchrun.log"))
	if err != nil {
		return nil, err
	}
	l.logW.w = logFile
	if l.verbose {
		l.logW.w = io.MultiWriter(logFile, l.stderr)
	}
	// A benchrun killed by SIGKILL took its processes with it (parent-death signal) but not
	// its temporary directories: remove those of owners no longer alive.
	removed, err := local.RemoveStale(local.Options{})
	for _, d := range removed {
		_, _ = fmt.Fprintf(l.logW, "removed stale temporary directory %s\n", d)
	}
	if len(removed) > 0 {
		_, _ = fmt.Fprintf(l.stderr, "benchrun: removed temporary directories left by killed runs: %d (listed in benchrun.log)\n", len(removed))
	}
	if err != nil {
		_, _ = fmt.Fprintf(l.stderr, "benchrun: removing temporary directories of killed runs: %v\n", err)
	}
	return func() { _ = logFile.Close() }, nil
}

// provision starts the target and waits until it is ready, within timeouts.targetReady; ok
// is false (with the exit code) when it did not become ready.
func (l *localRun) provision(ctx, sigCtx context.Context) (code int, ok bool) {
	readyTimeout := lifecycle.TargetReadyTimeout(l.run)
	l.t0 = time.Now()
	_, _ = fmt.Fprintf(l.stderr, "benchrun: %s: starting the %s target (ready timeout %s)\n", l.run.Name, describeTarget(&l.run.Spec.Target), readyTimeout)
	if err := local.StartWithin(sigCtx, l.target, readyTimeout); err != nil {
		if ctx.Err() == nil && sigCtx.Err() != nil {
			_, _ = fmt.Fprintln(l.stderr, "benchrun run: interrupted while starting the target; everything stopped")
			return exitInterrupted, false
		}
		return l.fail(err), false
	}
	_, _ = fmt.Fprintf(l.stderr, "benchrun: target ready in %.1fs%s\n", time.Since(l.t0).Seconds(), describeEndpoints(l.target.Endpoints()))
	return exitOK, true
}

// startRunners plans each runner against the target's endpoints, materialises its scripts
// in the output directory and starts its k6 process.
func (l *localRun) startRunners(sigCtx context.Context) error {
	eps := l.target.Endpoints()
	l.runners = make([]*runner, l.count)
	for i := range l.count {
		inv, err := plan.ForRunnerIn(l.scriptDir, l.run, eps, i, l.count, l.withScripts)
		if err != nil {
			return err
		}
		// Script scenarios: the plan's generated entry module and scripts go to a work dir.
		script, err := inv.Materialize(filepath.Join(l.outDir, "scripts", fmt.Sprintf("runner-%d", i)))
		if err != nil {
			return err
		}
		l.runners[i] = &runner{index: i, inv: inv, script: script,
			result: filepath.Join(l.outDir, fmt.Sprintf("runner-%d.json", i)), progress: progressFile(l.outDir, i),
			log: filepath.Join(l.outDir, fmt.Sprintf("runner-%d.log", i))}
	}
	l.spec, _ = planSpec(l.runners[0].inv)
	totalVUs := int(l.run.Spec.Load.Workers) * int(l.run.Spec.Load.TasksPerWorker)
	_, _ = fmt.Fprintf(l.stderr, "benchrun: %d scenario(s) × ~%s, %d VUs over %d local k6 runner(s); results in %s\n",
		len(l.spec.Scenarios), approxScenario(l.spec), totalVUs, l.count, l.outDir)
	paused := len(l.run.Spec.Faults) > 0 // faults: released together, so the load start is known
	for _, r := range l.runners {
		if err := r.start(l.k6, l.secretEnv, l.logW, liveprogress.HasAbortOnFail(l.run.Spec.Thresholds) || r.remoteWriteOn(), paused); err != nil {
			stopRunners(l.runners)
			return err
		}
	}
	if paused {
		return l.releaseWithFaults(sigCtx)
	}
	return nil
}

// watch shows progress until every runner exited, a runner failed, the run timeout
// (timeouts.run, counted from the target's start) passed, or the user interrupted.
func (l *localRun) watch(sigCtx context.Context) loadOutcome {
	var prog *progress
	if isTerminal(l.stderr) {
		prog = newProgress(l.stderr, l.spec, l.runners)
		go prog.run()
	}
	var out loadOutcome
	ctx, aborted, endAbort := l.startLiveAbort(sigCtx)
	out.interrupted, out.timedOut, out.crashed = waitRunners(ctx, l.runners, lifecycle.RunTimeout(l.run)-time.Since(l.t0))
	endAbort()
	if prog != nil {
		prog.stop()
	}
	if out.interrupted && sigCtx.Err() == nil {
		out.interrupted, out.aborted = false, aborted()
	}
	switch {
	case out.aborted != "":
		_, _ = fmt.Fprintf(l.stderr, "benchrun: %s: stopping the runners (they write partial results)\n", out.aborted)
	case out.interrupted:
		_, _ = fmt.Fprintln(l.stderr, "benchrun: interrupted: stopping the runners (they write partial results)")
	case out.timedOut:
		_, _ = fmt.Fprintf(l.stderr, "benchrun: run timeout (spec.timeouts.run) reached: stopping the runners\n")
	case out.crashed != nil:
		_, _ = fmt.Fprintf(l.stderr, "benchrun: k6 runner %d failed (%s, see %s): stopping the others\n",
			out.crashed.index, exitText(out.crashed.proc.ExitCode()), out.crashed.log)
	}
	return out
}

// stop lets runners of a stopped load write their partial results, then stops every
// process and the target.
func (l *localRun) stop(out loadOutcome) {
	if out.stopped() {
		for _, r := range l.runners {
			r.proc.Signal(syscall.SIGINT)
		}
		waitAll(l.runners, runnerStopGrace)
	}
	stopRunners(l.runners)
	if err := l.target.Stop(); err != nil {
		_, _ = fmt.Fprintf(l.stderr, "benchrun: cleaning up the target: %v\n", err)
	}
}

// collect merges the runners' documents, writes the reports and prints the summary; the
// exit code says whether the run was complete.
func (l *localRun) collect(out loadOutcome) int {
	doc, failed, err := collect(l.runners, out.crashed, out.stopped())
	if err != nil {
		return l.fail(err)
	}
	sum := results.Summarize(doc, plan.SummaryOptions(l.run))
	l.summary = &sum
	extra, err := l.faultSection(doc)
	if err != nil {
		return l.fail(fmt.Errorf("measuring the faults: %w", err))
	}
	if err := writeReports(l.outDir, l.run.Name, doc, sum, extra); err != nil {
		return l.fail(fmt.Errorf("writing reports: %w", err))
	}
	if err := render(l.stdout, l.output, "benchrun: "+l.run.Name, sum); err != nil {
		return l.fail(err)
	}
	thresholdsFailed, err := l.gate.judge(l.stdout, l.stderr, l.output, l.run, sum, l.outDir)
	if err != nil {
		return l.fail(err)
	}
	_, _ = fmt.Fprintf(l.stderr, "benchrun: done in %.0fs; wrote report.md, results.json and merged.json in %s\n", time.Since(l.t0).Seconds(), l.outDir)
	switch {
	case out.interrupted:
		return exitInterrupted
	case out.aborted != "":
		_, _ = fmt.Fprintf(l.stderr, "benchrun: %s: %s\n", liveprogress.ReasonAborted, out.aborted)
		appendVerdict(l.outDir, "\n"+liveprogress.ReasonAborted+": "+out.aborted+"\n")
		return exitThresholds
	case out.timedOut || failed:
		return exitFailed
	case thresholdsFailed:
		return exitThresholds
	}
	return exitOK
}

// start starts the runner's k6 process.
func (r *runner) start(k6 string, secretEnv []string, log io.Writer, withProgress, paused bool) error {
	port, err := local.FreePort()
	if err != nil {
		return err
	}
	r.api = "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(k6, lifecycle.K6Args(r.inv, paused, r.api, r.result, r.script)...)
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
	if withProgress {
		_ = os.Remove(r.progress)
		cmd.Env = append(cmd.Env, liveprogress.EnvFile+"="+r.progress, liveprogress.EnvInterval+"="+progressInterval)
	}
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

// collect merges the runners' result documents (lifecycle.Merge). The result is partial
// when the run was stopped early (k6 marks its documents) or a runner failed or left no
// document; failed reports the latter.
func collect(runners []*runner, crashed *runner, stopped bool) (*results.Document, bool, error) {
	rs := make([]lifecycle.Runner, len(runners))
	failed := crashed != nil
	for i, r := range runners {
		code := r.proc.ExitCode()
		rs[i].Name = r.inv.Env[plan.EnvRunner]
		doc, err := readDocument(r.result)
		if err != nil {
			failed = true
			rs[i].Missing = fmt.Sprintf("no result document (k6 %s, see %s)", exitText(code), r.log)
			continue
		}
		rs[i].Doc = doc
		if code != 0 && (!stopped || r == crashed) {
			failed = true
			rs[i].Failed = fmt.Sprintf("k6 %s (see %s)", exitText(code), r.log)
		}
	}
	doc, _, err := lifecycle.Merge(rs, stopped)
	if errors.Is(err, lifecycle.ErrNoResults) {
		// The first runner that failed holds the cause; the others were stopped because of it.
		first := runners[0]
		if crashed != nil {
			first = crashed
		}
		reasons := make([]string, len(rs))
		for i, r := range rs {
			reasons[i] = r.Name + ": " + r.Missing
		}
		return nil, true, fmt.Errorf("no runner wrote results:\n  %s%s", strings.Join(reasons, "\n  "), logTail(first.log))
	}
	if err != nil {
		return nil, true, err
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
func writeReports(dir, name string, doc *results.Document, sum results.Summary, extra string) error {
	files, err := lifecycle.Reports("benchrun: "+name, sum, doc, extra)
	if err != nil {
		return err
	}
	for f, b := range files {
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
