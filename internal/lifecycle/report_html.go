package lifecycle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"regexp"
	"strings"

	"github.com/benchrun/benchrun/internal/results"
)

// ReportHTML is the name of the self-contained HTML report (benchrun report --html).
const ReportHTML = "report.html"

// HTMLDataID is the id of the HTML report's embedded JSON data block: {"title", "summary"
// (results.json), "charts" (the chart file names, in the order shown)}.
const HTMLDataID = "benchrun-data"

// htmlData is the HTML report's embedded JSON data: a run's summary, or a suite's table.
type htmlData struct {
	Title   string          `json:"title"`
	Summary json.RawMessage `json:"summary,omitempty"`
	Table   json.RawMessage `json:"table,omitempty"`
	Charts  []string        `json:"charts"`
}

// htmlChart is one inlined chart: its file name, title and SVG element.
type htmlChart struct {
	Name, Title string
	SVG         template.HTML
}

// svgTitle matches a chart's title element (the first one is the document's).
var svgTitle = regexp.MustCompile(`<title>([^<]*)</title>`)

// htmlPage is what the page template renders.
type htmlPage struct {
	Title    string
	Suite    bool // a suite's page: no run summary table
	Summary  results.Summary
	Tables   template.HTML
	Charts   []htmlChart
	Data     template.JS
	FmtCPS   func(float64) string
	FmtCount func(int64) string
}

// HTMLReport renders one self-contained HTML page (no network at view time: CSS, charts and
// data inlined) from a report's files: a summary table from results.json, report.md's tables as
// HTML tables, every chart (the SVG files, in ChartOrder) and results.json embedded as
// <script type="application/json" id="benchrun-data">. Every text from the run is escaped.
func HTMLReport(title string, files map[string][]byte) ([]byte, error) {
	var sum results.Summary
	if err := json.Unmarshal(files[ReportJSON], &sum); err != nil {
		return nil, fmt.Errorf("%s: %w", ReportJSON, err)
	}
	md := strings.TrimPrefix(string(files[ReportMarkdown]), "## "+title+"\n") // the page's own heading already
	page := htmlPage{Title: title, Summary: sum, Tables: markdownHTML(md),
		FmtCPS: func(v float64) string { return results.FormatThousands(v, 2) }, FmtCount: func(n int64) string { return results.FormatThousands(float64(n), 0) }}
	var names []string
	page.Charts, names = htmlCharts(files)
	data, err := json.Marshal(htmlData{Title: title, Summary: json.RawMessage(compactJSON(files[ReportJSON])), Charts: names})
	if err != nil {
		return nil, err
	}
	return renderPage(page, data)
}

// suiteTable is a suite report's combined table (internal/suite.ReportTable).
const suiteTable = "table.json"

// SuiteHTMLReport renders a BenchmarkSuite's report files (report.md, table.json and the
// charts, such as cps.svg) as one self-contained HTML page like HTMLReport's: report.md's
// tables (the combined table, the thresholds, the children) as HTML tables, every chart
// inlined and table.json embedded as the data block's "table". Every text is escaped.
func SuiteHTMLReport(title string, files map[string][]byte) ([]byte, error) {
	var rows []json.RawMessage
	if err := json.Unmarshal(files[suiteTable], &rows); err != nil {
		return nil, fmt.Errorf("%s: %w", suiteTable, err)
	}
	md := string(files[ReportMarkdown])
	if first, rest, ok := strings.Cut(md, "\n"); ok && strings.HasPrefix(first, "# ") {
		md = rest // "# BenchmarkSuite NAME": the page's own heading already
	}
	page := htmlPage{Title: title, Suite: true, Tables: markdownHTML(md)}
	var names []string
	page.Charts, names = htmlCharts(files)
	data, err := json.Marshal(htmlData{Title: title, Table: json.RawMessage(compactJSON(files[suiteTable])), Charts: names})
	if err != nil {
		return nil, err
	}
	return renderPage(page, data)
}

