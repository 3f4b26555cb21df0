package results

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/benchrun/benchrun/internal/workload"
)

// The Redis-side seed shapes: the Pegasus YCSB table (seed 004) and the Redis rows of the
// packetd protocol table (seed 003). Both are built from a Summary alone, so the operator's
// report, `benchrun run` and `benchrun report` print the same rows.

// PegasusHeader is the column order of the Pegasus YCSB table (seed 004, the 1.11.6 tables
// without their duration and cache-hit columns): latencies in microseconds.
var PegasusHeader = []string{"Case", "threads", "Read/Write", "R-QPS", "R-AVG-Lat", "R-P99-Lat", "R-P999-Lat",
	"W-QPS", "W-AVG-Lat", "W-P99-Lat", "W-P999-Lat"}

// redisTable is the Redis table of the packetd protocol tables.
var redisTable, _ = workload.TableOf(workload.ProtocolRedis)

// RedisProtocolHeader is the column order of the Redis table of the packetd protocol table (seed 003).
var RedisProtocolHeader = ProtocolHeader(redisTable)

// PegasusRow is one row of the Pegasus table: cells in PegasusHeader order, plus the scenario.
type PegasusRow struct {
	// Scenario is the scenario name (the seed table has no name column).
	Scenario string `json:"scenario"`
	// Cells are the formatted cells in PegasusHeader order.
	Cells []string `json:"cells"`
}

// PegasusRows returns a row per scenario with operations, in summary order.
func PegasusRows(s Summary) []PegasusRow {
	var rows []PegasusRow
	for _, sc := range s.Scenarios {
		if sc.Reads == nil || sc.Writes == nil {
			continue
		}
		r, w := sc.Reads, sc.Writes
		var kase string
		switch {
		case r.Calls > 0 && w.Calls > 0:
			kase = "Read & Write"
		case r.Calls > 0:
			kase = "Read"
		default:
			kase = "Write"
		}
		cells := []string{kase, threads(sc.VUs), RWRatio(r.Calls, w.Calls)}
		for _, op := range []*OperationSummary{r, w} {
			if op.Calls == 0 {
				cells = append(cells, "-", "-", "-", "-")
				continue
			}
			cells = append(cells, FormatThousands(math.Round(op.CPS), 0), formatInt(op.LatencyUs.Mean),
				formatInt(op.LatencyUs.P99), formatInt(op.LatencyUs.P999))
		}
		rows = append(rows, PegasusRow{Scenario: sc.Name, Cells: cells})
	}
	return rows
}

// threads is the seed's "a * b": runners × virtual users per runner ("-" when unknown); an
// uneven split shows the mean per runner with 2 decimals.
func threads(vus []int64) string {
	if len(vus) == 0 {
		return "-"
	}
	var total int64
	even := true
	for _, v := range vus {
		total += v
		even = even && v == vus[0]
	}
	if even {
		return fmt.Sprintf("%d * %d", len(vus), vus[0])
	}
	return fmt.Sprintf("%d * %s", len(vus), strconv.FormatFloat(float64(total)/float64(len(vus)), 'f', 2, 64))
}

// RWRatio is the seed's Read/Write column from the observed counts: "1:0", "0:1", or the
// larger side rounded against 1 ("30:1", "1:3", "1:1").
func RWRatio(reads, writes int64) string {
	switch {
	case writes == 0:
		return "1:0"
	case reads == 0:
		return "0:1"
	case reads >= writes:
		return fmt.Sprintf("%d:1", int64(math.Round(float64(reads)/float64(writes))))
	default:
		return fmt.Sprintf("1:%d", int64(math.Round(float64(writes)/float64(reads))))
	}
}

// ProtocolRow is one row of the packetd-shaped protocol table, cells in RedisProtocolHeader order.
type ProtocolRow struct {
	// Scenario is the scenario name.
	Scenario string `json:"scenario"`
	// Cells are the formatted cells.
	Cells []string `json:"cells"`
	// Sent is benchrun's count (REQUEST), Observed the target's own count of the scenario's
	// commands (PROTO/METRICS; -1 when the target reported none).
	Sent, Observed int64 `json:"-"`
}

// RedisProtocolRows returns a row per Redis scenario (a type of the Redis protocol table:
// redis.* or ycsb) that names its command, in summary order.
func RedisProtocolRows(s Summary) []ProtocolRow { return ProtocolRows(s, redisTable) }

