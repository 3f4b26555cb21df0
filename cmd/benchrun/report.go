package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/suite"
	"github.com/benchrun/benchrun/internal/target"
	"github.com/benchrun/benchrun/internal/validation"
)

// loadRunFile validates a run file and returns its BenchmarkRun or its BenchmarkSuite
// (exactly one of the two): the only one in the file, or the one named.
func loadRunFile(ctx context.Context, path, name string) (*v1alpha1.BenchmarkRun, *v1alpha1.BenchmarkSuite, *validation.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	v, err := validation.New()
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := v.ParseFile(ctx, bytes.NewReader(data))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	names := make([]string, 0, len(f.Runs)+len(f.Suites))
	for _, r := range f.Runs {
		if r.Name == name || (name == "" && len(f.Runs)+len(f.Suites) == 1) {
			return r, nil, f, nil
		}
		names = append(names, "BenchmarkRun "+r.Name)
	}
	for _, s := range f.Suites {
		if s.Name == name || (name == "" && len(f.Runs)+len(f.Suites) == 1) {
			return nil, s, f, nil
		}
		names = append(names, "BenchmarkSuite "+s.Name)
	}
	switch {
	case len(names) == 0:
		return nil, nil, nil, fmt.Errorf("%s holds no BenchmarkRun and no BenchmarkSuite", path)
	case name == "":
		return nil, nil, nil, fmt.Errorf("%s holds %d objects to run (%s): pick one with --name", path, len(names), strings.Join(names, ", "))
	}
	return nil, nil, nil, fmt.Errorf("%s: no BenchmarkRun or BenchmarkSuite named %q (it holds %s)", path, name, strings.Join(names, ", "))
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", "-f run.yaml", stderr)
	file := fs.String("f", "", "run file (YAML or JSON; may also hold Secrets)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 || *file == "" {
		_, _ = fmt.Fprintln(stderr, "benchrun validate: give the run file with -f run.yaml")
		return exitUsage
	}
	data, err := os.ReadFile(*file)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun validate: %v\n", err)
		return exitFailed
	}
	v, err := validation.New()
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun validate: %v\n", err)
		return exitFailed
	}
	f, err := v.ParseFile(ctx, bytes.NewReader(data))
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun validate: %s: %v\n", *file, err)
		return exitFailed
	}
	for _, r := range f.Runs {
		names := make([]string, len(r.Spec.Load.Scenarios))
		for i, s := range r.Spec.Load.Scenarios {
			names[i] = s.Name
		}
		_, _ = fmt.Fprintf(stdout, "%s: BenchmarkRun %q is valid: target %s, %d × %d VUs, scenarios %s\n", *file, r.Name,
			describeTarget(&r.Spec.Target), r.Spec.Load.Workers, r.Spec.Load.TasksPerWorker, strings.Join(names, ", "))
	}
	for _, s := range f.Suites {
		children, _ := suite.Expand(s) // ParseFile expanded it already
		names := make([]string, len(s.Spec.Variants))
		for i, v := range s.Spec.Variants {
			names[i] = v.Name
		}
		_, _ = fmt.Fprintf(stdout, "%s: BenchmarkSuite %q is valid: %d child runs, variants %s (reference %s), repeat %d\n", *file, s.Name,
			len(children), strings.Join(names, ", "), suite.Reference(&s.Spec), s.Spec.Repeat)
	}
	return exitOK
}

// describeTarget is a short description of a target spec: its kind label (target.Label).
func describeTarget(t *v1alpha1.TargetSpec) string {
	if l := target.Label(t); l != "" {
		return l
	}
	return "none"
}

// readDocument decodes a result document; a directory means its merged.json.
func readDocument(path string) (*results.Document, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "merged.json")
	}
	return results.DecodeFile(path)
}

// render writes a summary in one of the output formats.
func render(w io.Writer, format, title string, s results.Summary) error {
	switch format {
	case "json":
		return results.RenderJSON(w, s)
	case "csv":
		return results.RenderCSV(w, s)
	}
	return results.RenderMarkdown(w, title, s)
}

// checkFormat checks report's --format: all, or one of the seed shapes, which are markdown
// tables (so only with --output table or markdown).
func checkFormat(format, output string) error {
	if format == "all" {
		return nil
	}
	if !slices.Contains(results.Shapes, format) {
		return fmt.Errorf("--format %q: must be one of all, %s", format, strings.Join(results.Shapes, ", "))
	}
	if output != "table" && output != "markdown" {
		return fmt.Errorf("--format %s prints that shape's markdown tables: use it with --output table or markdown, not %s", format, output)
	}
	return nil
}

