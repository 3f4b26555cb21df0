package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/suite"
	"github.com/benchrun/benchrun/internal/validation"
	"github.com/benchrun/benchrun/internal/verdict"
)

// SuiteDocument is the file in a suite's out dir holding the suite with its status (the
// children, the combined table, the verdict): `benchrun report DIR` reads it.
const SuiteDocument = "suite.json"

// notRun is the reason of children left out after a failure without continueOnFailure (the
// operator's words).
const notRun = "NotRun: an earlier child run failed and spec.continueOnFailure is false"

// localSuite is one `benchrun run` of a BenchmarkSuite: its children (suite.Expand, in the
// operator's interleaved order) one after another through the local run path, each in its
// own subdirectory of the out dir, then the suite's report (suite.Conclude, suite.ReportFiles:
// the same table and verdict as the operator's).
type localSuite struct {
	flags    *localRun // the flags given: every child runs with them
	s        *v1alpha1.BenchmarkSuite
	f        *validation.File
	children []suite.Child
	outs     []suite.Outcome
	t0       time.Time
	stopped  atomic.Bool // Ctrl-C or SIGTERM: no further child starts
}

// catchInterrupt notes the first Ctrl-C (or SIGTERM) so no further child starts (a running
// child stops on it by its own handler), then lets a second one kill benchrun; the returned
// function stops listening.
func (ls *localSuite) catchInterrupt() func() {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
			ls.stopped.Store(true)
		case <-done:
		}
		signal.Stop(ch)
	}()
	return func() { close(done) }
}

// runSuite runs a suite locally; the exit code is a run's: 1 when a child failed, 3 when
// the suite's verdict failed, 130 when interrupted.
func runSuite(ctx context.Context, l *localRun, s *v1alpha1.BenchmarkSuite, f *validation.File) int {
	switch {
	case l.output == "csv":
		_, _ = fmt.Fprintln(l.stderr, "benchrun run: --output csv: a suite prints its combined table as table, markdown or json")
		return exitUsage
	case *l.gate.baselineDir != "":
		_, _ = fmt.Fprintln(l.stderr, "benchrun run: --baseline: a suite compares its variants with its reference variant; --baseline is for a BenchmarkRun")
		return exitUsage
	}
	ls := &localSuite{flags: l, s: s, f: f, t0: time.Now()}
	if err := ls.check(); err != nil {
		return l.fail(err)
	}
	if l.outDir == "" {
		l.outDir = filepath.Join("benchrun-results", s.Name+"-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(l.outDir, 0o755); err != nil {
		return l.fail(err)
	}
	_, _ = fmt.Fprintf(l.stderr, "benchrun: suite %s: %d child runs (%d variants, repeat %d), one after another; results in %s\n",
		s.Name, len(ls.children), len(s.Spec.Variants), max(s.Spec.Repeat, 1), l.outDir)
	ls.warnImages()
	if s.Spec.Parallel {
		_, _ = fmt.Fprintln(l.stderr, "benchrun: spec.parallel: on one machine the child runs run one after another all the same")
	}
	stopSignals := ls.catchInterrupt()
	defer stopSignals()
	interrupted := ls.runChildren(ctx)
	code, err := ls.conclude(interrupted)
	if err != nil {
		return l.fail(err)
	}
	return code
}

// check expands the suite and checks each distinct child (one per variant and sweep point:
// repetitions share their spec) as `benchrun run` checks a run, before anything starts: a
// variant that cannot run here fails the suite at once, naming the child and its variant.
func (ls *localSuite) check() error {
	children, err := suite.Expand(ls.s)
	if err != nil {
		return err
	}
	ls.children = children
	for _, c := range suite.Distinct(children) {
		if err := ls.child("").check(ls.childRun(c), ls.f); err != nil {
			return fmt.Errorf("suite %s: child run %s (variant %s) cannot run locally: %w", ls.s.Name, c.Name, c.Variant, err)
		}
	}
	return nil
}

// child is a run with the suite's flags writing into outDir; its summary goes only to its
// out dir (stdout gets the suite's table).
func (ls *localSuite) child(outDir string) *localRun {
	l := ls.flags
	return &localRun{stdout: io.Discard, stderr: l.stderr, file: l.file, nRunners: l.nRunners, output: "table",
		outDir: outDir, k6Flag: l.k6Flag, verbose: l.verbose, remoteWrite: l.remoteWrite, gate: l.gate, logW: &lateWriter{}}
}

// childRun is the BenchmarkRun of a child: the operator's name, labels and spec.
func (ls *localSuite) childRun(c *suite.Child) *v1alpha1.BenchmarkRun {
	return &v1alpha1.BenchmarkRun{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkRun"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ls.s.Namespace, Labels: map[string]string{
			suite.LabelSuite: ls.s.Name, suite.LabelVariant: c.Variant, suite.LabelRepetition: strconv.Itoa(int(c.Repetition)),
		}},
		Spec: *c.Spec.DeepCopy(),
	}
}

