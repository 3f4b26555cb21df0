package lifecycle

import (
	"bytes"

	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/workload"
)

// The CSV files of the built-in packetd protocol tables (seed 003): each workload.Table names
// its own (Table.CSV), written only when the run has rows for it; these constants name the
// built-in ones for callers and tests (TestProtocolReportFiles holds them equal).
const (
	// ReportRedisProtocolCSV is the Redis protocol table as CSV.
	ReportRedisProtocolCSV = "redis-protocol.csv"
	// ReportGRPCProtocolCSV is the Grpc protocol table as CSV (grpc scenarios).
	ReportGRPCProtocolCSV = "grpc-protocol.csv"
	// ReportHTTPProtocolCSV is the HTTP protocol table as CSV (http scenarios).
	ReportHTTPProtocolCSV = "http-protocol.csv"
)

// protocolShapes adds the CSV file of each packetd protocol table with rows to the report
// files (the markdown report holds the tables already).
func protocolShapes(out map[string][]byte, sum results.Summary) error {
	for _, t := range workload.Tables() {
		rows := results.ProtocolRows(sum, t)
		if len(rows) == 0 {
			continue
		}
		var b bytes.Buffer
		if err := results.WriteProtocolCSV(&b, t, rows); err != nil {
			return err
		}
		out[t.CSV] = b.Bytes()
	}
	return nil
}
