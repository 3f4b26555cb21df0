package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// scenarioSummary builds a ScenarioSummary from a seed table row.
func scenarioSummary(name string, cps float64, mean, k50, k90, k99 float64, count int64, lo, hi float64, values ...ValueCount) ScenarioSummary {
	return ScenarioSummary{
		Name:  name,
		Calls: count,
		CPS:   cps,
		LatencyMs: Latency{
			Mean: mean, P50: k50, P90: k90, P99: k99, Min: lo, Max: hi, Median: k50,
		},
		ReturnValues: values,
	}
}

// checkSeedPrefix renders s and checks the output starts with the seed block in golden,
// followed by our additional table.
func checkSeedPrefix(t *testing.T, golden, title string, s Summary) string {
	t.Helper()
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := RenderMarkdown(&buf, title, s); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	if !strings.HasPrefix(got, string(want)) {
		t.Fatalf("rendered markdown does not reproduce %s\n--- got:\n%s\n--- want:\n%s", golden, got, want)
	}
	rest := got[len(want):]
	if !strings.HasPrefix(rest, "Additional Statistics:\n\n") {
		t.Fatalf("seed tables not followed by the additional statistics:\n%s", rest)
	}
	return rest
}

func TestRenderMarkdownSeed001(t *testing.T) {
	s := Summary{Scenarios: []ScenarioSummary{
		scenarioSummary("benchmark_redis_upsert", 10442.72, 18.63, 18.35, 20.23, 33.34, 3091103, 1.23, 1098.2,
			ValueCount{"1", 3091103, 100}),
	}}
	s.Scenarios[0].CallsPerMinute = []int64{175081, 642880, 634991, 617503, 623661, 396987}
	rest := checkSeedPrefix(t, "testdata/seed_001_redis84_io8.md", "本机 9950x3D Redis-8.4.0-Windows-x64-msys2 默认配置➕io-thread=8", s)
	want := `Additional Statistics:

|                        | Errors | Error % | k999 | StdDev | Duration (s) |
|:-----------------------|:-------|--------:|-----:|-------:|-------------:|
| benchmark_redis_upsert | 0      |       0 |    0 |      0 |            0 |

`
	if rest != want {
		t.Errorf("additional statistics:\n%s\nwant:\n%s", rest, want)
	}
}

func TestRenderMarkdownSeed000(t *testing.T) {
	vc := func(v string, n int64, pct float64) ValueCount { return ValueCount{v, n, pct} }
	// Out of order on purpose: the tables list scenarios by name.
	s := Summary{Scenarios: []ScenarioSummary{
		scenarioSummary("benchmark_hello_world", 1238494.10, 0.94, 0.49, 2.12, 6.72, 36835753, 0.03, 122.15,
			vc("世界收到", 36835753, 100)),
		scenarioSummary("benchmark_get", 137278.00, 8.39, 7.94, 12.14, 16.42, 4118789, 0.09, 99.54,
			vc("0", 4118789, 100)),
		scenarioSummary("benchmark_get_then_update", 32659.98, 35.17, 29.42, 47.55, 108.08, 983139, 0.45, 505.27,
			vc("0", 970938, 98.76), vc("1", 12057, 1.23), vc("2", 143, 0.01), vc("3", 1, 0)),
		scenarioSummary("benchmark_get2_update2", 18773.19, 61.44, 54.27, 73.82, 227.49, 563082, 0.66, 608.53,
			vc("0", 551040, 97.86), vc("1", 11800, 2.1), vc("2", 236, 0.04), vc("3", 6, 0)),
	}}
	checkSeedPrefix(t, "testdata/seed_000_local_redis84.md", "debian13 ecs.c9ae.16xlarge 64核 + 本地 Redis-8.4.0 默认设置", s)
}