// runChildren runs the children in order, recording each one's phase and results; after a
// failure without continueOnFailure the rest are marked failed (NotRun). It tells whether
// the user interrupted the suite (the rest are then not run either).
func (ls *localSuite) runChildren(ctx context.Context) (interrupted bool) {
	s := ls.s
	s.Status.Phase = v1alpha1.SuiteRunning
	s.Status.Children = make([]v1alpha1.SuiteChild, len(ls.children))
	ls.outs = make([]suite.Outcome, len(ls.children))
	stop := false
	for i := range ls.children {
		c := &ls.children[i]
		sc := &s.Status.Children[i]
		*sc = v1alpha1.SuiteChild{Name: c.Name, Variant: c.Variant, Sweep: c.Sweep(), Repetition: c.Repetition}
		ls.outs[i] = suite.Outcome{Variant: c.Variant, Sweep: c.Sweep(), Repetition: c.Repetition, Failed: true}
		interrupted = interrupted || ls.stopped.Load()
		if stop || interrupted {
			sc.Phase, sc.Reason = v1alpha1.PhaseFailed, notRun
			if interrupted {
				sc.Reason = "NotRun: the suite was interrupted"
			}
			continue
		}
		_, _ = fmt.Fprintf(ls.flags.stderr, "benchrun: suite %s: child run %d/%d: %s (variant %s%s, repetition %d)\n",
			s.Name, i+1, len(ls.children), c.Name, c.Variant, sweepText(c), c.Repetition)
		code := ls.runChild(ctx, c, sc, &ls.outs[i])
		interrupted = code == exitInterrupted
		stop = sc.Phase == v1alpha1.PhaseFailed && s.Spec.ContinueOnFailure != nil && !*s.Spec.ContinueOnFailure
		s.Status.Progress = fmt.Sprintf("%d/%d", i+1, len(ls.children))
	}
	s.Status.Progress = fmt.Sprintf("%d/%d", len(ls.children), len(ls.children))
	return interrupted
}

// sweepText is ", sweep <point>" or "".
func sweepText(c *suite.Child) string {
	if len(c.Point) == 0 {
		return ""
	}
	return ", sweep " + c.Sweep()
}

// runChild runs one child in <out dir>/<child name> and records its phase, reason and
// results; it returns the child's exit code.
func (ls *localSuite) runChild(ctx context.Context, c *suite.Child, sc *v1alpha1.SuiteChild, out *suite.Outcome) int {
	dir := filepath.Join(ls.flags.outDir, c.Name)
	l := ls.child(dir)
	code := exitFailed
	if err := l.check(ls.childRun(c), ls.f); err != nil {
		_ = l.fail(err)
	} else {
		code = l.execute(ctx)
	}
	if l.summary != nil {
		out.Results = verdict.FromSummaries(l.summary.Scenarios)
	}
	sc.Phase = v1alpha1.PhaseFailed
	switch {
	case code == exitOK:
		sc.Phase, out.Failed = v1alpha1.PhaseSucceeded, false
	case l.failure != nil:
		sc.Reason = results.OneLine(l.failure.Error(), 500)
	case code == exitThresholds:
		sc.Reason = v1alpha1.ReasonThresholdsNotMet + ": see " + filepath.Join(c.Name, "verdict.md")
	case code == exitInterrupted:
		sc.Reason = "Interrupted: the user stopped the suite"
	default:
		sc.Reason = "the load did not complete (see " + filepath.Join(c.Name, "benchrun.log") + ")"
	}
	if sc.Phase == v1alpha1.PhaseFailed {
		_, _ = fmt.Fprintf(ls.flags.stderr, "benchrun: suite %s: child run %s (variant %s, repetition %d) failed: %s\n",
			ls.s.Name, c.Name, c.Variant, c.Repetition, sc.Reason)
	}
	return code
}

// conclude writes the suite's report into the out dir (report.md, table.json, cps.svg,
// percentiles.svg and suite.json), prints the combined table and returns the exit code:
// failed children first (as the operator's ChildFailed), then the verdict.
func (ls *localSuite) conclude(interrupted bool) (int, error) {
	s, l := ls.s, ls.flags
	table := suite.Conclude(s, ls.outs)
	failed := suite.FailedChildren(s.Status.Children)
	s.Status.Phase = v1alpha1.SuiteSucceeded
	if failed > 0 || s.Status.Verdict == v1alpha1.VerdictFailed || interrupted {
		s.Status.Phase = v1alpha1.SuiteFailed
	}
	now := metav1.Now()
	s.Status.CompletionTime = &now
	files, err := suite.ReportFiles(s, table, ls.outs)
	if err != nil {
		return exitFailed, err
	}
	doc, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return exitFailed, err
	}
	files[SuiteDocument] = doc
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(l.outDir, name), b, 0o644); err != nil {
			return exitFailed, err
		}
	}
	if err := printSuite(l.stdout, l.output, files); err != nil {
		return exitFailed, err
	}
	_, _ = fmt.Fprintf(l.stderr, "benchrun: suite %s %s in %.0fs: %d child runs, %d failed; verdict %s; wrote report.md, table.json, the charts and suite.json in %s\n",
		s.Name, s.Status.Phase, time.Since(ls.t0).Seconds(), len(s.Status.Children), failed, verdictOrNone(s.Status.Verdict), l.outDir)
	switch {
	case interrupted:
		return exitInterrupted, nil
	case failed > 0:
		return exitFailed, nil
	case s.Status.Verdict == v1alpha1.VerdictFailed:
		_, _ = fmt.Fprintf(l.stderr, "benchrun: suite %s: %s: %s\n", s.Name, v1alpha1.ReasonThresholdsNotMet, suite.ThresholdSummary(s.Status.Thresholds))
		return exitThresholds, nil
	}
	return exitOK, nil
}

