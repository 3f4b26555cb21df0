package results

import (
	"bufio"
	"io"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/workload"
)

// The Grpc and HTTP tables of the packetd protocol table (seed 003, "### Grpc", "### HTTP"):
// one row per scenario whose type's descriptor names the table (workload.Descriptor.Protocol),
// the same columns, each with its PROTO label and caption.

// GRPCScenarioType is the scenario type of unary gRPC calls.
const GRPCScenarioType = string(v1alpha1.ScenarioGRPC)

// HTTPScenarioType is the scenario type of HTTP requests.
const HTTPScenarioType = string(v1alpha1.ScenarioHTTP)

// GRPCProtocolHeader is the column order of the Grpc table of the packetd protocol table (seed 003).
var GRPCProtocolHeader = []string{"PROTO", "REQUEST", "WORKERS", "BODYSIZE", "ELAPSED", "QPS", "BPS",
	"PROTO/METRICS", "PROTO/PERCENT"}

// HTTPProtocolHeader is the column order of the HTTP table of the packetd protocol table
// (seed 003): the same columns as the Grpc table.
var HTTPProtocolHeader = GRPCProtocolHeader

// packetdTable is a packetd protocol table whose rows are the scenarios of the types with its
// protocol (proto is also its PROTO label).
type packetdTable struct {
	proto, caption string
}

var (
	grpcTable = packetdTable{workload.ProtocolGRPC,
		"\nGrpc protocol table (REQUEST: calls made; status codes in the return value and error kind tables; rows: %s):\n\n"}
	httpTable = packetdTable{workload.ProtocolHTTP,
		"\nHTTP protocol table (REQUEST: requests made; status codes in the return value and error kind tables; rows: %s):\n\n"}
)

// rows returns a row per scenario of the table's type, in summary order: BPS counts the wire
// bytes both ways, PROTO/METRICS the target's own count when it reported one (else "-").
func (p packetdTable) rows(s Summary) []ProtocolRow {
	var rows []ProtocolRow
	for _, sc := range s.Scenarios {
		if d, _ := workload.Of(sc.Type); d.Protocol == p.proto {
			rows = append(rows, protocolRow(sc, p.proto))
		}
	}
	return rows
}

// write appends the table to a markdown report when the summary has scenarios of its type.
func (p packetdTable) write(bw *bufio.Writer, s Summary) {
	if rows := p.rows(s); len(rows) > 0 {
		writeShapeTable(bw, p.caption, GRPCProtocolHeader,
			[]bool{false, true, true, false, false, true, true, true, false},
			rows, func(r ProtocolRow) (string, []string) { return r.Scenario, r.Cells })
	}
}

// csv writes the table as CSV: the header, then "scenario".
func (p packetdTable) csv(w io.Writer, s Summary) error { return WritePacketdCSV(w, p.rows(s)) }

// WritePacketdCSV writes rows of a Grpc or HTTP protocol table (GRPCProtocolRows,
// HTTPProtocolRows) as CSV: GRPCProtocolHeader then "scenario".
func WritePacketdCSV(w io.Writer, rows []ProtocolRow) error {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append(append([]string(nil), r.Cells...), r.Scenario)
	}
	return writeCSV(w, append(append([]string(nil), GRPCProtocolHeader...), "scenario"), out)
}

// GRPCProtocolRows returns a row per grpc scenario, in summary order.
func GRPCProtocolRows(s Summary) []ProtocolRow { return grpcTable.rows(s) }

// HTTPProtocolRows returns a row per http scenario, in summary order.
func HTTPProtocolRows(s Summary) []ProtocolRow { return httpTable.rows(s) }

// RenderGRPCProtocolCSV writes the Grpc protocol table as CSV: GRPCProtocolHeader then "scenario".
func RenderGRPCProtocolCSV(w io.Writer, s Summary) error { return grpcTable.csv(w, s) }

// RenderHTTPProtocolCSV writes the HTTP protocol table as CSV: HTTPProtocolHeader then "scenario".
func RenderHTTPProtocolCSV(w io.Writer, s Summary) error { return httpTable.csv(w, s) }
