package results

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestDecodeBoundsStructure: a document out of the structure bounds is refused before it is
// decoded, the error naming the field path; honest documents (testdata) pass.
func TestDecodeBoundsStructure(t *testing.T) {
	for _, f := range []string{"testdata/document_v1.json", "testdata/document_v2.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkStructure(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if err := CheckStructure(bytes.NewReader(b)); err != nil {
			t.Errorf("%s as a stream: %v", f, err)
		}
	}
	head := `{"schemaVersion":2,"runners":["r"],"scenarios":[`
	cases := map[string]string{
		"scenarios: more than 64 entries":                                  head + strings.Repeat("{},", 64) + "{}]}",
		"scenarios[0].operations: more than 16 entries":                    head + `{"operations":[` + strings.Repeat("{},", 16) + "{}]}]}",
		"scenarios[0].returnValues: more than 64 keys":                     head + `{"returnValues":{` + strings.Repeat(`"k":1,`, 64) + `"k":1}}]}`,
		"scenarios[0].faultSeconds: more than 320 entries":                 head + `{"faultSeconds":[` + strings.Repeat("{},", 320) + "{}]}]}",
		"scenarios[0].latency.buckets[0]: more than 2 entries":             head + `{"latency":{"buckets":[[1,1,1]]}}]}`,
		"scenarios[0].latencyTimeline.intervals[0]: more than 242 entries": head + `{"latencyTimeline":{"intervals":[[0` + strings.Repeat(",0", 242) + "]]}}]}",
		"scenarios[0].latencyTimeline.intervals: more than 8784 entries":   head + `{"latencyTimeline":{"intervals":[[]` + strings.Repeat(",[]", 8784) + "]}}]}",
		"scenarios[0].name: string longer than 253 bytes":                  head + `{"name":"` + strings.Repeat("x", 6*253+1) + `"}]}`,
		"scenarios[0].starts.counts: more than 65536 entries":              head + `{"starts":{"counts":[0` + strings.Repeat(",0", 65536) + "]}}]}",
		`scenarios[0]: unknown field "Calls"`:                              head + `{"Calls":1}]}`,
		"scenarios[0].calls: repeated":                                     head + `{"calls":1,"calls":1}]}`,
		"scenarios[0].returnValues: repeated":                              head + `{"returnValues":{},"returnValues":{}}]}`,
		"scenarios[0].calls: number longer than 40 bytes":                  head + `{"calls":` + strings.Repeat("1", 41) + `}]}`,
		"runners[0]: want a string":                                        `{"runners":[{}]}`,
		"partial: want true or false":                                      `{"partial":1}`,
		"numbers in histogram buckets, timeline counts and vus":            head + strings.Repeat(`{"starts":{"counts":[0`+strings.Repeat(",0", 40000)+"]}},", 53) + "{}]}",
		"scenarios[0].operations[0].operations[0].operations: more than 0": head + `{"operations":[{"operations":[{"operations":[{}]}]}]}]}`,
	}
	for want, doc := range cases {
		_, err := DecodeBytes([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error containing %q, got %v", want, err)
		}
		if err := CheckStructure(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("stream: want an error containing %q, got %v", want, err)
		}
	}
	if _, err := DecodeBytes([]byte(`{"schemaVersion":2,`)); err == nil || !strings.Contains(err.Error(), "decoding document") {
		t.Errorf("truncated JSON: %v", err)
	}
}

// TestCheckStructureAllocatesNothing: checking 16 MiB of empty scenarios costs no memory
// (it stops at the 65th), nor does checking an honest document.
func TestCheckStructureAllocatesNothing(t *testing.T) {
	big := []byte(`{"schemaVersion":2,"runners":["r"],"scenarios":[` + strings.Repeat("{},", 5<<20) + "{}]}")
	honest, _ := os.ReadFile("testdata/document_v2.json")
	for _, b := range [][]byte{big, honest} {
		if n := testing.AllocsPerRun(5, func() { _ = checkStructure(b) }); n > 8 {
			t.Errorf("%d allocations checking %d bytes", int(n), len(b))
		}
	}
	var a, z runtime.MemStats
	runtime.ReadMemStats(&a)
	_, err := DecodeBytes(big)
	runtime.ReadMemStats(&z)
	if err == nil || z.TotalAlloc-a.TotalAlloc > 1<<20 {
		t.Errorf("decoding 5 M empty scenarios: %v, %d KiB allocated", err, (z.TotalAlloc-a.TotalAlloc)>>10)
	}
}

// TestOneLineAndMarkdownText: runner text becomes one bounded line without control or
// bidi characters, and Markdown/HTML structure is escaped.
func TestOneLineAndMarkdownText(t *testing.T) {
	cases := map[string]string{
		"a\n\n# b\r\n\tc":          "a # b c",
		"  x\x00y\x1b[31m\u202ez ": "x y [31m z",
		"é\xffé":                   "éé",
	}
	for in, want := range cases {
		if got := OneLine(in, 100); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
	long := OneLine(strings.Repeat("é", 100), 11)
	if long != "éééé…" || len(long) > 11 {
		t.Errorf("cut: %q (%d bytes)", long, len(long))
	}
	md := MarkdownText("x |\n## All thresholds passed <script>alert(1)</script> [a](javascript:x) `c` *b*")
	for _, raw := range []string{"\n", "<script>", " | ", "[a]", "`c`", "*b*"} {
		if strings.Contains(md, raw) {
			t.Errorf("MarkdownText keeps %q: %s", raw, md)
		}
	}
	if got := MarkdownText("benchmark_get-2"); got != "benchmark_get-2" {
		t.Errorf("a plain name changed: %q", got)
	}
}

// TestRenderEscapesRunnerText: partial reasons and return values written by a runner reach
// report.md escaped: no heading, no HTML, no broken table.
func TestRenderEscapesRunnerText(t *testing.T) {
	s := Summary{Partial: true, PartialReasons: []string{"r-1: evicted\n## All thresholds passed\n<script>x</script>"},
		Scenarios: []ScenarioSummary{{Name: "get", Calls: 2, ReturnValues: []ValueCount{{Value: "<img src=x>|\nrow", Count: 2, Percent: 100}}}}}
	var b bytes.Buffer
	if err := RenderMarkdown(&b, "t", s); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"<script>", "<img", "\n## All", "|\nrow"} {
		if strings.Contains(b.String(), raw) {
			t.Errorf("report.md carries %q raw:\n%s", raw, b.String())
		}
	}
}
