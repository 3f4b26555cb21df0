package lifecycle

import (
	"bytes"

	"github.com/benchrun/benchrun/internal/results"
)

// ReportGRPCProtocolCSV is the packetd-shaped Grpc protocol table (seed 003) as CSV, written
// only when the run has grpc scenarios.
const ReportGRPCProtocolCSV = "grpc-protocol.csv"

// grpcShape adds the Grpc protocol table to the report files when the summary has grpc
// scenarios (the markdown report holds it already).
func grpcShape(out map[string][]byte, sum results.Summary) error {
	if len(results.GRPCProtocolRows(sum)) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := results.RenderGRPCProtocolCSV(&b, sum); err != nil {
		return err
	}
	out[ReportGRPCProtocolCSV] = b.Bytes()
	return nil
}
