package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/verdict"
)

// exitThresholds is benchrun run's exit code when the run completed but its thresholds
// were not met (the CI gate): distinct from 1 (the run itself failed).
const exitThresholds = 3

// gate is benchrun run's verdict: spec.thresholds evaluated on the merged figures, relative
// ones against --baseline DIR (an earlier run's out dir or merged.json).
type gate struct {
	baselineDir *string
	baseName    string
	baseline    []v1alpha1.ScenarioResult
}

// addGateFlags registers --baseline.
func addGateFlags(fs *flag.FlagSet) *gate {
	return &gate{baselineDir: fs.String("baseline", "", "an earlier run's out dir (or merged.json): deltas and relative thresholds such as 'cps >= -5%'")}
}

// load reads the baseline before anything starts; relative thresholds without one are refused.
func (g *gate) load(run *v1alpha1.BenchmarkRun) error {
	if *g.baselineDir == "" {
		if hasRelativeThreshold(run.Spec.Thresholds) {
			return fmt.Errorf("spec.thresholds has relative thresholds (such as 'cps >= -5%%'): spec.baseline names a run in a cluster; locally give the baseline's out dir with --baseline DIR")
		}
		return nil
	}
	doc, err := readDocument(*g.baselineDir)
	if err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	g.baseName = defaultLabel(*g.baselineDir)
	g.baseline = verdict.FromSummaries(results.Summarize(doc, plan.SummaryOptions(run)).Scenarios)
	return nil
}

// judge prints the thresholds table and the comparison with the baseline (on stderr for the
// json and csv formats, so stdout stays parseable), writes verdict.md into the out dir and
// tells whether the verdict failed.
func (g *gate) judge(stdout, stderr io.Writer, format string, run *v1alpha1.BenchmarkRun, sum results.Summary, outDir string) (bool, error) {
	cur := verdict.FromSummaries(sum.Scenarios)
	v, table := verdict.Evaluate(run.Spec.Thresholds, cur, g.baseline)
	if len(table) == 0 && g.baseline == nil {
		return false, nil
	}
	w := stdout
	if format == "json" || format == "csv" {
		w = stderr
	}
	f, err := os.Create(outDir + "/verdict.md")
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	out := io.MultiWriter(w, f)
	if err := verdict.RenderThresholds(out, v, table); err != nil {
		return false, err
	}
	if g.baseline != nil {
		if err := verdict.RenderBaseline(out, "Against baseline "+g.baseName, cur, g.baseline); err != nil {
			return false, err
		}
	}
	return v == v1alpha1.VerdictFailed, nil
}

// hasRelativeThreshold tells whether a threshold is relative to a baseline.
func hasRelativeThreshold(ths []v1alpha1.Threshold) bool {
	for _, t := range ths {
		if e, err := verdict.Parse(t.Expr); err == nil && e.Relative {
			return true
		}
	}
	return false
}

// renderDeltas writes, for every column after the first, its deltas against the first (the baseline).
func renderDeltas(w io.Writer, labels []string, sums []results.Summary) error {
	if len(sums) < 2 {
		return nil
	}
	base := verdict.FromSummaries(sums[0].Scenarios)
	for i := 1; i < len(sums); i++ {
		if err := verdict.RenderBaseline(w, labels[i]+" against baseline "+labels[0], verdict.FromSummaries(sums[i].Scenarios), base); err != nil {
			return err
		}
	}
	return nil
}
