package results

import (
	"bytes"
	"encoding/csv"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/workload"
)

// The Grpc and HTTP tables of the packetd protocol tables, and their headers.
var (
	grpcTable, _ = workload.TableOf(workload.ProtocolGRPC)
	httpTable, _ = workload.TableOf(workload.ProtocolHTTP)
	grpcHeader   = ProtocolHeader(grpcTable)
	httpHeader   = ProtocolHeader(httpTable)
)

// TestGRPCProtocolTableMatchesSeed: the Grpc protocol table's header is seed 003's, and the
// seed's first row (10000 requests, 10 workers, 10 KiB bodies, 1.407 s, observer 10000) comes
// out cell for cell (QPS and BPS from the rounded elapsed time aside); the CSV has the same
// header; scenarios of other types get no row.
func TestGRPCProtocolTableMatchesSeed(t *testing.T) {
	seed := goldenLines(t, "seed_003_grpc_protocol_header.md")
	if !slices.Equal(cells(seed[0]), grpcHeader) {
		t.Fatalf("grpcHeader %q, seed %q", grpcHeader, cells(seed[0]))
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
	if len(lines) != 3 || !slices.Equal(cells(lines[0]), grpcHeader) {
		t.Fatalf("table:\n%s", strings.Join(lines, "\n"))
	}
	got, want := cells(lines[2]), cells(seed[2])
	for i, h := range grpcHeader {
		if h != "QPS" && h != "BPS" && got[i] != want[i] {
			t.Errorf("%s: %q, seed %q", h, got[i], want[i])
		}
	}
	if got[5] != "7107.321" || got[6] != "555.3Mib" {
		t.Errorf("QPS %q BPS %q", got[5], got[6])
	}
	var c bytes.Buffer
	if err := WriteProtocolCSV(&c, grpcTable, ProtocolRows(sum, grpcTable)); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != 2 || !slices.Equal(recs[0][:len(grpcHeader)], grpcHeader) || recs[1][9] != "echo10k" {
		t.Errorf("csv %v %v", recs, err)
	}
	if rows := ProtocolRows(Summary{Scenarios: sum.Scenarios[1:]}, grpcTable); rows != nil {
		t.Errorf("an http scenario has a grpc row: %v", rows)
	}
}

// TestHTTPProtocolTableMatchesSeed: the HTTP protocol table's header is seed 003's, and the
// seed's first row (100000 requests, 10 workers, 10 KiB bodies, 3.288 s) comes out cell for
// cell (QPS and BPS from the rounded elapsed time aside; PROTO/METRICS "-": no server count);
// the CSV has the same header; scenarios of other types get no row.
func TestHTTPProtocolTableMatchesSeed(t *testing.T) {
	seed := goldenLines(t, "seed_003_http_protocol_header.md")
	if !slices.Equal(cells(seed[0]), httpHeader) {
		t.Fatalf("httpHeader %q, seed %q", httpHeader, cells(seed[0]))
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sum := Summary{Scenarios: []ScenarioSummary{
		{Name: "post10k", Type: HTTPScenarioType, Calls: 100000, BodySize: 10240, VUs: []int64{4, 6},
			Start: start, End: start.Add(3288 * time.Millisecond), BytesSent: 1_000_000_000, BytesReceived: 24_000_000},
		{Name: "rpc", Type: GRPCScenarioType, Calls: 5, Start: start, End: start.Add(time.Second)},
	}}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, "", sum); err != nil {
		t.Fatal(err)
	}
	lines := tableAfter(t, md.String(), "HTTP protocol table")
	if len(lines) != 3 || !slices.Equal(cells(lines[0]), httpHeader) {
		t.Fatalf("table:\n%s", strings.Join(lines, "\n"))
	}
	got, want := cells(lines[2]), cells(seed[2])
	for i, h := range httpHeader {
		if h != "QPS" && h != "BPS" && h != "PROTO/METRICS" && h != "PROTO/PERCENT" && got[i] != want[i] {
			t.Errorf("%s: %q, seed %q", h, got[i], want[i])
		}
	}
	if got[5] != "30413.625" || got[7] != "-" {
		t.Errorf("QPS %q PROTO/METRICS %q", got[5], got[7])
	}
	var c bytes.Buffer
	if err := WriteProtocolCSV(&c, httpTable, ProtocolRows(sum, httpTable)); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != 2 || !slices.Equal(recs[0][:len(httpHeader)], httpHeader) || recs[1][9] != "post10k" {
		t.Errorf("csv %v %v", recs, err)
	}
	if rows := ProtocolRows(Summary{Scenarios: sum.Scenarios[1:]}, httpTable); rows != nil {
		t.Errorf("a grpc scenario has an http row: %v", rows)
	}
}

// TestRenderShape: one shape forced whatever the scenario types pick — ycsb prints only the
// Pegasus table, packetd only the protocol tables, ya the ya tables of every scenario; a shape
// the results lack is refused naming those they have, an unknown shape names the known ones.
func TestRenderShape(t *testing.T) {
	sum := Summarize(ycsbDoc(t), DefaultOptions())
	sum.Scenarios = append(sum.Scenarios, ScenarioSummary{Name: "web", Type: HTTPScenarioType, Calls: 5,
		Start: time.Unix(0, 0), End: time.Unix(1, 0)})
	if got := ShapesOf(sum); !slices.Equal(got, []string{"ya", "packetd", "ycsb"}) {
		t.Fatalf("ShapesOf %v", got)
	}
	for shape, want := range map[string][2]string{
		"ycsb":    {"YCSB per operation", "Average CPS"},
		"packetd": {"HTTP protocol table", "YCSB per operation"},
		"ya":      {"Average CPS (Calls Per Second) per Function:", "protocol table"},
	} {
		var b bytes.Buffer
		if err := RenderShape(&b, shape, "t", sum); err != nil || !strings.Contains(b.String(), want[0]) || strings.Contains(b.String(), want[1]) {
			t.Errorf("%s: %v\n%s", shape, err, b.String())
		}
	}
	if err := RenderShape(io.Discard, "echo", "", sum); err == nil || !strings.Contains(err.Error(), "no echo rows (their shapes: ya, packetd, ycsb)") {
		t.Errorf("echo: %v", err)
	}
	if err := RenderShape(io.Discard, "pegasus", "", sum); err == nil || !strings.Contains(err.Error(), "one of ya, echo, packetd, ycsb") {
		t.Errorf("unknown: %v", err)
	}
}
