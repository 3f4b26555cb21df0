package results

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/benchrun/benchrun/internal/workload"
)

// Shapes are the table shapes of the seeds, by name (workload.Shapes): ya (000/001: CPS,
// execution time, return values), echo (002: the echo-server comparison), packetd (003: the
// protocol tables of workload.Tables) and ycsb (004: the Pegasus per-operation table).
var Shapes = workload.Shapes()

// ShapesOf lists the shapes s has rows for, in Shapes order: ya always (every scenario has its
// ya rows), the others when a scenario of theirs is present.
func ShapesOf(s Summary) []string {
	echo, _ := splitEcho(s.Scenarios)
	out := []string{workload.ShapeYa}
	if len(echo) > 0 {
		out = append(out, workload.ShapeEcho)
	}
	if hasProtocolRows(s) {
		out = append(out, workload.ShapePacketd)
	}
	if len(PegasusRows(s)) > 0 {
		out = append(out, workload.ShapeYCSB)
	}
	return out
}

// RenderShape writes only one shape's tables of s in markdown, whatever the scenario types
// would pick: "ya" the ya tables of every scenario (tcp.echo ones too), "echo" the echo-server
// shape of the tcp.echo scenarios, "packetd" the protocol tables (workload.Tables), "ycsb"
// the Pegasus table. A shape s has no rows for is an error naming the shapes it has.
func RenderShape(w io.Writer, shape, title string, s Summary) error {
	has := ShapesOf(s)
	known := false
	for _, k := range Shapes {
		known = known || k == shape
	}
	if !known {
		return fmt.Errorf("unknown shape %q (one of %s)", shape, strings.Join(Shapes, ", "))
	}
	found := false
	for _, h := range has {
		found = found || h == shape
	}
	if !found {
		return fmt.Errorf("these results have no %s rows (their shapes: %s)", shape, strings.Join(has, ", "))
	}
	bw := bufio.NewWriter(w)
	writeHeading(bw, title, s)
	switch shape {
	case workload.ShapeYa:
		writeYa(bw, sortedByName(s.Scenarios))
	case workload.ShapeEcho:
		echo, _ := splitEcho(s.Scenarios)
		writeEchoMarkdown(bw, echo)
	case workload.ShapePacketd:
		writeProtocolTables(bw, s, true)
		writeProtocolTables(bw, s, false)
	case workload.ShapeYCSB:
		writePegasus(bw, s)
	}
	bw.WriteString("\n")
	return bw.Flush()
}