func TestRenderMarkdownPartialAndErrors(t *testing.T) {
	s := Summary{
		Partial:        true,
		PartialReasons: []string{"runner r-1: evicted"},
		Scenarios: []ScenarioSummary{{
			Name: "get", Calls: 10, Errors: 2, ErrorKinds: []ValueCount{{"timeout", 2, 100}},
			ReturnValues: []ValueCount{{"0", 8, 100}},
		}},
	}
	var buf bytes.Buffer
	if err := RenderMarkdown(&buf, "", s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasPrefix(out, "**PARTIAL RESULTS**: runner r-1: evicted\n\n") {
		t.Errorf("partial flag missing at the top:\n%s", out)
	}
	for _, want := range []string{
		"| get | 2      |      20 |",
		"Error Kind Distribution Statistics:",
		"| 0 | get       | timeout    |     2 |        100 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	s.Scenarios[0].ReturnValues = []ValueCount{{"a|b\nc", 8, 100}}
	if err := RenderMarkdown(&buf, "", s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| 0 | get       | a\\|b\\nc      |") {
		t.Errorf("cell not escaped:\n%s", buf.String())
	}
	if strings.Contains(out, "Calls Per Minute") {
		t.Errorf("CPM table rendered without per-minute data:\n%s", out)
	}
}

func TestFormatting(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{formatG(54.8), "54.8"}, {formatG(1270.4), "1270.4"}, {formatG(100), "100"}, {formatG(0), "0"},
		{formatInt(0), "0"}, {formatInt(999), "999"}, {formatInt(1000), "1,000"}, {formatInt(-1234567), "-1,234,567"},
		{FormatThousands(1238494.1, 2), "1,238,494.10"}, {FormatThousands(0.5, 2), "0.50"}, {FormatThousands(-0.5, 2), "-0.50"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestRenderJSONKeys(t *testing.T) {
	s := Summary{Scenarios: []ScenarioSummary{{Name: "get", Calls: 1, ReturnValues: []ValueCount{{"0", 1, 100}}, CallsPerMinute: []int64{1}}}}
	var buf bytes.Buffer
	if err := RenderJSON(&buf, s); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	sc := m["scenarios"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "calls", "errors", "cps", "latencyMs", "returnValues", "callsPerMinute", "start", "end", "durationSeconds"} {
		if _, ok := sc[k]; !ok {
			t.Errorf("scenario JSON lacks key %q: %s", k, buf.String())
		}
	}
	lat := sc["latencyMs"].(map[string]any)
	for _, k := range []string{"mean", "p50", "p90", "p99", "p999", "min", "max", "median", "stddev"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latencyMs lacks key %q", k)
		}
	}
	if _, ok := m["partial"]; ok {
		t.Errorf("partial should be omitted when false")
	}
}

func TestRenderCSV(t *testing.T) {
	s := Summary{Scenarios: []ScenarioSummary{
		{Name: "get", Calls: 3, CPS: 1.5, ReturnValues: []ValueCount{{"0", 2, 66.67}, {"a,b", 1, 33.33}}, CallsPerMinute: []int64{2, 1}},
		{Name: "set"},
	}}
	var buf bytes.Buffer
	if err := RenderCSV(&buf, s); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || len(recs[1]) != len(csvHeader) {
		t.Fatalf("got %d records of %d fields", len(recs), len(recs[1]))
	}
	row := map[string]string{}
	for i, h := range recs[0] {
		row[h] = recs[1][i]
	}
	if row["cps"] != "1.5" || row["return_values"] != "0=2;a,b=1" || row["calls_per_minute"] != "2;1" || row["partial"] != "false" {
		t.Errorf("unexpected row %v", row)
	}
}

func TestRenderComparison(t *testing.T) {
	a := Summary{Scenarios: []ScenarioSummary{{Name: "get", Calls: 1000, CPS: 63378.76, LatencyMs: Latency{P50: 8.35, P99: 25.38}}}}
	b := Summary{Partial: true, PartialReasons: []string{"runner x failed"}, Scenarios: []ScenarioSummary{
		{Name: "get", Calls: 2000, CPS: 137278, LatencyMs: Latency{P50: 7.94, P99: 16.42}},
		{Name: "hello", Calls: 5, CPS: 1},
	}}
	var buf bytes.Buffer
	if err := RenderComparison(&buf, []string{"Redis 8", "Valkey"}, []Summary{a, b}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"**PARTIAL RESULTS** for Valkey: runner x failed",
		"Average CPS (Calls Per Second):\n\n|       | Redis 8   | Valkey     |\n|:------|:----------|:-----------|\n| get   | 63,378.76 | 137,278.00 |\n| hello |           | 1.00       |\n",
		"k50 (ms):\n\n|       | Redis 8 | Valkey |\n|:------|--------:|-------:|\n| get   |    8.35 |   7.94 |\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks\n%s\ngot:\n%s", want, out)
		}
	}
	if err := RenderComparison(&buf, []string{"x"}, nil); err == nil {
		t.Error("label/summary count mismatch not reported")
	}
}

// TestWriteMarkdownTable: the exported pipe-table writer lays out cells as given (the caller
// escapes them), in the seed tables' widths and alignment.
func TestWriteMarkdownTable(t *testing.T) {
	var b strings.Builder
	err := WriteMarkdownTable(&b, []string{"Variant", "get"}, []bool{false, true}, [][]string{{`a\|b`, FormatThousands(63378.76, 2)}, {"c", "-"}})
	want := "| Variant |       get |\n|:--------|----------:|\n| a\\|b    | 63,378.76 |\n| c       |         - |\n"
	if err != nil || b.String() != want {
		t.Errorf("%v\n%s", err, b.String())
	}
	if FormatG(54.80) != "54.8" || FormatInt(3825994) != "3,825,994" {
		t.Error(FormatG(54.80), FormatInt(3825994))
	}
}
