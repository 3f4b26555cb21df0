package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedEcho is one result of seed 002 (the fatuv echo-server comparison): what the client
// measured, from which a document with the same statistics is built.
type seedEcho struct {
	name                 string
	messages             int64
	minUs, maxUs         int64
	meanUs, stdPercent   float64
	messageBytes, second int64
}

// seed002 are the first three results of seed 002 (c + libuv, c + libco, python2 + pyuv):
// 1000-byte messages (0.98 KiB) for 30 s.
var seed002 = []seedEcho{
	{"c-libuv", 2037047, 10, 10750, 38, 81.73, 1000, 30},
	{"c-libco", 2031969, 10, 6760, 38.9, 70.63, 1000, 30},
	{"py2-pyuv", 1973017, 10, 12060, 39.6, 78.55, 1000, 30},
}

// doc is a one-scenario tcp.echo document with the seed result's statistics.
func (s seedEcho) doc() Scenario {
	t0 := time.Date(2018, 11, 3, 12, 0, 0, 0, time.UTC)
	n := float64(s.messages)
	sum := int64(math.Round(s.meanUs * n))
	mean := float64(sum) / n
	std := s.stdPercent / 100 * mean
	return Scenario{
		Name: s.name, Type: EchoScenarioType, Calls: s.messages,
		FirstStart: t0, LastEnd: t0.Add(time.Duration(s.second) * time.Second),
		Latency: Histogram{Unit: "us", SignificantFigures: 3, Min: s.minUs, Max: s.maxUs, Sum: sum,
			SumSquares: std*std*(n-1) + float64(sum)*mean, Buckets: [][2]int64{{s.minUs, s.messages}}},
		Starts:    Timeline{BucketMs: 1000, StartUnixMs: t0.UnixMilli(), Counts: []int64{s.messages}},
		BytesSent: s.messages * s.messageBytes, BytesReceived: s.messages * s.messageBytes,
	}
}

// TestEchoBlockReproducesSeed002 renders documents with the seed's statistics and compares
// the blocks with the seed's text, byte for byte.
func TestEchoBlockReproducesSeed002(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "seed_002_fatuv_echo.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, s := range seed002 {
		sc := s.doc()
		e := echoStats(&sc)
		if e == nil {
			t.Fatal("no echo shape for a tcp.echo scenario")
		}
		blocks = append(blocks, EchoBlock(e))
	}
	if got := strings.Join(blocks, "\n"); got != string(want) {
		t.Errorf("echo blocks differ from seed 002:\n--- got\n%s--- want\n%s", got, want)
	}
}

// The markdown report of a tcp.echo run: the comparison table with the seed's columns in
// the seed's order, then each scenario's block in a code fence; no ya table.
func TestEchoMarkdownCSVJSON(t *testing.T) {
	var scs []Scenario
	for _, s := range seed002 {
		scs = append(scs, s.doc())
	}
	doc := &Document{SchemaVersion: SchemaVersion, Runners: []string{"r"}, Scenarios: scs}
	sum := Summarize(doc, DefaultOptions())
	var md bytes.Buffer
	if err := RenderMarkdown(&md, "", sum); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	header := "|          | Requests/sec | Latency min (ms) | Latency max (ms) | Latency mean (ms) | Latency std (ms) | Transfer/sec (MiB) |"
	row := "| c-libco  |      67732.3 |             0.01 |             6.76 |             0.039 |            0.027 |              64.59 |"
	for _, w := range []string{"TCP Echo Statistics:\n\n" + header + "\n", row,
		"### c-libuv\n\n```\n2037047 0.98KiB messages in 30 seconds\nLatency: min 0.01ms; max 10.75ms; mean 0.038ms; std: 0.031ms (81.73%)\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("markdown lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "Average CPS") {
		t.Errorf("a tcp.echo-only report has ya tables:\n%s", out)
	}
	var c bytes.Buffer
	if err := RenderCSV(&c, sum); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != strings.Join(echoCSVHeader, ",") || len(rows) != 4 || rows[1][5] != "67901.57" || rows[3][8] != "0.04" {
		t.Errorf("csv: %v", rows)
	}
	var js bytes.Buffer
	if err := RenderJSON(&js, sum); err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if e := back.Scenarios[0].Echo; e == nil || e.TransferMiBPerSec != 64.76 || e.MessageBytes != 1000 {
		t.Errorf("json echo: %+v", e)
	}
}

// A run mixing tcp.echo and other scenarios renders both shapes; CSV keeps the generic columns.
func TestEchoMixedRun(t *testing.T) {
	echo := seed002[0].doc()
	other := seed002[1].doc()
	other.Name, other.Type = "ping", "redis.ping"
	sum := Summarize(&Document{SchemaVersion: SchemaVersion, Runners: []string{"r"}, Scenarios: []Scenario{echo, other}}, DefaultOptions())
	var md, c bytes.Buffer
	if err := RenderMarkdown(&md, "", sum); err != nil {
		t.Fatal(err)
	}
	if err := RenderCSV(&c, sum); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	_, ya, _ := strings.Cut(out, "Average CPS")
	if !strings.Contains(out, "TCP Echo Statistics") || !strings.Contains(ya, "| ping ") || strings.Contains(ya, "c-libuv") {
		t.Errorf("mixed markdown: want the echo shape for c-libuv and ya's tables for ping only:\n%s", out)
	}
	if !strings.HasPrefix(c.String(), strings.Join(csvHeader, ",")) {
		t.Errorf("mixed csv: %s", c.String())
	}
	if sum.Scenarios[1].Echo != nil {
		t.Error("a redis.ping scenario got an echo shape")
	}
}