// printSuite prints a suite's report: report.md (table, markdown) or table.json (json).
func printSuite(w io.Writer, output string, files map[string][]byte) error {
	name := suite.ReportMarkdown
	if output == "json" {
		name = suite.ReportTable
	}
	_, err := w.Write(files[name])
	return err
}

// verdictOrNone is the verdict or "none".
func verdictOrNone(v v1alpha1.Verdict) string {
	if v == "" {
		return "none"
	}
	return string(v)
}

// isSuiteDir tells whether path is a suite's out dir (it holds suite.json).
func isSuiteDir(path string) bool {
	st, err := os.Stat(filepath.Join(path, SuiteDocument))
	return err == nil && st.Mode().IsRegular()
}

// reportSuite prints the report of a suite's out dir (`benchrun report DIR`): report.md
// rendered again from suite.json (table, markdown), the combined table (json), or with
// --html the suite's HTML page (written to out).
func reportSuite(dir, output, format, title, out string, html bool, stdout, stderr io.Writer) int {
	switch {
	case html:
		return reportSuiteHTML(dir, title, out, stdout, stderr)
	case output == "csv" || format != "all":
		_, _ = fmt.Fprintf(stderr, "benchrun report: %s is a suite's out dir: its combined table prints as table, markdown or json (no --format shapes, no csv); a child run's directory takes them\n", dir)
		return exitUsage
	}
	b, err := os.ReadFile(filepath.Join(dir, SuiteDocument))
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report: %v\n", err)
		return exitFailed
	}
	var s v1alpha1.BenchmarkSuite
	if err := json.Unmarshal(b, &s); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report: %s: %v\n", filepath.Join(dir, SuiteDocument), err)
		return exitFailed
	}
	if output == "json" {
		b, err = os.ReadFile(filepath.Join(dir, suite.ReportTable)) // every row (status.table is bounded)
		if err == nil {
			_, err = stdout.Write(b)
		}
	} else {
		err = suite.RenderMarkdown(stdout, &s)
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// warnImages warns of variants that change the Redis image or version: locally the
// redis-server (valkey-server) on PATH runs whatever they name, so they measure the same
// server as the template unless they change something else too.
func (ls *localSuite) warnImages() {
	for _, v := range ls.s.Spec.Variants {
		if r := v.Redis; r != nil && (r.Image != "" || r.Version != "") {
			_, _ = fmt.Fprintf(ls.flags.stderr, "benchrun: warning: variant %s sets redis image or version %q: locally the %s-server on PATH runs "+
				"whatever its version; only its engine and config change here\n", v.Name, r.Image+r.Version, engineName(r.Engine))
		}
	}
}

// engineName is the engine's server name prefix: redis unless valkey.
func engineName(e v1alpha1.RedisEngine) string {
	if e == v1alpha1.EngineValkey {
		return "valkey"
	}
	return "redis"
}

// reportSuiteHTML writes the HTML page of a suite's out dir from its report.md, table.json,
// cps.svg and percentiles.svg (when there).
func reportSuiteHTML(dir, title, out string, stdout, stderr io.Writer) int {
	files := map[string][]byte{}
	for _, name := range []string{suite.ReportMarkdown, suite.ReportTable, suite.ReportChart} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "benchrun report --html: %v\n", err)
			return exitFailed
		}
		files[name] = b
	}
	if b, err := os.ReadFile(filepath.Join(dir, suite.ReportPercentiles)); err == nil { // absent when no child has results
		files[suite.ReportPercentiles] = b
	}
	if title == "" {
		title = "benchrun: " + defaultLabel(dir)
		if first, _, _ := strings.Cut(string(files[suite.ReportMarkdown]), "\n"); strings.HasPrefix(first, "# ") {
			title = strings.TrimPrefix(first, "# ") // BenchmarkSuite NAME
		}
	}
	if err := writeSuiteHTML(out, stdout, title, files); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report --html: %v\n", err)
		return exitFailed
	}
	return exitOK
}