// htmlCharts are a report's charts (the SVG files) inlined, in ChartOrder, and their names.
func htmlCharts(files map[string][]byte) ([]htmlChart, []string) {
	var names []string
	for name := range files {
		if IsChart(name) {
			names = append(names, name)
		}
	}
	names = ChartOrder(names)
	out := make([]htmlChart, 0, len(names))
	for _, name := range names {
		svg := string(files[name])
		if i := strings.Index(svg, "<svg"); i >= 0 { // inline the element, without any XML prolog
			svg = svg[i:]
		}
		title := name
		if m := svgTitle.FindStringSubmatch(svg); m != nil {
			title = html.UnescapeString(m[1]) // escaped again by the template
		}
		out = append(out, htmlChart{Name: name, Title: title, SVG: template.HTML(svg)}) // #nosec G203 -- drawn by internal/charts, text escaped
	}
	return out, names
}

// renderPage executes the page template with the embedded data block.
func renderPage(page htmlPage, data []byte) ([]byte, error) {
	page.Data = template.JS(data) // #nosec G203 -- json.Marshal escapes <, > and &: no "</script>" inside
	var b bytes.Buffer
	if err := htmlTemplate.Execute(&b, page); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// compactJSON is js without insignificant space, "<", ">" and "&" escaped (as json.Marshal
// would), so it cannot end the script element it is embedded in.
func compactJSON(js []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, js); err != nil {
		return []byte("null")
	}
	out := bytes.ReplaceAll(b.Bytes(), []byte("<"), []byte(`\u003c`))
	out = bytes.ReplaceAll(out, []byte(">"), []byte(`\u003e`))
	return bytes.ReplaceAll(out, []byte("&"), []byte(`\u0026`))
}

// markdownHTML converts the markdown benchrun's reports use (## and ### headings, pipe tables,
// ``` blocks, paragraphs with **bold** and `code`) to HTML, escaping all text.
func markdownHTML(md string) template.HTML {
	var b strings.Builder
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "```"):
			b.WriteString("<pre>")
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				b.WriteString(template.HTMLEscapeString(lines[i]) + "\n")
			}
			b.WriteString("</pre>\n")
		case strings.HasPrefix(l, "|"):
			j := i
			for j < len(lines) && strings.HasPrefix(lines[j], "|") {
				j++
			}
			writeTable(&b, lines[i:j])
			i = j - 1
		case strings.HasPrefix(l, "### "):
			fmt.Fprintf(&b, "<h4>%s</h4>\n", inline(l[4:]))
		case strings.HasPrefix(l, "## "):
			fmt.Fprintf(&b, "<h3>%s</h3>\n", inline(l[3:]))
		case strings.TrimSpace(l) != "":
			fmt.Fprintf(&b, "<p>%s</p>\n", inline(l))
		}
	}
	return template.HTML(b.String()) // #nosec G203 -- every text escaped above
}

// bold and code match **bold** and `code` in escaped text.
var (
	bold = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	code = regexp.MustCompile("`([^`]+)`")
)

// inline escapes a line of text and renders its **bold** and `code` spans.
func inline(s string) string {
	s = template.HTMLEscapeString(s)
	s = bold.ReplaceAllString(s, "<strong>$1</strong>")
	return code.ReplaceAllString(s, "<code>$1</code>")
}

// cells splits a table row on the pipes not escaped by a backslash into its unescaped cells.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch c := row[i]; {
		case c == '\\' && i+1 < len(row):
			i++
			switch row[i] {
			case 'n':
				cur.WriteByte('\n')
			case 'r':
				cur.WriteByte('\r')
			case '|':
				cur.WriteByte('|')
			default:
				cur.WriteByte('\\')
				cur.WriteByte(row[i])
			}
		case c == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// writeTable writes a pipe table (header, alignment row, rows) as an HTML table, columns
