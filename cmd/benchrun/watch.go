package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// cmdWatch follows a run (or a BenchmarkSuite, watchSuite) in the cluster: one line per
// change of phase or progress, then the report. Exit code like benchrun run: 0 Succeeded, 3 thresholds not met, 1 failed.
// While the load runs, live calls/s per scenario come from status.live (the runners' progress).
func cmdWatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("watch", "RUN|SUITE [--interval 2s] [--timeout 0] [-n NAMESPACE]", stderr)
	interval := fs.Duration("interval", 2*time.Second, "how often the run is read")
	timeout := fs.Duration("timeout", 0, "give up after this long (0: never)")
	connect := clusterFlags(fs)
	names, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(names) != 1 || *interval <= 0 {
		_, _ = fmt.Fprintln(stderr, "benchrun watch: give one BenchmarkRun or BenchmarkSuite name (and a positive --interval)")
		return exitUsage
	}
	k, err := connect()
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun watch: %v\n", err)
		return exitFailed
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	if _, err := k.run(ctx, names[0]); kerrors.IsNotFound(err) && k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: names[0]}, &v1alpha1.BenchmarkSuite{}) == nil {
		return watchSuite(ctx, k, names[0], *interval, stdout, stderr)
	}
	return follow(ctx, *interval, stdout, stderr, func() (string, func() int, error) {
		run, err := k.run(ctx, names[0])
		if err != nil {
			return "", nil, err
		}
		if finished := run.Status.Phase == v1alpha1.PhaseSucceeded || run.Status.Phase == v1alpha1.PhaseFailed; finished &&
			run.Status.ObservedGeneration == run.Generation {
			return progressLine(run), func() int { return watchEnd(ctx, k, run, stdout, stderr) }, nil
		}
		return progressLine(run), nil, nil
	})
}

// follow polls every interval until what it watches ends: step reads it and returns its
// progress line and, once it has ended, end (which prints the report and gives the exit
// code). A line is printed, with the time, whenever it changes; a read error or the end of ctx
// fails the watch.
func follow(ctx context.Context, interval time.Duration, stdout, stderr io.Writer, step func() (line string, end func() int, err error)) int {
	last := ""
	for {
		line, end, err := step()
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "benchrun watch: %v\n", err)
			return exitFailed
		}
		if line != last {
			_, _ = fmt.Fprintf(stdout, "%s  %s\n", time.Now().Format("15:04:05"), line)
			last = line
		}
		if end != nil {
			return end()
		}
		select {
		case <-ctx.Done():
			_, _ = fmt.Fprintf(stderr, "benchrun watch: %v\n", ctx.Err())
			return exitFailed
		case <-time.After(interval):
		}
	}
}

// progressLine is phase, runner counts and the latest progress message.
func progressLine(run *v1alpha1.BenchmarkRun) string {
	st := run.Status
	line := fmt.Sprintf("%s  phase %s", run.Name, dash(string(st.Phase)))
	if st.Runners != nil {
		line += fmt.Sprintf("  runners %d/%d ready, %d finished, %d failed", st.Runners.Ready, st.Runners.Desired, st.Runners.Succeeded, st.Runners.Failed)
	}
	if st.LoadStartTime != nil && st.CompletionTime == nil {
		line += fmt.Sprintf("  load running %s", time.Since(st.LoadStartTime.Time).Round(time.Second))
	}
	if st.Phase == v1alpha1.PhaseRunning {
		line += liveText(st.Live)
	}
	for _, typ := range []string{v1alpha1.ConditionSucceeded, v1alpha1.ConditionLoadComplete, v1alpha1.ConditionRunnersReady, v1alpha1.ConditionTargetReady} {
		if c := meta.FindStatusCondition(st.Conditions, typ); c != nil && c.Message != "" && (typ != v1alpha1.ConditionSucceeded || st.CompletionTime != nil) {
			return line + "  " + c.Message
		}
	}
	return line
}

// watchEnd prints the finished run's report (and verdict) and returns the exit code.
func watchEnd(ctx context.Context, k *kube, run *v1alpha1.BenchmarkRun, stdout, stderr io.Writer) int {
	if run.Status.Report != nil {
		if err := printClusterReport(ctx, k, run.Name, "markdown", "all", stdout); err != nil {
			_, _ = fmt.Fprintf(stderr, "benchrun watch: %v\n", err)
		}
	}
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	switch {
	case run.Status.Phase == v1alpha1.PhaseSucceeded:
		return exitOK
	case c != nil && (c.Reason == v1alpha1.ReasonThresholdsNotMet || c.Reason == v1alpha1.ReasonAbortedOnThreshold):
		return exitThresholds
	}
	return exitFailed
}

// maxLiveShown bounds the scenarios of the live figures on one line.
const maxLiveShown = 4

// liveText is the live figures, e.g. "  live get 12,345 calls/s p99 1.9ms, set 9,876 calls/s p99 2ms".
func liveText(l *v1alpha1.LiveStatus) string {
	if l == nil || len(l.Scenarios) == 0 {
		return ""
	}
	parts := make([]string, 0, maxLiveShown+1)
	for i, sc := range l.Scenarios {
		if i == maxLiveShown {
			parts = append(parts, fmt.Sprintf("+%d more", len(l.Scenarios)-i))
			break
		}
		p := fmt.Sprintf("%s %s calls/s p99 %sms", sc.Name, results.FormatThousands(sc.CPS, 0), strconv.FormatFloat(sc.P99Ms, 'g', 3, 64))
		if sc.Errors > 0 {
			p += fmt.Sprintf(" %d errors", sc.Errors)
		}
		parts = append(parts, p)
	}
	return "  live " + strings.Join(parts, ", ")
}
