package results

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/workload"
)

// EchoScenarioType is the scenario type rendered in the echo-server shape (seed 002).
const EchoScenarioType = string(v1alpha1.ScenarioTCPEcho)

// EchoStats is a tcp.echo scenario in the shape of the echo-server comparison users publish
// (the fatuv table, printed by MagicStack's vmbench echo client):
//
//	2037047 0.98KiB messages in 30 seconds
//	Latency: min 0.01ms; max 10.75ms; mean 0.038ms; std: 0.031ms (81.73%)
//	Requests/sec: 67901.57
//	Transfer/sec: 64.76MiB
//
// Requests/sec is messages over the measured time (first send to last echo), not the
// trimmed CPS; Transfer/sec is the bytes echoed back per second.
type EchoStats struct {
	// Messages counts the messages sent (all calls, failed ones included).
	Messages int64 `json:"messages"`
	// MessageBytes is the message size (bytes sent per message).
	MessageBytes int64 `json:"messageBytes"`
	// MessageKiB is MessageBytes in KiB, rounded to 2 decimals.
	MessageKiB float64 `json:"messageKiB"`
	// Seconds is the measured time, rounded to 2 decimals.
	Seconds float64 `json:"seconds"`
	// LatencyMinMs is the smallest latency in ms (3 decimals).
	LatencyMinMs float64 `json:"latencyMinMs"`
	// LatencyMaxMs is the largest latency in ms (3 decimals).
	LatencyMaxMs float64 `json:"latencyMaxMs"`
	// LatencyMeanMs is the mean latency in ms (3 decimals).
	LatencyMeanMs float64 `json:"latencyMeanMs"`
	// LatencyStdMs is the latency's sample standard deviation in ms (3 decimals).
	LatencyStdMs float64 `json:"latencyStdMs"`
	// LatencyStdPercent is the standard deviation as a percentage of the mean (2 decimals).
	LatencyStdPercent float64 `json:"latencyStdPercent"`
	// RequestsPerSec is Messages / Seconds (2 decimals).
	RequestsPerSec float64 `json:"requestsPerSec"`
	// TransferMiBPerSec is the bytes received per second in MiB (2 decimals).
	TransferMiBPerSec float64 `json:"transferMiBPerSec"`
	// BytesSent counts the bytes sent.
	BytesSent int64 `json:"bytesSent"`
	// BytesReceived counts the bytes echoed back.
	BytesReceived int64 `json:"bytesReceived"`
}

// echoStats computes the echo shape of a tcp.echo scenario (nil for other types or no call).
func echoStats(s *Scenario) *EchoStats {
	if d, _ := workload.Of(s.Type); !d.Echo || s.Calls == 0 {
		return nil
	}
	secs := s.LastEnd.Sub(s.FirstStart).Seconds()
	n := float64(s.Calls)
	mean := float64(s.Latency.Sum) / n
	var std float64
	if s.Calls > 1 {
		std = math.Sqrt(max((s.Latency.SumSquares-float64(s.Latency.Sum)*mean)/(n-1), 0))
	}
	e := &EchoStats{
		Messages: s.Calls, MessageBytes: s.BytesSent / s.Calls, Seconds: roundN(secs, 2),
		LatencyMinMs: roundN(float64(s.Latency.Min)/1000, 3), LatencyMaxMs: roundN(float64(s.Latency.Max)/1000, 3),
		LatencyMeanMs: roundN(mean/1000, 3), LatencyStdMs: roundN(std/1000, 3),
		BytesSent: s.BytesSent, BytesReceived: s.BytesReceived,
	}
	e.MessageKiB = roundN(float64(e.MessageBytes)/1024, 2)
	if mean > 0 {
		e.LatencyStdPercent = roundN(std/mean*100, 2)
	}
	if secs > 0 {
		e.RequestsPerSec = roundN(n/secs, 2)
		e.TransferMiBPerSec = roundN(float64(s.BytesReceived)/secs/(1<<20), 2)
	}
	return e
}

// roundN rounds to d decimals (half away from zero); NaN and infinities become 0.
func roundN(x float64, d int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}

// pyFloat formats v as Python's str(float) does for the values of the echo shape: the
// shortest representation, with ".0" for whole numbers (0.98, 67732.3, 1.0).
func pyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}

