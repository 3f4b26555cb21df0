package results

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGRPCProtocolTableMatchesSeed: the Grpc protocol table's header is seed 003's, and the
// seed's first row (10000 requests, 10 workers, 10 KiB bodies, 1.407 s, observer 10000) comes
// out cell for cell (QPS and BPS from the rounded elapsed time aside); the CSV has the same
// header; scenarios of other types get no row.
func TestGRPCProtocolTableMatchesSeed(t *testing.T) {
	seed := goldenLines(t, "seed_003_grpc_protocol_header.md")
	if !slices.Equal(cells(seed[0]), GRPCProtocolHeader) {
		t.Fatalf("GRPCProtocolHeader %q, seed %q", GRPCProtocolHeader, cells(seed[0]))
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	method := "benchrun.echo.v1.Echo/Echo"
	sum := Summary{Scenarios: []ScenarioSummary{
		{Name: "echo10k", Type: GRPCScenarioType, Calls: 10000, Command: method, BodySize: 10240, VUs: []int64{5, 5},
			Start: start, End: start.Add(1407 * time.Millisecond), BytesSent: 51_200_000, BytesReceived: 51_200_000,
			ServerCalls: map[string]int64{method: 10000}},
		{Name: "web", Type: "http", Calls: 5, Start: start, End: start.Add(time.Second)},
	}}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, "", sum); err != nil {
		t.Fatal(err)
	}
	lines := tableAfter(t, md.String(), "Grpc protocol table")
	if len(lines) != 3 || !slices.Equal(cells(lines[0]), GRPCProtocolHeader) {
		t.Fatalf("table:\n%s", strings.Join(lines, "\n"))
	}
	got, want := cells(lines[2]), cells(seed[2])
	for i, h := range GRPCProtocolHeader {
		if h != "QPS" && h != "BPS" && got[i] != want[i] {
			t.Errorf("%s: %q, seed %q", h, got[i], want[i])
		}
	}
	if got[5] != "7107.321" || got[6] != "555.3Mib" {
		t.Errorf("QPS %q BPS %q", got[5], got[6])
	}
	var c bytes.Buffer
	if err := RenderGRPCProtocolCSV(&c, sum); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != 2 || !slices.Equal(recs[0][:len(GRPCProtocolHeader)], GRPCProtocolHeader) || recs[1][9] != "echo10k" {
		t.Errorf("csv %v %v", recs, err)
	}
	if rows := GRPCProtocolRows(Summary{Scenarios: sum.Scenarios[1:]}); rows != nil {
		t.Errorf("an http scenario has a grpc row: %v", rows)
	}
}
