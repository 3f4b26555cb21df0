package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/suite"
)

// The kubectl plugin verbs (kubectl benchrun get|report|compare|watch) read BenchmarkRuns from
// the cluster of the current kubeconfig context and namespace, like other kubectl plugins.

// kube is a client for the current kubeconfig context and its namespace.
type kube struct {
	c  client.Client
	ns string
}

// clusterFlags registers --kubeconfig, --context and -n/--namespace and returns a connector.
func clusterFlags(fs *flag.FlagSet) func() (*kube, error) {
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	kctx := fs.String("context", "", "kubeconfig context (default: the current context)")
	ns := fs.String("namespace", "", "namespace (default: the context's namespace, else default)")
	fs.StringVar(ns, "n", "", "shorthand for --namespace")
	return func() (*kube, error) {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if *kubeconfig != "" {
			rules.ExplicitPath = *kubeconfig
		}
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: *kctx})
		cfg, err := cc.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		namespace := *ns
		if namespace == "" {
			if namespace, _, err = cc.Namespace(); err != nil {
				return nil, fmt.Errorf("kubeconfig: %w", err)
			}
		}
		scheme := runtime.NewScheme()
		_ = corev1.AddToScheme(scheme)
		_ = v1alpha1.AddToScheme(scheme)
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return nil, err
		}
		return &kube{c: c, ns: namespace}, nil
	}
}

// run reads one BenchmarkRun.
func (k *kube) run(ctx context.Context, name string) (*v1alpha1.BenchmarkRun, error) {
	var run v1alpha1.BenchmarkRun
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: name}, &run); err != nil {
		return nil, fmt.Errorf("BenchmarkRun %s/%s: %w", k.ns, name, err)
	}
	return &run, nil
}

// summary reads a run's merged results from its report ConfigMap (results.json).
func (k *kube) summary(ctx context.Context, run *v1alpha1.BenchmarkRun) (results.Summary, error) {
	var s results.Summary
	if run.Status.Report == nil {
		return s, fmt.Errorf("BenchmarkRun %s has no results yet (phase %s)", run.Name, run.Status.Phase)
	}
	var cm corev1.ConfigMap
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: run.Status.Report.ConfigMapName}, &cm); err != nil {
		return s, fmt.Errorf("report of %s: %w", run.Name, err)
	}
	if err := json.Unmarshal([]byte(cm.Data["results.json"]), &s); err != nil {
		return s, fmt.Errorf("report of %s: results.json: %w", run.Name, err)
	}
	return s, nil
}

// onCluster tells whether report/compare arguments name cluster runs rather than local
// files: true when no positional argument exists as a path (flag values are skipped).
func onCluster(args []string) bool {
	valued := map[string]bool{"output": true, "trim-percent": true, "title": true, "label": true, "baseline": true,
		"n": true, "namespace": true, "kubeconfig": true, "context": true, "o": true, "format": true}
	named := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if name := strings.TrimLeft(a, "-"); valued[name] && !strings.Contains(name, "=") {
				i++
			}
			continue
		}
		if _, err := os.Stat(a); err == nil {
			return false
		}
		named = true
	}
	return named
}

// cmdGet lists the namespace's runs: phase, verdict, target, best CPS, age.
func cmdGet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("get", "[-n NAMESPACE] [RUN...]", stderr)
	connect := clusterFlags(fs)
	names, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	k, err := connect()
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun get: %v\n", err)
		return exitFailed
	}
	var list v1alpha1.BenchmarkRunList
	if err := k.c.List(ctx, &list, client.InNamespace(k.ns)); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun get: %v\n", err)
		return exitFailed
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 3, ' ', 0)
	_, _ = fmt.Fprintln(tw, "NAME\tPHASE\tVERDICT\tTARGET\tBEST CPS\tAGE")
	shown := 0
	for _, r := range list.Items {
		if len(names) > 0 && !slices.Contains(names, r.Name) {
			continue
		}
		kind := ""
		if r.Status.Target != nil {
			kind = r.Status.Target.Kind
		}
		phase := dash(string(r.Status.Phase))
		if q := r.Status.QueuePosition; q != "" {
			phase += " " + q // Queued 2/3: second of three waiting
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, phase, dash(string(r.Status.Verdict)),
			dash(kind), dash(r.Status.BestCPS), age(r.CreationTimestamp.Time))
		shown++
	}
	_ = tw.Flush()
	suites, err := listSuites(ctx, k, names, stdout)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun get: %v\n", err)
		return exitFailed
	}
	if shown+suites == 0 && len(names) > 0 {
		_, _ = fmt.Fprintf(stderr, "benchrun get: no BenchmarkRun %s in namespace %s\n", strings.Join(names, ", "), k.ns)
		return exitFailed
	}
	return exitOK
}

