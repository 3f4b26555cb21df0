package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sirupsen/logrus"
	"go.k6.io/k6/v2/errext"
	"go.k6.io/k6/v2/errext/exitcodes"
	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"

	"github.com/benchrun/benchrun/internal/results"
)

// OutputName is the k6 output name: `k6 run --out benchrun=FILE`.
const OutputName = "benchrun"

// ResultFileEnv names the environment variable giving the result file when --out benchrun has
// no argument.
const ResultFileEnv = "BENCHRUN_RESULT_FILE"

// Output is the k6 output that writes benchrun's result document when the test ends,
// interrupted or not. It ignores k6's metric samples: calls are recorded by the modules.
type Output struct {
	path   string
	runner string
	logger logrus.FieldLogger
	env    func(string) string
	live   *live           // nil unless BENCHRUN_REMOTE_WRITE_URL is set
	prog   *progressWriter // nil unless BENCHRUN_PROGRESS_FILE is set
}

// NewOutput is the constructor registered for `--out benchrun[=FILE]`.
func NewOutput(p output.Params) (output.Output, error) {
	path := p.ConfigArgument
	if path == "" {
		path = p.Environment[ResultFileEnv]
	}
	if path == "" {
		path = os.Getenv(ResultFileEnv)
	}
	if path == "" {
		return nil, fmt.Errorf("benchrun output: give a file (--out benchrun=FILE) or set %s", ResultFileEnv)
	}
	env := func(k string) string {
		if v, ok := p.Environment[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	return &Output{path: path, runner: runnerName(p.Environment), logger: p.Logger, env: env}, nil
}

// Description is shown by k6 run.
func (o *Output) Description() string { return "benchrun (" + o.path + ")" }

// Start starts the live metrics (remote write) and the progress file when configured:
// recording happens in the modules.
func (o *Output) Start() error {
	if o.env != nil {
		o.live = startLive(o.env, o.runner, o.logger)
		o.prog = startProgress(o.env, o.logger, o.live.remoteWrite)
	}
	return nil
}

// AddMetricSamples ignores k6's samples.
func (o *Output) AddMetricSamples([]metrics.SampleContainer) {}

// Stop writes the document of a test that ended normally.
func (o *Output) Stop() error { return o.StopWithTestError(nil) }

// StopWithTestError writes the document; a non-nil testErr (interrupt, abort, script error)
// marks it partial.
func (o *Output) StopWithTestError(testErr error) error {
	o.prog.finish()
	doc, err := recorders.document(o.runner)
	o.live.finish(doc) // the final push carries the exact totals
	if err != nil {
		return fmt.Errorf("benchrun output: %w", err)
	}
	if testErr != nil {
		doc.Partial = true
		doc.PartialReasons = append(doc.PartialReasons, o.runner+": "+partialReason(testErr))
	}
	if err := writeDocument(o.path, doc); err != nil {
		return fmt.Errorf("benchrun output: %w", err)
	}
	if o.logger != nil {
		o.logger.WithField("file", o.path).WithField("partial", doc.Partial).Info("benchrun result written")
	}
	return nil
}

// partialReason describes why a run stopped early without quoting the error text, which
// may carry script data (URLs, passwords).
func partialReason(err error) string {
	var ec errext.HasExitCode
	if errors.As(err, &ec) {
		switch ec.ExitCode() {
		case exitcodes.ExternalAbort:
			return "interrupted by a signal"
		case exitcodes.ScriptAborted:
			return "aborted by the script (test.abort)"
		case exitcodes.ThresholdsHaveFailed:
			return "thresholds failed and aborted the run"
		default:
			return fmt.Sprintf("test run ended with an error (k6 exit code %d)", ec.ExitCode())
		}
	}
	return "test run ended with an error"
}

// writeDocument writes doc to path atomically (temporary file + rename).
func writeDocument(path string, doc *results.Document) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".benchrun-*.json")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }() // no-op after the rename
	// Fitted to what a runner may store, exactly (coarser histograms and timelines, never
	// fewer calls): see results.Fit and SCHEMA.md's size budget.
	raw, _, err := results.Fit(doc, results.StoredBudget)
	if err == nil {
		_, err = f.Write(raw)
	}
	if err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

var _ output.WithStopWithTestError = (*Output)(nil)
