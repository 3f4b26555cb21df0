package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// watchSuite follows a BenchmarkSuite: one line per change of its phase, progress or the
// child run now going (with that child's own progress line), then the suite's report. Exit
// code like a run's: 0 Succeeded, 3 its verdict failed, 1 otherwise.
func watchSuite(ctx context.Context, k *kube, name string, interval time.Duration, stdout, stderr io.Writer) int {
	return follow(ctx, interval, stdout, stderr, func() (string, func() int, error) {
		var s v1alpha1.BenchmarkSuite
		if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: name}, &s); err != nil {
			return "", nil, fmt.Errorf("BenchmarkSuite %s/%s: %w", k.ns, name, err)
		}
		if (s.Status.Phase == v1alpha1.SuiteSucceeded || s.Status.Phase == v1alpha1.SuiteFailed) && s.Status.ObservedGeneration == s.Generation {
			return suiteLine(ctx, k, &s), func() int { return watchSuiteEnd(ctx, k, &s, stdout, stderr) }, nil
		}
		return suiteLine(ctx, k, &s), nil, nil
	})
}

// suiteLine is the suite's phase, child runs ended, and the child run now going with its
// progress line (read from the cluster; left out when it cannot be read).
func suiteLine(ctx context.Context, k *kube, s *v1alpha1.BenchmarkSuite) string {
	line := fmt.Sprintf("suite %s  phase %s", s.Name, dash(string(s.Status.Phase)))
	if s.Status.Progress != "" {
		line += "  " + s.Status.Progress + " child runs ended"
	}
	if s.Status.CompletionTime != nil {
		if c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionSucceeded); c != nil && c.Message != "" {
			return line + "  " + c.Message
		}
		return line
	}
	for _, c := range s.Status.Children {
		if c.Phase == v1alpha1.PhaseSucceeded || c.Phase == v1alpha1.PhaseFailed || c.Phase == "" {
			continue
		}
		if run, err := k.run(ctx, c.Name); err == nil {
			return line + "  now " + progressLine(run)
		}
		return line + "  now " + c.Name + " " + string(c.Phase)
	}
	return line
}

// watchSuiteEnd prints the ended suite's report and returns the exit code.
func watchSuiteEnd(ctx context.Context, k *kube, s *v1alpha1.BenchmarkSuite, stdout, stderr io.Writer) int {
	if s.Status.Report != nil {
		if err := printSuiteReport(ctx, k, s, "markdown", "all", stdout); err != nil {
			_, _ = fmt.Fprintf(stderr, "benchrun watch: %v\n", err)
		}
	}
	c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionSucceeded)
	switch {
	case s.Status.Phase == v1alpha1.SuiteSucceeded:
		return exitOK
	case c != nil && c.Reason == v1alpha1.ReasonThresholdsNotMet:
		return exitThresholds
	}
	return exitFailed
}
