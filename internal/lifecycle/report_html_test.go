package lifecycle

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/internal/results"
)

// TestHTMLReport: the page inlines every chart, shows report.md's tables as HTML tables,
// embeds results.json and escapes every text from the run (a scenario named like a script).
func TestHTMLReport(t *testing.T) {
	doc := faultDoc(t)
	sum := results.Summarize(doc, results.DefaultOptions())
	files, err := Reports(chartHostileName, sum, doc, "\n**Faults**: `pause` <b>x</b>\n")
	if err != nil {
		t.Fatal(err)
	}
	page, err := HTMLReport(chartHostileName, files)
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if strings.Contains(s, "<script>alert") || strings.Contains(s, "<b>x</b>") {
		t.Error("run text is not escaped")
	}
	if n := strings.Count(s, "</script>"); n != 1 {
		t.Errorf("%d </script>, want 1 (the data block's end)", n)
	}
	if !strings.Contains(s, "<td>get&lt;script&gt;alert(1)&lt;/script&gt;&amp;&#34;|x</td>") {
		t.Error("the scenario's table cell is not its escaped name (with the pipe unescaped)")
	}
	if !strings.Contains(s, "<strong>Faults</strong>: <code>pause</code>") {
		t.Error("report.md's extra paragraph is not rendered")
	}
	for name := range files {
		if IsChart(name) && !strings.Contains(s, `data-chart="`+templateEscape(name)+`"`) {
			t.Errorf("chart %s not inlined", name)
		}
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="benchrun-data">(.*?)</script>`).FindStringSubmatch(s)
	if m == nil {
		t.Fatal("no data block")
	}
	var data struct {
		Title   string          `json:"title"`
		Summary results.Summary `json:"summary"`
		Charts  []string        `json:"charts"`
	}
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatal(err)
	}
	var want results.Summary
	if err := json.Unmarshal(files[ReportJSON], &want); err != nil {
		t.Fatal(err)
	}
	if data.Title != chartHostileName || !reflect.DeepEqual(data.Summary, want) || len(data.Charts) < 6 {
		t.Errorf("data block: %q, %d charts, summary equal: %v", data.Title, len(data.Charts), reflect.DeepEqual(data.Summary, want))
	}
	if got := cells(`| a\|b | c\nd |  |`); !reflect.DeepEqual(got, []string{"a|b", "c\nd", ""}) {
		t.Errorf("cells: %q", got)
	}
	if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) {
		t.Error("not an HTML document")
	}
}

// templateEscape escapes s as html/template does in an attribute.
func templateEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}

// TestSuiteHTMLReport: a suite's page shows report.md's tables (no run summary), inlines
// its chart, embeds table.json as the data block's table and escapes every text.
func TestSuiteHTMLReport(t *testing.T) {
	table := `[{"scenario":"get","variant":"a<script>x</script>","runs":2,"cps":{"mean":100}}]`
	md := "# BenchmarkSuite cmp\n\nPhase Succeeded · 2/2 child runs\n\n## Combined table\n\n| Scenario | Variant |\n|---|---|\n| get | a<script>x</script> |\n"
	svg := `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><title>CPS by variant</title><rect class="bar" height="5"/></svg>`
	page, err := SuiteHTMLReport("cmp", map[string][]byte{"report.md": []byte(md), "table.json": []byte(table), "cps.svg": []byte(svg)})
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if strings.Contains(s, "<script>x") || strings.Count(s, "</script>") != 1 {
		t.Error("suite text is not escaped")
	}
	if strings.Contains(s, `id="summary"`) || strings.Contains(s, "# BenchmarkSuite") || !strings.Contains(s, "<h3>Combined table</h3>") ||
		!strings.Contains(s, `data-chart="cps.svg"`) || !strings.Contains(s, "<figcaption>CPS by variant (cps.svg)") {
		t.Errorf("page:\n%s", s)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="benchrun-data">(.*?)</script>`).FindStringSubmatch(s)
	var data struct {
		Table  []map[string]any `json:"table"`
		Charts []string         `json:"charts"`
	}
	if m == nil || json.Unmarshal([]byte(m[1]), &data) != nil || len(data.Table) != 1 || data.Table[0]["variant"] != "a<script>x</script>" || len(data.Charts) != 1 {
		t.Errorf("data block: %+v", data)
	}
	if _, err := SuiteHTMLReport("cmp", map[string][]byte{"report.md": []byte(md)}); err == nil {
		t.Error("no table.json: no error")
	}
}