// EchoBlock returns the four lines of the echo shape of e, each ending with a newline. The
// time is printed like the seed's duration argument: whole seconds without decimals.
func EchoBlock(e *EchoStats) string {
	secs := strconv.FormatFloat(e.Seconds, 'f', -1, 64)
	return fmt.Sprintf("%d %sKiB messages in %s seconds\n", e.Messages, pyFloat(e.MessageKiB), secs) +
		fmt.Sprintf("Latency: min %sms; max %sms; mean %sms; std: %sms (%s%%)\n",
			pyFloat(e.LatencyMinMs), pyFloat(e.LatencyMaxMs), pyFloat(e.LatencyMeanMs), pyFloat(e.LatencyStdMs), pyFloat(e.LatencyStdPercent)) +
		fmt.Sprintf("Requests/sec: %s\n", pyFloat(e.RequestsPerSec)) +
		fmt.Sprintf("Transfer/sec: %sMiB\n", pyFloat(e.TransferMiBPerSec))
}

// echoHeaders are the columns of the echo comparison table, in the seed's order.
var echoHeaders = []string{"", "Requests/sec", "Latency min (ms)", "Latency max (ms)", "Latency mean (ms)", "Latency std (ms)", "Transfer/sec (MiB)"}

// splitEcho separates the tcp.echo scenarios (with an echo shape) from the others.
func splitEcho(scs []ScenarioSummary) (echo, rest []ScenarioSummary) {
	for _, sc := range scs {
		if sc.Echo != nil {
			echo = append(echo, sc)
		} else {
			rest = append(rest, sc)
		}
	}
	return echo, rest
}

// writeEchoMarkdown writes the echo shape of the tcp.echo scenarios (sorted by name): one
// comparison table, then each scenario's block as the seed prints it; failed calls are
// noted after the block.
func writeEchoMarkdown(bw *bufio.Writer, echo []ScenarioSummary) {
	if len(echo) == 0 {
		return
	}
	scs := sortedByName(echo)
	bw.WriteString("TCP Echo Statistics:\n\n")
	t := &table{headers: echoHeaders, right: []bool{false, true, true, true, true, true, true}}
	for _, sc := range scs {
		e := sc.Echo
		t.rows = append(t.rows, []string{sc.Name, pyFloat(e.RequestsPerSec), pyFloat(e.LatencyMinMs), pyFloat(e.LatencyMaxMs),
			pyFloat(e.LatencyMeanMs), pyFloat(e.LatencyStdMs), pyFloat(e.TransferMiBPerSec)})
	}
	t.write(bw)
	for _, sc := range scs {
		fmt.Fprintf(bw, "\n### %s\n\n```\n%s```\n", MarkdownText(sc.Name), EchoBlock(sc.Echo))
		if sc.Errors > 0 {
			fmt.Fprintf(bw, "\nErrors: %s (%s)\n", formatInt(sc.Errors), MarkdownText(joinValues(sc.ErrorKinds)))
		}
	}
	bw.WriteString("\n")
}

// echoCSVHeader lists the columns of the echo CSV shape.
var echoCSVHeader = []string{
	"name", "type", "messages", "message_bytes", "seconds", "requests_per_sec",
	"latency_min_ms", "latency_max_ms", "latency_mean_ms", "latency_std_ms", "latency_std_percent",
	"transfer_mib_per_sec", "bytes_sent", "bytes_received", "errors", "partial",
}

// allEcho reports whether s has scenarios and every one has the echo shape.
func allEcho(s Summary) bool {
	echo, rest := splitEcho(s.Scenarios)
	return len(echo) > 0 && len(rest) == 0
}

// renderEchoCSV writes one CSV row per tcp.echo scenario in the echo shape's columns.
func renderEchoCSV(w io.Writer, s Summary) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(echoCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	for _, sc := range s.Scenarios {
		e := sc.Echo
		row := []string{sc.Name, sc.Type, i(e.Messages), i(e.MessageBytes), f(e.Seconds), f(e.RequestsPerSec),
			f(e.LatencyMinMs), f(e.LatencyMaxMs), f(e.LatencyMeanMs), f(e.LatencyStdMs), f(e.LatencyStdPercent),
			f(e.TransferMiBPerSec), i(e.BytesSent), i(e.BytesReceived), i(sc.Errors), strconv.FormatBool(s.Partial)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