// listSuites prints the namespace's BenchmarkSuites (those named, if any) after the runs:
// phase, verdict, child runs ended/total, reference, age. It prints nothing without suites
// (or without the suite CRD installed) and returns how many it printed.
func listSuites(ctx context.Context, k *kube, names []string, w io.Writer) (int, error) {
	var list v1alpha1.BenchmarkSuiteList
	if err := k.c.List(ctx, &list, client.InNamespace(k.ns)); err != nil {
		if meta.IsNoMatchError(err) || kerrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, err
	}
	var rows []v1alpha1.BenchmarkSuite
	for _, s := range list.Items {
		if len(names) == 0 || slices.Contains(names, s.Name) {
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 {
		return 0, nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	_, _ = fmt.Fprintln(tw, "\nSUITE\tPHASE\tVERDICT\tRUNS\tREFERENCE\tAGE")
	for _, s := range rows {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, dash(string(s.Status.Phase)), dash(string(s.Status.Verdict)),
			dash(s.Status.Progress), suite.Reference(&s.Spec), age(s.CreationTimestamp.Time))
	}
	return len(rows), tw.Flush()
}

// printSuiteReport prints a suite's report.md, or with --output json its combined table
// (table.json), from the suite's report ConfigMap.
func printSuiteReport(ctx context.Context, k *kube, s *v1alpha1.BenchmarkSuite, output, format string, w io.Writer) error {
	if format != "all" || output == "csv" {
		return fmt.Errorf("BenchmarkSuite %s: its report is report.md (--output table or markdown) or table.json (--output json); --format and csv apply to runs: report a child run, such as %s", s.Name, firstChild(s))
	}
	if s.Status.Report == nil {
		return fmt.Errorf("BenchmarkSuite %s has no report yet (phase %s, %s child runs ended)", s.Name, dash(string(s.Status.Phase)), dash(s.Status.Progress))
	}
	var cm corev1.ConfigMap
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: s.Status.Report.ConfigMapName}, &cm); err != nil {
		return fmt.Errorf("report of %s: %w", s.Name, err)
	}
	key := "report.md"
	if output == "json" {
		key = "table.json"
	}
	_, err := io.WriteString(w, cm.Data[key])
	return err
}

// firstChild names a suite's first child run (or "<suite>-<variant>-r1").
func firstChild(s *v1alpha1.BenchmarkSuite) string {
	if len(s.Status.Children) > 0 {
		return s.Status.Children[0].Name
	}
	return s.Name + "-<variant>-r1"
}

// dash is s or "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// age formats how long ago t was, like kubectl.
func age(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// cmdClusterReport prints a run's report from the cluster: the seed tables, thresholds and deltas.
func cmdClusterReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", "RUN [--output table|markdown|json|csv] [--format all|ya|echo|packetd|ycsb] [--html [-o report.html]] [-n NAMESPACE]", stderr)
	output := fs.String("output", "table", "output format: table, markdown, json or csv")
	format := fs.String("format", "all", "table shape: all (the operator's report), ya, echo, packetd or ycsb")
	html := fs.Bool("html", false, "write one self-contained HTML page (tables, charts, data) of the report ConfigMap")
	out := fs.String("o", "", "with --html: the file to write (default: standard output)")
	connect := clusterFlags(fs)
	names, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if err := checkOutput(*output); err != nil || len(names) != 1 {
		_, _ = fmt.Fprintln(stderr, "benchrun report: give one BenchmarkRun name (or result files / out dirs)")
		return exitUsage
	}
	if err := checkFormat(*format, *output); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report: %v\n", err)
		return exitUsage
	}
	k, err := connect()
	switch {
	case err == nil && *html:
		err = clusterHTML(ctx, k, names[0], *out, stdout)
	case err == nil:
		err = printClusterReport(ctx, k, names[0], *output, *format, stdout)
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun report: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// printClusterReport prints report.md as the operator wrote it, results.json / CSV, or one
// seed shape's tables rendered from results.json.
func printClusterReport(ctx context.Context, k *kube, name, output, format string, w io.Writer) error {
	run, err := k.run(ctx, name)
	if kerrors.IsNotFound(err) {
		var s v1alpha1.BenchmarkSuite
		if k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: name}, &s) == nil {
			return printSuiteReport(ctx, k, &s, output, format, w)
		}
	}
	if err != nil {
		return err
	}
	if output == "json" || output == "csv" || format != "all" {
		s, err := k.summary(ctx, run)
		if err != nil {
			return err
		}
		if format != "all" {
			return results.RenderShape(w, format, run.Name, s)
		}
		return render(w, output, "", s)
	}
	if run.Status.Report == nil {
		return fmt.Errorf("BenchmarkRun %s has no results yet (phase %s)", run.Name, run.Status.Phase)
	}
	var cm corev1.ConfigMap
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: run.Status.Report.ConfigMapName}, &cm); err != nil {
		return fmt.Errorf("report of %s: %w", run.Name, err)
	}
	_, err = io.WriteString(w, cm.Data["report.md"])
	return err
}

