package results

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// RenderMarkdown writes s as the tables ya publishes (pandas to_markdown, "pipe" format):
// calls per minute, average CPS, function execution time and return value distribution,
// with the same columns, number formats and padding, scenarios sorted by name. Statistics
// ya does not publish (errors, k999, standard deviation, error kinds) follow in extra tables,
// so the seed-shaped tables stay comparable. A non-empty title becomes a "## " heading, and
// partial results are flagged in a line before the tables. tcp.echo scenarios are written
// first in the echo-server shape instead (seed 002, render_echo.go).
func RenderMarkdown(w io.Writer, title string, s Summary) error {
	bw := bufio.NewWriter(w)
	writeHeading(bw, title, s)
	echo, rest := splitEcho(s.Scenarios) // tcp.echo scenarios in their own shape (render_echo.go)
	writeEchoMarkdown(bw, echo)
	if len(rest) == 0 && len(echo) > 0 {
		return bw.Flush()
	}
	scs := sortedByName(rest)
	writeYa(bw, scs)
	writePegasus(bw, s)
	writeProtocolTables(bw, s, true) // the Redis table, with the Redis shapes
	writeOpenMarkdown(bw, scs)
	writeProtocolTables(bw, s, false)
	bw.WriteString("\n")
	return bw.Flush()
}

// writeHeading writes the title as a "## " heading (when not empty) and the partial-results line.
func writeHeading(bw *bufio.Writer, title string, s Summary) {
	if title != "" {
		fmt.Fprintf(bw, "## %s\n\n", title)
	}
	if s.Partial {
		fmt.Fprintf(bw, "**PARTIAL RESULTS**: %s\n\n", partialText(s.PartialReasons))
	}
}

// writeYa writes ya's tables of scs (sorted by name), then the statistics ya does not publish.
func writeYa(bw *bufio.Writer, scs []ScenarioSummary) {
	if t := cpmTable(scs); t != nil {
		bw.WriteString("Calls Per Minute (CPM) Statistics:\n\n")
		t.write(bw)
		bw.WriteString("\n")
	}

	bw.WriteString("Average CPS (Calls Per Second) per Function:\n\n")
	t := &table{headers: []string{"", "CPS"}}
	for _, sc := range scs {
		t.rows = append(t.rows, []string{sc.Name, FormatThousands(sc.CPS, 2)})
	}
	t.write(bw)

	bw.WriteString("\nFunction Execution Time Statistics:\n\n")
	t = &table{
		headers: []string{"", "Mean", "k50", "k90", "k99", "Count", "Min", "Max", "Median"},
		right:   []bool{false, true, true, true, true, false, true, true, true},
	}
	for _, sc := range scs {
		l := sc.LatencyMs
		t.rows = append(t.rows, []string{sc.Name, formatG(l.Mean), formatG(l.P50), formatG(l.P90),
			formatG(l.P99), formatInt(sc.Calls), formatG(l.Min), formatG(l.Max), formatG(l.Median)})
	}
	t.write(bw)

	if t := distributionTable("return_value", scs, func(sc ScenarioSummary) []ValueCount { return sc.ReturnValues }); t != nil {
		bw.WriteString("\nReturn Value Distribution Statistics:\n\n")
		t.write(bw)
	}

	bw.WriteString("\nAdditional Statistics:\n\n")
	t = &table{
		headers: []string{"", "Errors", "Error %", "k999", "StdDev", "Duration (s)"},
		right:   []bool{false, false, true, true, true, true},
	}
	for _, sc := range scs {
		var errPct float64
		if sc.Calls > 0 {
			errPct = round2(float64(sc.Errors) * 100 / float64(sc.Calls))
		}
		t.rows = append(t.rows, []string{sc.Name, formatInt(sc.Errors), formatG(errPct),
			formatG(sc.LatencyMs.P999), formatG(sc.LatencyMs.StdDev), formatG(sc.DurationSeconds)})
	}
	t.write(bw)

	if t := distributionTable("error_kind", scs, func(sc ScenarioSummary) []ValueCount { return sc.ErrorKinds }); t != nil {
		bw.WriteString("\nError Kind Distribution Statistics:\n\n")
		t.write(bw)
	}
}