func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", "[--output table|markdown|json|csv] [--format all|ya|echo|packetd|ycsb] [--trim-percent P] [--html [-o report.html]] FILE|DIR...", stderr)
	html := fs.Bool("html", false, "write one self-contained HTML page (tables, charts, data) instead of the tables")
	out := fs.String("o", "", "with --html: the file to write (default: standard output)")
	output := fs.String("output", "table", "output format: table, markdown, json or csv")
	format := fs.String("format", "all", "table shape: all (each scenario type picks its seed's shape), ya, echo, packetd or ycsb")
	trim := fs.Float64("trim-percent", 10, "percentage of calls dropped at each end for CPS")
	title := fs.String("title", "", "heading of the markdown report")
	files, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if err := checkOutput(*output); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report: %v\n", err)
		return exitUsage
	}
	if err := checkFormat(*format, *output); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report: %v\n", err)
		return exitUsage
	}
	if len(files) == 0 {
		_, _ = fmt.Fprintln(stderr, "benchrun report: give one or more result files (runner-*.json, merged.json) or out dirs")
		return exitUsage
	}
	if len(files) == 1 && isSuiteDir(files[0]) {
		return reportSuite(files[0], *output, *format, *title, *out, *html, stdout, stderr)
	}
	docs := make([]*results.Document, 0, len(files))
	for _, f := range files {
		doc, err := readDocument(f)
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "benchrun report: %v\n", err)
			return exitFailed
		}
		docs = append(docs, doc)
	}
	merged, err := results.Merge(docs...)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report: merging: %v\n", err)
		return exitFailed
	}
	opts := results.DefaultOptions()
	opts.TrimFraction = *trim / 100
	sum := results.Summarize(merged, opts)
	if *html {
		return reportHTML(files, *title, *out, merged, sum, stdout, stderr)
	}
	if *format != "all" {
		if err := results.RenderShape(stdout, *format, *title, sum); err != nil {
			_, _ = fmt.Fprintf(stderr, "benchrun report: --format %s: %v\n", *format, err)
			return exitFailed
		}
		return exitOK
	}
	if err := render(stdout, *output, *title, sum); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// reportHTML writes the HTML report of local results (report --html).
func reportHTML(paths []string, title, out string, merged *results.Document, sum results.Summary, stdout, stderr io.Writer) int {
	given := title != ""
	if !given {
		title = "benchrun: " + defaultLabel(paths[0])
	}
	files, err := localReportFiles(paths, title, merged, sum)
	if md, _, _ := strings.Cut(string(files[lifecycle.ReportMarkdown]), "\n"); !given && strings.HasPrefix(md, "## ") {
		title = strings.TrimPrefix(md, "## ") // an out dir's own title (benchrun: NAME)
	}
	if err == nil {
		err = writeHTML(out, stdout, title, files)
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report --html: %v\n", err)
		return exitFailed
	}
	return exitOK
}

func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("compare", "[--label a,b,...] FILE|DIR...", stderr)
	labelFlag := fs.String("label", "", "comma-separated column labels, one per file (default: file or directory names)")
	trim := fs.Float64("trim-percent", 10, "percentage of calls dropped at each end for CPS")
	files, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(files) == 0 {
		_, _ = fmt.Fprintln(stderr, "benchrun compare: give two or more result files or out dirs")
		return exitUsage
	}
	var labels []string
	if *labelFlag != "" {
		labels = strings.Split(*labelFlag, ",")
		if len(labels) != len(files) {
			_, _ = fmt.Fprintf(stderr, "benchrun compare: %d labels for %d files\n", len(labels), len(files))
			return exitUsage
		}
	} else {
		for _, f := range files {
			labels = append(labels, defaultLabel(f))
		}
	}
	opts := results.DefaultOptions()
	opts.TrimFraction = *trim / 100
	sums := make([]results.Summary, 0, len(files))
	for _, f := range files {
		doc, err := readDocument(f)
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "benchrun compare: %v\n", err)
			return exitFailed
		}
		sums = append(sums, results.Summarize(doc, opts))
	}
	if err := results.RenderComparison(stdout, labels, sums); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun compare: %v\n", err)
		return exitFailed
	}
	if err := renderDeltas(stdout, labels, sums); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun compare: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// defaultLabel names a result file in a comparison: its name without .json, or its
// directory's name for merged.json and out dirs.
func defaultLabel(path string) string {
	path = filepath.Clean(path)
	base := strings.TrimSuffix(filepath.Base(path), ".json")
	if base == "merged" || base == "results" {
		return filepath.Base(filepath.Dir(path))
	}
	return base
}