// protocolRow is a scenario's packetd row without a COMMAND column: PROTO, REQUEST, WORKERS,
// BODYSIZE, ELAPSED, QPS, BPS (wire bits both ways), PROTO/METRICS, PROTO/PERCENT.
func protocolRow(sc ScenarioSummary, proto string) ProtocolRow {
	elapsed := sc.End.Sub(sc.Start).Seconds()
	var qps, bps float64
	if elapsed > 0 {
		qps = float64(sc.Calls) / elapsed
		bps = float64(sc.BytesSent+sc.BytesReceived) * 8 / elapsed
	}
	var workers int64
	for _, v := range sc.VUs {
		workers += v
	}
	observed, metrics, percent := ObservedCalls(sc), "-", "-"
	if observed >= 0 {
		metrics = strconv.FormatInt(observed, 10)
		if sc.Calls > 0 {
			percent = strconv.FormatFloat(float64(observed)*100/float64(sc.Calls), 'f', 3, 64) + "%"
		}
	}
	return ProtocolRow{Scenario: sc.Name, Sent: sc.Calls, Observed: observed, Cells: []string{
		proto, strconv.FormatInt(sc.Calls, 10), strconv.FormatInt(workers, 10),
		FormatBodySize(sc.BodySize), strconv.FormatFloat(elapsed, 'f', 3, 64) + "s",
		strconv.FormatFloat(qps, 'f', 3, 64), FormatBits(bps), metrics, percent,
	}}
}

// ObservedCalls is the target's own count of the scenario's calls: the sum of ServerCalls over
// the names in Command, less one per read-modify-write operation (a read and a write, two
// commands for one call); -1 when the target reported no counts.
func ObservedCalls(sc ScenarioSummary) int64 {
	if sc.ServerCalls == nil {
		return -1
	}
	var n int64
	for _, c := range strings.Split(sc.Command, ",") {
		n += sc.ServerCalls[strings.TrimSpace(c)]
	}
	for _, op := range sc.Operations {
		if op.Name == "read-modify-write" {
			n -= op.Calls
		}
	}
	return n
}

// FormatBodySize writes a byte count as the seeds do: 0B, 512B, 1KB, 10KB, 1MB (1024-based;
// up to 2 decimals when not whole).
func FormatBodySize(n int64) string {
	v, unit := float64(n), "B"
	switch {
	case n >= 1<<20:
		v, unit = v/(1<<20), "MB"
	case n >= 1<<10:
		v, unit = v/(1<<10), "KB"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + unit
}

// FormatBits writes a bit rate as packetd does: the smallest of b, Kib, Mib, Gib, Tib
// (1024-based) under 10000, 4 significant digits (880.8Mib, 1492Mib, 14.37Gib, 0b).
func FormatBits(bps float64) string {
	units := []string{"b", "Kib", "Mib", "Gib", "Tib"}
	i := 0
	for bps >= 10000 && i < len(units)-1 {
		bps /= 1024
		i++
	}
	return strconv.FormatFloat(bps, 'g', 4, 64) + units[i]
}

// writePegasus appends the Pegasus YCSB table (seed 004) when the summary has ycsb rows.
func writePegasus(bw *bufio.Writer, s Summary) {
	if rows := PegasusRows(s); len(rows) > 0 {
		writeShapeTable(bw, "\nYCSB per operation (latency in µs; rows: %s):\n\n", PegasusHeader,
			[]bool{false, false, false, true, true, true, true, true, true, true, true},
			rows, func(r PegasusRow) (string, []string) { return r.Scenario, r.Cells })
	}
}

// writeShapeTable writes title (its %s: the rows' scenario names, comma-separated) and a
// table of rows; row gives a row's scenario name and cells.
func writeShapeTable[R any](bw *bufio.Writer, title string, headers []string, right []bool, rows []R, row func(R) (string, []string)) {
	t := &table{headers: headers, right: right}
	names := make([]string, len(rows))
	for i, r := range rows {
		var cells []string
		names[i], cells = row(r)
		t.rows = append(t.rows, cells)
	}
	fmt.Fprintf(bw, title, strings.Join(names, ", "))
	t.write(bw)
}

// RenderPegasusCSV writes the Pegasus table as CSV: PegasusHeader then "scenario".
func RenderPegasusCSV(w io.Writer, s Summary) error {
	rows := PegasusRows(s)
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append(append([]string(nil), r.Cells...), r.Scenario)
	}
	return writeCSV(w, append(append([]string(nil), PegasusHeader...), "scenario"), out)
}

// writeCSV writes a header and rows.
func writeCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

// RenderRedisShapesJSON writes both tables as JSON: {"pegasus": {"header", "rows"},
// "redisProtocol": {"header", "rows"}}, each row {"scenario", "cells"}.
func RenderRedisShapesJSON(w io.Writer, s Summary) error {
	type tableJSON struct {
		Header []string `json:"header"`
		Rows   any      `json:"rows"`
	}
	peg, proto := PegasusRows(s), RedisProtocolRows(s)
	if peg == nil {
		peg = []PegasusRow{}
	}
	if proto == nil {
		proto = []ProtocolRow{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Pegasus       tableJSON `json:"pegasus"`
		RedisProtocol tableJSON `json:"redisProtocol"`
	}{tableJSON{PegasusHeader, peg}, tableJSON{RedisProtocolHeader, proto}})
}