// right-aligned where the alignment row says so.
func writeTable(b *strings.Builder, rows []string) {
	if len(rows) < 2 {
		for _, r := range rows {
			fmt.Fprintf(b, "<p>%s</p>\n", inline(r))
		}
		return
	}
	var right []bool
	for _, a := range cells(rows[1]) {
		right = append(right, strings.HasSuffix(a, ":") && !strings.HasPrefix(a, ":"))
	}
	cell := func(tag string, k int, c string) {
		class := ""
		if k < len(right) && right[k] {
			class = ` class="num"`
		}
		fmt.Fprintf(b, "<%s%s>%s</%s>", tag, class, template.HTMLEscapeString(c), tag)
	}
	b.WriteString("<table>\n<thead><tr>")
	for k, c := range cells(rows[0]) {
		cell("th", k, c)
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range rows[2:] {
		b.WriteString("<tr>")
		for k, c := range cells(r) {
			cell("td", k, c)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
}

// htmlTemplate is the page: title, partial warning, summary table, report.md's tables, charts.
var htmlTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:1rem 2rem;color:#222;background:#fff}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.3rem;border-bottom:1px solid #ddd;padding-bottom:.3rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0 1.2rem;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.25rem .6rem;text-align:left;white-space:nowrap}
th{background:#f3f5f7}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tbody tr:nth-child(even){background:#fafbfc}
.scroll{overflow-x:auto}
.partial{background:#fff4e5;border-left:4px solid #D55E00;padding:.5rem 1rem}
figure{margin:1rem 0 2rem}
figure svg{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.8rem;color:#666}
nav{font-size:.85rem;line-height:1.6}
nav a{color:#0072B2}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<nav>{{if not .Suite}}<a href="#summary-section">Summary</a> · {{end}}<a href="#tables">Tables</a>{{range .Charts}} · <a href="#{{.Name}}">{{.Title}}</a>{{end}}</nav>
{{if not .Suite}}{{if .Summary.Partial}}<p class="partial"><strong>Partial results:</strong>{{range .Summary.PartialReasons}} {{.}};{{end}}</p>{{end}}
<h2 id="summary-section">Summary</h2>
<div class="scroll"><table id="summary">
<thead><tr><th>scenario</th><th>type</th><th class="num">calls</th><th class="num">errors</th><th class="num">CPS</th><th class="num">mean ms</th><th class="num">p50 ms</th><th class="num">p90 ms</th><th class="num">p99 ms</th><th class="num">p99.9 ms</th><th class="num">max ms</th></tr></thead>
<tbody>
{{range .Summary.Scenarios}}<tr data-scenario="{{.Name}}"><td>{{.Name}}</td><td>{{.Type}}</td><td class="num" data-field="calls" data-value="{{.Calls}}">{{call $.FmtCount .Calls}}</td><td class="num" data-field="errors" data-value="{{.Errors}}">{{call $.FmtCount .Errors}}</td><td class="num" data-field="cps" data-value="{{.CPS}}">{{call $.FmtCPS .CPS}}</td><td class="num" data-field="mean" data-value="{{.LatencyMs.Mean}}">{{.LatencyMs.Mean}}</td><td class="num" data-field="p50" data-value="{{.LatencyMs.P50}}">{{.LatencyMs.P50}}</td><td class="num" data-field="p90" data-value="{{.LatencyMs.P90}}">{{.LatencyMs.P90}}</td><td class="num" data-field="p99" data-value="{{.LatencyMs.P99}}">{{.LatencyMs.P99}}</td><td class="num" data-field="p999" data-value="{{.LatencyMs.P999}}">{{.LatencyMs.P999}}</td><td class="num" data-field="max" data-value="{{.LatencyMs.Max}}">{{.LatencyMs.Max}}</td></tr>
{{end}}</tbody>
</table></div>{{end}}
<h2 id="tables">Tables</h2>
<div class="scroll">
{{.Tables}}
</div>
{{if .Charts}}<h2>Charts</h2>
{{range .Charts}}<figure id="{{.Name}}" data-chart="{{.Name}}">
{{.SVG}}
<figcaption>{{.Title}} ({{.Name}})</figcaption>
</figure>
{{end}}{{end}}
<script type="application/json" id="benchrun-data">{{.Data}}</script>
</body>
</html>
`))
