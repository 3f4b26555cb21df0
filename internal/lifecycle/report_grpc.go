package lifecycle

import (
	"bytes"
	"io"

	"github.com/benchrun/benchrun/internal/results"
)

// ReportGRPCProtocolCSV is the packetd-shaped Grpc protocol table (seed 003) as CSV, written
// only when the run has grpc scenarios.
const ReportGRPCProtocolCSV = "grpc-protocol.csv"

// ReportHTTPProtocolCSV is the packetd-shaped HTTP protocol table (seed 003) as CSV, written
// only when the run has http scenarios.
const ReportHTTPProtocolCSV = "http-protocol.csv"

// grpcShape adds the Grpc and HTTP protocol tables to the report files when the summary has
// grpc or http scenarios (the markdown report holds them already).
func grpcShape(out map[string][]byte, sum results.Summary) error {
	for _, shape := range []struct {
		name   string
		rows   int
		render func(io.Writer, results.Summary) error
	}{
		{ReportGRPCProtocolCSV, len(results.GRPCProtocolRows(sum)), results.RenderGRPCProtocolCSV},
		{ReportHTTPProtocolCSV, len(results.HTTPProtocolRows(sum)), results.RenderHTTPProtocolCSV},
	} {
		if shape.rows == 0 {
			continue
		}
		var b bytes.Buffer
		if err := shape.render(&b, sum); err != nil {
			return err
		}
		out[shape.name] = b.Bytes()
	}
	return nil
}
