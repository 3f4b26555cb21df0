package lifecycle

import (
	"bytes"

	"github.com/benchrun/benchrun/internal/results"
)

// ReportGRPCProtocolCSV is the packetd-shaped Grpc protocol table (seed 003) as CSV, written
// only when the run has grpc scenarios.
const ReportGRPCProtocolCSV = "grpc-protocol.csv"

// ReportHTTPProtocolCSV is the packetd-shaped HTTP protocol table (seed 003) as CSV, written
// only when the run has http scenarios.
const ReportHTTPProtocolCSV = "http-protocol.csv"

// grpcShape adds the Grpc and HTTP protocol tables to the report files when the summary has
// grpc or http scenarios (the markdown report holds them already); each table's rows are
// computed once.
func grpcShape(out map[string][]byte, sum results.Summary) error {
	for name, rows := range map[string][]results.ProtocolRow{
		ReportGRPCProtocolCSV: results.GRPCProtocolRows(sum),
		ReportHTTPProtocolCSV: results.HTTPProtocolRows(sum),
	} {
		if len(rows) == 0 {
			continue
		}
		var b bytes.Buffer
		if err := results.WritePacketdCSV(&b, rows); err != nil {
			return err
		}
		out[name] = b.Bytes()
	}
	return nil
}
