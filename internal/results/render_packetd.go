package results

import (
	"bufio"
	"io"
	"slices"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/workload"
)

// The packetd protocol tables (seed 003: "### Redis", "### Grpc", "### HTTP"), one per
// workload.Table: a row per scenario whose type's descriptor names the table's protocol
// (workload.Descriptor.Protocol), in report.md, the packetd shape and the table's CSV file.
// Nothing here names a protocol: a new one is a workload.Table.

// GRPCScenarioType is the scenario type of unary gRPC calls.
const GRPCScenarioType = string(v1alpha1.ScenarioGRPC)

// HTTPScenarioType is the scenario type of HTTP requests.
const HTTPScenarioType = string(v1alpha1.ScenarioHTTP)

// protocolColumns are the columns of every packetd protocol table, right-aligned or not; a
// table with a COMMAND column has it after WORKERS (commandColumn).
var protocolColumns = []struct {
	name  string
	right bool
}{{"PROTO", false}, {"REQUEST", true}, {"WORKERS", true}, {"BODYSIZE", false}, {"ELAPSED", false},
	{"QPS", true}, {"BPS", true}, {"PROTO/METRICS", true}, {"PROTO/PERCENT", false}}

// commandColumn is where a table with a COMMAND column has it.
const commandColumn = 3

// ProtocolHeader is the column order of table t: PROTO, REQUEST, WORKERS, COMMAND (when
// t.Command), BODYSIZE, ELAPSED, QPS, BPS, PROTO/METRICS, PROTO/PERCENT.
func ProtocolHeader(t workload.Table) []string {
	h, _ := protocolLayout(t)
	return h
}

// protocolLayout is table t's header and which of its columns are right-aligned.
func protocolLayout(t workload.Table) ([]string, []bool) {
	var header []string
	var right []bool
	for _, c := range protocolColumns {
		header, right = append(header, c.name), append(right, c.right)
	}
	if t.Command {
		header, right = slices.Insert(header, commandColumn, "COMMAND"), slices.Insert(right, commandColumn, false)
	}
	return header, right
}

// ProtocolRows returns table t's rows, in summary order: a row per scenario of a type whose
// descriptor names t's protocol (with a COMMAND column: one that names its command). BPS
// counts the wire bytes both ways, PROTO/METRICS the target's own count when it reported one
// (else "-").
func ProtocolRows(s Summary, t workload.Table) []ProtocolRow {
	var rows []ProtocolRow
	for _, sc := range s.Scenarios {
		if d, _ := workload.Of(sc.Type); d.Protocol != t.Protocol || t.Command && sc.Command == "" {
			continue
		}
		row := protocolRow(sc, t.Protocol)
		if t.Command {
			row.Cells = slices.Insert(row.Cells, commandColumn, sc.Command)
		}
		rows = append(rows, row)
	}
	return rows
}

// hasProtocolRows tells whether any packetd protocol table has rows.
func hasProtocolRows(s Summary) bool {
	for _, t := range workload.Tables() {
		if len(ProtocolRows(s, t)) > 0 {
			return true
		}
	}
	return false
}

// writeProtocolTables appends the packetd protocol tables with rows to a markdown report,
// those with a COMMAND column (command) or the others, in workload.Tables order.
func writeProtocolTables(bw *bufio.Writer, s Summary, command bool) {
	for _, t := range workload.Tables() {
		if t.Command != command {
			continue
		}
		if rows := ProtocolRows(s, t); len(rows) > 0 {
			header, right := protocolLayout(t)
			writeShapeTable(bw, "\n"+t.Protocol+" protocol table ("+t.Note+"; rows: %s):\n\n", header, right,
				rows, func(r ProtocolRow) (string, []string) { return r.Scenario, r.Cells })
		}
	}
}

// WriteProtocolCSV writes rows of table t (ProtocolRows) as CSV: ProtocolHeader(t), then
// "scenario".
func WriteProtocolCSV(w io.Writer, t workload.Table, rows []ProtocolRow) error {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append(append([]string(nil), r.Cells...), r.Scenario)
	}
	return writeCSV(w, append(ProtocolHeader(t), "scenario"), out)
}
