package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// cells splits a markdown table line into trimmed cells.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	out := strings.Split(line, "|")
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// goldenLines returns the non-empty lines of a testdata file after its caption.
func goldenLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n")[1:] {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// tableAfter returns the lines of the first markdown table after the line starting with caption.
func tableAfter(t *testing.T, md, caption string) []string {
	t.Helper()
	i := strings.Index(md, caption)
	if i < 0 {
		t.Fatalf("no %q in\n%s", caption, md)
	}
	var out []string
	for _, l := range strings.Split(md[i:], "\n")[1:] {
		if strings.HasPrefix(l, "|") {
			out = append(out, l)
		} else if len(out) > 0 {
			break
		}
	}
	return out
}

// ycsbDoc records a YCSB-like scenario with read/update/insert operations on two runners.
func ycsbDoc(t *testing.T) *Document {
	t.Helper()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var docs []*Document
	for runner := range 2 {
		r := NewRecorder("ycsb_a", "ycsb")
		for i := range 4000 {
			op, d := "read", 300*time.Microsecond
			switch {
			case i%4 == 1:
				op, d = "update", 800*time.Microsecond
			case i%40 == 3:
				op, d = "insert", 900*time.Microsecond
			}
			start := base.Add(time.Duration(i) * time.Millisecond)
			r.Record(start, d, op, "")
			r.Op(op).Record(start, d, op, "")
		}
		s := r.Scenario()
		s.VUs = []int64{15}
		s.Command = "hgetall,hset"
		s.BodySize = 1024
		if runner == 0 {
			s.ServerCalls = map[string]int64{"hgetall": 2900 * 2, "hset": 1100 * 2, "info": 2}
		}
		d, err := NewDocument("r"+string(rune('0'+runner)), s)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	m, err := Merge(docs...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOperationsMergeExactly: per-operation histograms and counts of two runners add up,
// survive an encode/decode round trip, and VUs list one entry per runner.
func TestOperationsMergeExactly(t *testing.T) {
	doc := ycsbDoc(t)
	sc := doc.Scenarios[0]
	want := map[string]int64{"read": 2 * 2900, "update": 2 * 1000, "insert": 2 * 100}
	if len(sc.Operations) != 3 {
		t.Fatalf("operations = %+v", sc.Operations)
	}
	for _, op := range sc.Operations {
		if op.Calls != want[op.Name] || op.Latency.Buckets[0][1] != want[op.Name] {
			t.Errorf("operation %s: %d calls, buckets %v; want %d", op.Name, op.Calls, op.Latency.Buckets, want[op.Name])
		}
	}
	if !slices.Equal(sc.VUs, []int64{15, 15}) || sc.Calls != 8000 || sc.ServerCalls["hset"] != 2200 {
		t.Errorf("vus %v calls %d serverCalls %v", sc.VUs, sc.Calls, sc.ServerCalls)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, doc); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Scenarios[0].Operations[1].Calls != sc.Operations[1].Calls {
		t.Errorf("round trip lost operations: %+v", back.Scenarios[0].Operations)
	}
}

// TestOperationsDecodeStrict: malformed per-operation and server-side fields are refused
// with the field named.
func TestOperationsDecodeStrict(t *testing.T) {
	doc := ycsbDoc(t)
	cases := map[string]func(s *Scenario){
		"operations[0] (\"insert\"): operations": func(s *Scenario) { s.Operations[0].Operations = []Scenario{s.Operations[1]} },
		"operations[1].name: duplicate":          func(s *Scenario) { s.Operations[1].Name = s.Operations[0].Name },
		"operations: calls or errors add up":     func(s *Scenario) { s.Operations = append(s.Operations, s.Operations[2]); s.Operations[3].Name = "scan" },
		"serverCalls: [\"get\"]: count 0":        func(s *Scenario) { s.ServerCalls["get"] = 0 },
		"vus[0]: 0 is not positive":              func(s *Scenario) { s.VUs[0] = 0 },
		"bodySize: negative":                     func(s *Scenario) { s.BodySize = -1 },
	}
	for want, mutate := range cases {
		bad := *doc
		bad.Scenarios = []Scenario{cloneScenario(doc.Scenarios[0])}
		mutate(&bad.Scenarios[0])
		b, err := json.Marshal(&bad)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want error containing %q, got %v", want, err)
		}
	}
	b, _ := json.Marshal(doc)
	b = bytes.Replace(b, []byte(`"name":"insert"`), []byte(`"name":"insert","extra":1`), 1)
	if _, err := Decode(bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("unknown key in an operation: got %v", err)
	}
}

// TestPegasusTableMatchesSeed: the Pegasus table's header is seed 004's (the 1.11.6 tables
// without duration and cache-hit rate; the 2.4.0 header plus the P999 columns), in
// markdown, CSV and JSON, and the row reads as the seed's rows do.
func TestPegasusTableMatchesSeed(t *testing.T) {
	seed := goldenLines(t, "seed_004_pegasus_header.md")
	full := slices.DeleteFunc(cells(seed[0]), func(c string) bool { return c == "duration" || c == "Max cache hit rate" })
	if !slices.Equal(full, PegasusHeader) {
		t.Fatalf("PegasusHeader %q, seed 1.11.6 %q", PegasusHeader, full)
	}
	short := slices.DeleteFunc(slices.Clone(PegasusHeader), func(c string) bool { return strings.HasSuffix(c, "-P999-Lat") })
	if !slices.Equal(short, cells(seed[1])) {
		t.Fatalf("PegasusHeader without P999 %q, seed 2.4.0 %q", short, cells(seed[1]))
	}
	sum := Summarize(ycsbDoc(t), DefaultOptions())
	var md bytes.Buffer
	if err := RenderMarkdown(&md, "", sum); err != nil {
		t.Fatal(err)
	}
	lines := tableAfter(t, md.String(), "YCSB per operation")
	if len(lines) != 3 || !slices.Equal(cells(lines[0]), PegasusHeader) {
		t.Fatalf("table:\n%s", strings.Join(lines, "\n"))
	}
	row := cells(lines[2])
	// 5800 reads and 2200 writes per 4 s; reads 300 µs, writes 800 µs (update) and 900 µs (insert).
	want := []string{"Read & Write", "2 * 15", "3:1", "1,450", "300", "300", "300", "550", "809", "900", "900"}
	if !slices.Equal(row, want) {
		t.Errorf("row %q, want %q", row, want)
	}
	var c bytes.Buffer
	if err := RenderPegasusCSV(&c, sum); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || !slices.Equal(recs[0][:len(PegasusHeader)], PegasusHeader) || recs[1][len(PegasusHeader)] != "ycsb_a" {
		t.Errorf("csv %q %v", recs, err)
	}
	var js bytes.Buffer
	if err := RenderRedisShapesJSON(&js, sum); err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Pegasus struct {
			Header []string     `json:"header"`
			Rows   []PegasusRow `json:"rows"`
		} `json:"pegasus"`
	}
	if err := json.Unmarshal(js.Bytes(), &parsed); err != nil || !slices.Equal(parsed.Pegasus.Header, PegasusHeader) ||
		!slices.Equal(parsed.Pegasus.Rows[0].Cells, want) {
		t.Errorf("json %s %v", js.String(), err)
	}
}

// TestRedisProtocolTableMatchesSeed: the Redis protocol table's header is seed 003's, and
// the seed's first row (ping, 100000 requests, 10 workers, 0.562 s, observer 100010) comes
// out cell for cell (QPS and BPS from the rounded elapsed time aside).
func TestRedisProtocolTableMatchesSeed(t *testing.T) {
	seed := goldenLines(t, "seed_003_redis_protocol_header.md")
	if !slices.Equal(cells(seed[0]), RedisProtocolHeader) {
		t.Fatalf("RedisProtocolHeader %q, seed %q", RedisProtocolHeader, cells(seed[0]))
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sum := Summary{Scenarios: []ScenarioSummary{{
		Name: "ping", Type: "redis.ping", Calls: 100000, Command: "ping", VUs: []int64{5, 5},
		Start: start, End: start.Add(562 * time.Millisecond), ServerCalls: map[string]int64{"ping": 100010, "info": 1},
	}}}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, "", sum); err != nil {
		t.Fatal(err)
	}
	lines := tableAfter(t, md.String(), "Redis protocol table")
	if len(lines) != 3 || !slices.Equal(cells(lines[0]), RedisProtocolHeader) {
		t.Fatalf("table:\n%s", strings.Join(lines, "\n"))
	}
	got, want := cells(lines[2]), cells(seed[2])
	for i, h := range RedisProtocolHeader {
		if h == "QPS" || h == "BPS" {
			continue
		}
		if got[i] != want[i] {
			t.Errorf("%s: %q, seed %q", h, got[i], want[i])
		}
	}
	if got[6] != "177935.943" || got[7] != "0b" {
		t.Errorf("QPS %q BPS %q", got[6], got[7])
	}
}

// TestSeedUnitFormats: body sizes and bit rates read as in seed 003.
func TestSeedUnitFormats(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1024: "1KB", 10240: "10KB", 102400: "100KB", 1 << 20: "1MB", 1000: "1000B", 1536: "1.5KB"} {
		if got := FormatBodySize(n); got != want {
			t.Errorf("FormatBodySize(%d) = %q, want %q", n, got, want)
		}
	}
	// BPS = body × QPS × 8 in the seed's rows.
	for _, c := range []struct {
		body, qps float64
		want      string
	}{{10240, 11274.481, "880.8Mib"}, {10240, 19101.756, "1492Mib"}, {102400, 18834.716, "14.37Gib"}, {0, 1, "0b"}, {10240, 30410.734, "2376Mib"}} {
		if got := FormatBits(c.body * c.qps * 8); got != c.want {
			t.Errorf("FormatBits(%v × %v × 8) = %q, want %q", c.body, c.qps, got, c.want)
		}
	}
}

// TestObservedCallsCountsReadModifyWriteOnce: a read-modify-write sends HGETALL and HSET
// for one call, so PROTO/METRICS takes one of them off per such call.
func TestObservedCallsCountsReadModifyWriteOnce(t *testing.T) {
	sc := ScenarioSummary{Command: "hgetall,hset", ServerCalls: map[string]int64{"hgetall": 70, "hset": 50, "info": 1},
		Operations: []OperationSummary{{Name: "read", Calls: 60}, {Name: "update", Calls: 40}, {Name: "read-modify-write", Calls: 10}}}
	if n := ObservedCalls(sc); n != 110 {
		t.Errorf("ObservedCalls = %d, want 110 (60 reads + 40 updates + 10 read-modify-writes)", n)
	}
	if n := ObservedCalls(ScenarioSummary{Command: "get"}); n != -1 {
		t.Errorf("no server counts: %d, want -1", n)
	}
}