// cpmTable returns the calls-per-minute table, or nil when no scenario has calls.
func cpmTable(scs []ScenarioSummary) *table {
	minutes := 0
	for _, sc := range scs {
		minutes = max(minutes, len(sc.CallsPerMinute))
	}
	if minutes == 0 {
		return nil
	}
	t := &table{headers: []string{"benchmark"}}
	for i := 1; i <= minutes; i++ {
		t.headers = append(t.headers, fmt.Sprintf("%02d:%02d:%02d", i/60, i%60, 0))
	}
	for _, sc := range scs {
		row := make([]string, minutes+1)
		row[0] = sc.Name
		for i, n := range sc.CallsPerMinute {
			row[i+1] = formatInt(n)
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// distributionTable returns a value distribution table in ya's shape, or nil when empty.
func distributionTable(valueHeader string, scs []ScenarioSummary, values func(ScenarioSummary) []ValueCount) *table {
	t := &table{headers: []string{"", "benchmark", valueHeader, "count", "percentage"}}
	numeric := true
	for _, sc := range scs {
		for _, vc := range values(sc) {
			t.rows = append(t.rows, []string{strconv.Itoa(len(t.rows)), sc.Name, vc.Value,
				strconv.FormatInt(vc.Count, 10), formatG(vc.Percent)})
			numeric = numeric && (vc.Value == "" || isNumber(vc.Value))
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	// Like tabulate, a column whose values all read as numbers is right-aligned.
	t.right = []bool{true, false, numeric, true, true}
	return t
}

// RenderJSON writes s as indented JSON followed by a newline.
func RenderJSON(w io.Writer, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// csvHeader lists the columns of RenderCSV.
var csvHeader = []string{
	"name", "type", "calls", "errors", "cps",
	"mean_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "min_ms", "max_ms", "median_ms", "stddev_ms",
	"start", "end", "duration_seconds", "return_values", "error_kinds", "calls_per_minute", "partial",
}

// RenderCSV writes one CSV row per scenario (in summary order) after a header row. Lists
// are flattened into one cell: return values and error kinds as "value=count" joined by ";",
// calls per minute as counts joined by ";". Times are RFC 3339 in UTC. A run of tcp.echo
// scenarios only gets the echo shape's columns instead (render_echo.go).
func RenderCSV(w io.Writer, s Summary) error {
	if allEcho(s) {
		return renderEchoCSV(w, s) // the echo shape's columns (render_echo.go)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, sc := range s.Scenarios {
		l := sc.LatencyMs
		var start, end string
		if !sc.Start.IsZero() {
			start = sc.Start.UTC().Format(time.RFC3339Nano)
			end = sc.End.UTC().Format(time.RFC3339Nano)
		}
		cpm := make([]string, len(sc.CallsPerMinute))
		for i, n := range sc.CallsPerMinute {
			cpm[i] = strconv.FormatInt(n, 10)
		}
		row := []string{
			sc.Name, sc.Type, strconv.FormatInt(sc.Calls, 10), strconv.FormatInt(sc.Errors, 10), f(sc.CPS),
			f(l.Mean), f(l.P50), f(l.P90), f(l.P99), f(l.P999), f(l.Min), f(l.Max), f(l.Median), f(l.StdDev),
			start, end, f(sc.DurationSeconds), joinValues(sc.ReturnValues), joinValues(sc.ErrorKinds),
			strings.Join(cpm, ";"), strconv.FormatBool(s.Partial),
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// joinValues flattens a distribution to "value=count;value=count".
func joinValues(vcs []ValueCount) string {
	parts := make([]string, len(vcs))
	for i, vc := range vcs {
		parts[i] = vc.Value + "=" + strconv.FormatInt(vc.Count, 10)
	}
	return strings.Join(parts, ";")
}

// comparisonMetrics are the rows of RenderComparison, one table each.
var comparisonMetrics = []struct {
	title string
	right bool
	value func(ScenarioSummary) string
}{
	{"Average CPS (Calls Per Second)", false, func(sc ScenarioSummary) string { return FormatThousands(sc.CPS, 2) }},
	{"Mean (ms)", true, func(sc ScenarioSummary) string { return formatG(sc.LatencyMs.Mean) }},
	{"k50 (ms)", true, func(sc ScenarioSummary) string { return formatG(sc.LatencyMs.P50) }},
	{"k90 (ms)", true, func(sc ScenarioSummary) string { return formatG(sc.LatencyMs.P90) }},
	{"k99 (ms)", true, func(sc ScenarioSummary) string { return formatG(sc.LatencyMs.P99) }},
	{"k999 (ms)", true, func(sc ScenarioSummary) string { return formatG(sc.LatencyMs.P999) }},
	{"Max (ms)", true, func(sc ScenarioSummary) string { return formatG(sc.LatencyMs.Max) }},
	{"Count", false, func(sc ScenarioSummary) string { return formatInt(sc.Calls) }},
	{"Errors", false, func(sc ScenarioSummary) string { return formatInt(sc.Errors) }},
}

// RenderComparison writes one markdown table per metric (CPS, mean, k50, k90, k99, k999,
// max, count, errors) with a row per scenario name (sorted) and a column per label, so runs
// of the same load against different targets read side by side. labels[i] names sums[i]; a
// scenario missing from a run leaves its cell empty. Partial runs are flagged first.
func RenderComparison(w io.Writer, labels []string, sums []Summary) error {
	if len(labels) != len(sums) {
		return fmt.Errorf("results: %d labels for %d summaries", len(labels), len(sums))
	}
	bw := bufio.NewWriter(w)
	for i, s := range sums {
		if s.Partial {
			fmt.Fprintf(bw, "**PARTIAL RESULTS** for %s: %s\n\n", labels[i], partialText(s.PartialReasons))
		}
	}
	var names []string
	byRun := make([]map[string]ScenarioSummary, len(sums))
	for i, s := range sums {
		byRun[i] = make(map[string]ScenarioSummary, len(s.Scenarios))
		for _, sc := range s.Scenarios {
			byRun[i][sc.Name] = sc
			if !slices.Contains(names, sc.Name) {
				names = append(names, sc.Name)
			}
		}
	}
	slices.Sort(names)
	for mi, m := range comparisonMetrics {
		if mi > 0 {
			bw.WriteString("\n")
		}
		fmt.Fprintf(bw, "%s:\n\n", m.title)
		t := &table{headers: append([]string{""}, labels...), right: []bool{false}}
		for range labels {
			t.right = append(t.right, m.right)
		}
		for _, name := range names {
			row := []string{name}
			for i := range sums {
				cell := ""
				if sc, ok := byRun[i][name]; ok {
					cell = m.value(sc)
				}
				row = append(row, cell)
			}
			t.rows = append(t.rows, row)
		}
		t.write(bw)
	}
	return bw.Flush()
}

// partialText joins partial reasons for display.
func partialText(reasons []string) string {
	if len(reasons) == 0 {
		return "some runners did not finish; the numbers below cover only the data collected"
	}
	safe := make([]string, len(reasons))
	for i, r := range reasons {
		safe[i] = MarkdownText(r)
	}
	return strings.Join(safe, "; ")
}

// stripControl drops control characters other than line breaks (escaped by cellEscaper)
// and format characters (bidi overrides) from cell text.
func stripControl(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\r' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			return -1
		}
		return r
	}, s)
}

// sortedByName returns the scenarios sorted by name, as the seed tables list them.
func sortedByName(scs []ScenarioSummary) []ScenarioSummary {
	out := slices.Clone(scs)
	slices.SortStableFunc(out, func(a, b ScenarioSummary) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// table is a markdown table in tabulate's "pipe" format: every column as wide as its widest
// cell (header included, widths counted in characters like tabulate without wcwidth), one
// space of padding, ":" on the side of the alignment. Columns are left-aligned unless right
// says otherwise.
type table struct {
	headers []string
	right   []bool
	rows    [][]string
}

// cellEscaper keeps cell text (scenario names, return values: runner-written) from breaking
// the table or carrying HTML: ya's tables never need it.
var cellEscaper = strings.NewReplacer("|", `\|`, "\n", `\n`, "\r", `\r`, "<", "&lt;")

// write writes the table, ending with a newline, its cells escaped (cellEscaper).
func (t *table) write(w *bufio.Writer) {
	for _, row := range t.rows {
		for i, c := range row {
			row[i] = cellEscaper.Replace(stripControl(c))
		}
	}
	t.layout(w)
}

// WriteMarkdownTable writes a table in the seed tables' "pipe" format (as ya's tables: every
// column as wide as its widest cell, ":" on the side of the alignment; right says which
// columns are right-aligned). Headers and cells are written as given: the caller makes every
// runner- or user-written text safe first (MarkdownText).
func WriteMarkdownTable(w io.Writer, headers []string, right []bool, rows [][]string) error {
	bw := bufio.NewWriter(w)
	(&table{headers: headers, right: right, rows: rows}).layout(bw)
	return bw.Flush()
}

// FormatG formats a float as the seed tables do (tabulate's default, Python's "g"): 6
// significant digits, no trailing zeros.
func FormatG(v float64) string { return formatG(v) }

// FormatInt formats an integer with thousands separators, like Python's "{:,}".
func FormatInt(n int64) string { return formatInt(n) }

// layout writes the table's cells as they are, ending with a newline.
func (t *table) layout(w *bufio.Writer) {
	widths := make([]int, len(t.headers))
	for i, h := range t.headers {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range t.rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	right := func(i int) bool { return i < len(t.right) && t.right[i] }
	line := func(cells []string) {
		for i, c := range cells {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if right(i) {
				c = pad + c
			} else {
				c += pad
			}
			w.WriteString("| " + c + " ")
		}
		w.WriteString("|\n")
	}
	line(t.headers)
	for i, wd := range widths {
		if right(i) {
			w.WriteString("|" + strings.Repeat("-", wd+1) + ":")
		} else {
			w.WriteString("|:" + strings.Repeat("-", wd+1))
		}
	}
	w.WriteString("|\n")
	for _, row := range t.rows {
		line(row)
	}
}

// formatG formats a float like tabulate does by default (Python's format(v, "g")): 6
// significant digits, no trailing zeros, e.g. 54.8, 1270.4, 100, 0.
func formatG(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// formatInt formats an integer with thousands separators, like Python's "{:,}".
func formatInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// FormatThousands formats v with the given decimals and thousands separators, like Python's
// "{:,.2f}".
func FormatThousands(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil {
		return s
	}
	out := formatInt(n)
	if n == 0 && strings.HasPrefix(intPart, "-") {
		out = "-" + out
	}
	if frac != "" {
		out += "." + frac
	}
	return out
}

// isNumber reports whether s reads as a number, as tabulate decides a column is numeric.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}
