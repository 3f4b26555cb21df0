package results

import (
	"bufio"
	"io"
)

// The gRPC table of the packetd protocol table (seed 003, "### Grpc") for grpc scenarios.

// GRPCScenarioType is the scenario type of unary gRPC calls.
const GRPCScenarioType = "grpc"

// GRPCProtocolHeader is the column order of the Grpc table of the packetd protocol table (seed 003).
var GRPCProtocolHeader = []string{"PROTO", "REQUEST", "WORKERS", "BODYSIZE", "ELAPSED", "QPS", "BPS",
	"PROTO/METRICS", "PROTO/PERCENT"}

// GRPCProtocolRows returns a row per grpc scenario, in summary order: BPS counts the wire
// bytes both ways, PROTO/METRICS the target's own count when it reported one (else "-").
func GRPCProtocolRows(s Summary) []ProtocolRow {
	var rows []ProtocolRow
	for _, sc := range s.Scenarios {
		if sc.Type == GRPCScenarioType {
			rows = append(rows, protocolRow(sc, "Grpc"))
		}
	}
	return rows
}

// writeGRPCShape appends the Grpc protocol table to a markdown report when the summary has
// grpc scenarios; the status codes are in the return value (OK) and error kind tables.
func writeGRPCShape(bw *bufio.Writer, s Summary) {
	if rows := GRPCProtocolRows(s); len(rows) > 0 {
		writeShapeTable(bw, "\nGrpc protocol table (REQUEST: calls made; status codes in the return value and error kind tables; rows: %s):\n\n", GRPCProtocolHeader,
			[]bool{false, true, true, false, false, true, true, true, false},
			rows, func(r ProtocolRow) (string, []string) { return r.Scenario, r.Cells })
	}
}

// RenderGRPCProtocolCSV writes the Grpc protocol table as CSV: GRPCProtocolHeader then "scenario".
func RenderGRPCProtocolCSV(w io.Writer, s Summary) error {
	return writeCSV(w, append(append([]string(nil), GRPCProtocolHeader...), "scenario"), protocolCells(GRPCProtocolRows(s)))
}
