package lifecycle

import (
	"testing"

	"github.com/benchrun/benchrun/internal/workload"
)

// TestProtocolReportFiles: the named CSV files of the built-in packetd tables are the ones
// their workload.Table names, and no two tables share a file with another report file.
func TestProtocolReportFiles(t *testing.T) {
	want := map[string]string{workload.ProtocolRedis: ReportRedisProtocolCSV, workload.ProtocolGRPC: ReportGRPCProtocolCSV,
		workload.ProtocolHTTP: ReportHTTPProtocolCSV}
	for p, file := range want {
		if tb, ok := workload.TableOf(p); !ok || tb.CSV != file {
			t.Errorf("%s table: %+v, want file %s", p, tb, file)
		}
	}
	for _, tb := range workload.Tables() {
		switch tb.CSV {
		case ReportMarkdown, ReportJSON, ReportMerged, ReportPegasusCSV, ReportRedisShapesJSON:
			t.Errorf("%s table's file %s is another report's", tb.Protocol, tb.CSV)
		}
	}
}
