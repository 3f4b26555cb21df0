package results

import (
	"bufio"
	"io"
)

// The HTTP table of the packetd protocol table (seed 003, "### HTTP") for http scenarios.

// HTTPScenarioType is the scenario type of HTTP requests.
const HTTPScenarioType = "http"

// HTTPProtocolHeader is the column order of the HTTP table of the packetd protocol table
// (seed 003): the same columns as the Grpc table.
var HTTPProtocolHeader = GRPCProtocolHeader

// HTTPProtocolRows returns a row per http scenario, in summary order: BPS counts the wire
// bytes both ways, PROTO/METRICS the target's own count when it reported one (else "-").
func HTTPProtocolRows(s Summary) []ProtocolRow {
	var rows []ProtocolRow
	for _, sc := range s.Scenarios {
		if sc.Type == HTTPScenarioType {
			rows = append(rows, protocolRow(sc, "HTTP"))
		}
	}
	return rows
}

// writeHTTPShape appends the HTTP protocol table to a markdown report when the summary has
// http scenarios; the status codes are in the return value and error kind tables.
func writeHTTPShape(bw *bufio.Writer, s Summary) {
	if rows := HTTPProtocolRows(s); len(rows) > 0 {
		writeShapeTable(bw, "\nHTTP protocol table (REQUEST: requests made; status codes in the return value and error kind tables; rows: %s):\n\n", HTTPProtocolHeader,
			[]bool{false, true, true, false, false, true, true, true, false},
			rows, func(r ProtocolRow) (string, []string) { return r.Scenario, r.Cells })
	}
}

// RenderHTTPProtocolCSV writes the HTTP protocol table as CSV: HTTPProtocolHeader then "scenario".
func RenderHTTPProtocolCSV(w io.Writer, s Summary) error {
	return writeCSV(w, append(append([]string(nil), HTTPProtocolHeader...), "scenario"), protocolCells(HTTPProtocolRows(s)))
}

// protocolCells are the CSV records of protocol rows: the row's cells, then its scenario.
func protocolCells(rows []ProtocolRow) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append(append([]string(nil), r.Cells...), r.Scenario)
	}
	return out
}
