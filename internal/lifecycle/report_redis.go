package lifecycle

import (
	"bytes"

	"github.com/benchrun/benchrun/internal/results"
)

// Report files of the Redis seed shapes, written only when the run has rows for them (the
// Redis protocol table's CSV is one of protocolShapes').
const (
	// ReportPegasusCSV is the Pegasus YCSB table (seed 004) as CSV.
	ReportPegasusCSV = "ycsb-pegasus.csv"
	// ReportRedisShapesJSON holds both tables as JSON.
	ReportRedisShapesJSON = "redis-tables.json"
)

// redisShapes adds the Pegasus table and both Redis tables as JSON to the report files when
// the summary has rows for them (the markdown report holds them already).
func redisShapes(out map[string][]byte, sum results.Summary) error {
	peg, proto := results.PegasusRows(sum), results.RedisProtocolRows(sum)
	if len(peg) == 0 && len(proto) == 0 {
		return nil
	}
	var js bytes.Buffer
	if err := results.RenderRedisShapesJSON(&js, sum); err != nil {
		return err
	}
	out[ReportRedisShapesJSON] = js.Bytes()
	if len(peg) > 0 {
		var b bytes.Buffer
		if err := results.RenderPegasusCSV(&b, sum); err != nil {
			return err
		}
		out[ReportPegasusCSV] = b.Bytes()
	}
	return nil
}