// clusterHTML writes the HTML report of a run from its report ConfigMap (report.md,
// results.json, resources.json and the charts).
func clusterHTML(ctx context.Context, k *kube, name, out string, stdout io.Writer) error {
	run, err := k.run(ctx, name)
	if kerrors.IsNotFound(err) {
		var s v1alpha1.BenchmarkSuite
		if k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: name}, &s) == nil {
			return suiteHTML(ctx, k, &s, out, stdout)
		}
	}
	if err != nil {
		return err
	}
	if run.Status.Report == nil {
		return fmt.Errorf("BenchmarkRun %s has no results yet (phase %s)", run.Name, run.Status.Phase)
	}
	var cm corev1.ConfigMap
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: run.Status.Report.ConfigMapName}, &cm); err != nil {
		return fmt.Errorf("report of %s: %w", run.Name, err)
	}
	files := map[string][]byte{}
	for key, v := range cm.Data {
		files[key] = []byte(v)
	}
	return writeHTML(out, stdout, fmt.Sprintf("%s (generation %d)", run.Name, run.Generation), files)
}

// suiteHTML writes the HTML report of a suite from its report ConfigMap (report.md,
// table.json, cps.svg, percentiles.svg).
func suiteHTML(ctx context.Context, k *kube, s *v1alpha1.BenchmarkSuite, out string, stdout io.Writer) error {
	if s.Status.Report == nil {
		return fmt.Errorf("BenchmarkSuite %s has no report yet (phase %s, %s child runs ended)", s.Name, dash(string(s.Status.Phase)), dash(s.Status.Progress))
	}
	var cm corev1.ConfigMap
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: s.Status.Report.ConfigMapName}, &cm); err != nil {
		return fmt.Errorf("report of %s: %w", s.Name, err)
	}
	files := map[string][]byte{}
	for key, v := range cm.Data {
		files[key] = []byte(v)
	}
	return writeSuiteHTML(out, stdout, fmt.Sprintf("BenchmarkSuite %s (generation %d)", s.Name, s.Generation), files)
}

// cmdClusterCompare compares runs side by side, columns named by run, with deltas against
// the first run or --baseline RUN.
func cmdClusterCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("compare", "RUN RUN... [--baseline RUN] [-n NAMESPACE]", stderr)
	baseline := fs.String("baseline", "", "the run the others are compared with (default: the first)")
	connect := clusterFlags(fs)
	names, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if *baseline != "" {
		names = append([]string{*baseline}, slices.DeleteFunc(names, func(n string) bool { return n == *baseline })...)
	}
	if len(names) < 2 {
		_, _ = fmt.Fprintln(stderr, "benchrun compare: give two or more BenchmarkRun names (or result files / out dirs)")
		return exitUsage
	}
	k, err := connect()
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun compare: %v\n", err)
		return exitFailed
	}
	sums := make([]results.Summary, 0, len(names))
	for _, n := range names {
		run, err := k.run(ctx, n)
		var s results.Summary
		if err == nil {
			s, err = k.summary(ctx, run)
		}
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "benchrun compare: %v\n", err)
			return exitFailed
		}
		sums = append(sums, s)
	}
	if err := errors.Join(results.RenderComparison(stdout, names, sums), renderDeltas(stdout, names, sums)); err != nil {
		_, _ = fmt.Fprintf(stderr, "benchrun compare: %v\n", err)
		return exitFailed
	}
	return exitOK
}
