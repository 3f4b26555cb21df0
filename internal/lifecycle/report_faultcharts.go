package lifecycle

import (
	"fmt"
	"time"

	"github.com/benchrun/benchrun/internal/charts"
	"github.com/benchrun/benchrun/internal/results"
)

// faultWindowSeconds is the length of a fault's recording window in seconds, and
// faultDueSecond the window's second the fault is due in.
var (
	faultWindowSeconds = int64((results.FaultWindowBefore + results.FaultWindowAfter) / time.Second)
	faultDueSecond     = int64(results.FaultWindowBefore / time.Second)
)

// faultWindow is the seconds of one fault's recording window, zero-call seconds filled in.
type faultWindow struct {
	startMs int64 // Unix ms of the window's first recorded second
	secs    []results.Second
}

// faultWindows groups a scenario's fault seconds into windows of faultWindowSeconds from
// their first recorded second.
func faultWindows(secs []results.Second) []faultWindow {
	var out []faultWindow
	for _, s := range secs {
		if len(out) == 0 || s.StartUnixMs >= out[len(out)-1].startMs+faultWindowSeconds*1000 {
			out = append(out, faultWindow{startMs: s.StartUnixMs})
		}
		w := &out[len(out)-1]
		for next := w.startMs + int64(len(w.secs))*1000; next < s.StartUnixMs; next += 1000 {
			w.secs = append(w.secs, results.Second{StartUnixMs: next})
		}
		w.secs = append(w.secs, s)
	}
	return out
}

// faultCharts adds, per scenario with fault seconds, the calls and errors per second and the
// p99 and max latency per second around each fault (x: seconds from the fault's due second).
func faultCharts(out map[string][]byte, doc *results.Document) error {
	if doc == nil {
		return nil
	}
	for _, sc := range doc.Scenarios {
		if len(sc.FaultSeconds) == 0 {
			continue
		}
		calls := charts.LineChart{Title: sc.Name + ": calls per second around faults", X: charts.Axis{Title: "seconds from the fault"},
			Y: charts.Axis{Title: "calls completed per second"}, Markers: []charts.Marker{{X: 0, Label: "fault due"}}, Dots: true}
		lat := charts.LineChart{Title: sc.Name + ": latency per second around faults", X: charts.Axis{Title: "seconds from the fault"},
			Y: charts.Axis{Title: "latency (ms)", Kind: charts.Log}, Markers: []charts.Marker{{X: 0, Label: "fault due"}}, Dots: true}
		for _, w := range faultWindows(sc.FaultSeconds) {
			at := charts.FormatElapsed(float64(w.startMs+faultDueSecond*1000-sc.FirstStart.UnixMilli()) / 1000)
			c := charts.Series{Name: "calls, fault at " + at}
			e := charts.Series{Name: "errors, fault at " + at, Dashed: true}
			p99 := charts.Series{Name: "p99, fault at " + at}
			mx := charts.Series{Name: "max, fault at " + at, Dashed: true}
			for k, s := range w.secs {
				x := float64(int64(k) - faultDueSecond)
				c.Points = append(c.Points, charts.Point{X: x, Y: float64(s.Calls)})
				e.Points = append(e.Points, charts.Point{X: x, Y: float64(s.Errors)})
				if s.Calls > 0 {
					p99.Points = append(p99.Points, charts.Point{X: x, Y: float64(s.P99Micros()) / 1000})
					mx.Points = append(mx.Points, charts.Point{X: x, Y: float64(s.Latency.Max) / 1000})
				}
			}
			calls.Series = append(calls.Series, c, e)
			lat.Series = append(lat.Series, p99, mx)
		}
		cn, ln := FaultChartFiles(sc.Name)
		if err := addChart(out, cn, calls); err != nil {
			return err
		}
		if err := addChart(out, ln, lat); err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
	}
	return nil
}
