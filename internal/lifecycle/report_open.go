package lifecycle

import (
	"github.com/benchrun/benchrun/internal/charts"
	"github.com/benchrun/benchrun/internal/results"
)

// SearchPlotFile is the report file of a saturation search's latency-vs-throughput plot (the
// scenario name made safe as a file name and ConfigMap key, see fileKey).
func SearchPlotFile(scenario string) string { return "search-" + fileKey(scenario) + ".svg" }

// searchPlots adds the SVG plot of every saturation-search scenario to out: one point per
// step at (achieved CPS, corrected latency), p50 and p99 as two lines, the service-time p99
// dashed, the highest rate meeting the rule marked; steps cut by an early stop are left out.
func searchPlots(out map[string][]byte, sum results.Summary) error {
	for _, sc := range sum.Scenarios {
		if sc.Open == nil || sc.Open.Search == nil {
			continue
		}
		if err := addChart(out, SearchPlotFile(sc.Name), searchChart(sc)); err != nil {
			return err
		}
	}
	return nil
}

// searchChart is the latency-vs-throughput chart of a saturation search scenario.
func searchChart(sc results.ScenarioSummary) charts.LineChart {
	search := sc.Open.Search
	c := charts.LineChart{Title: sc.Name + ": latency vs throughput", X: charts.Axis{Title: "achieved calls/s"},
		Y: charts.Axis{Title: "latency (ms)"}, Dots: true}
	p50 := charts.Series{Name: "p50 (corrected)"}
	p99 := charts.Series{Name: "p99 (corrected)"}
	svc := charts.Series{Name: "p99 service time", Dashed: true}
	for _, st := range search.Steps {
		if st.Cut || st.Calls == 0 { // a cut step ran only until the search stopped: not a point of the curve
			continue
		}
		label := st.Name + " at " + results.FormatThousands(st.TargetRate, 0) + "/s"
		for _, p := range []struct {
			s *charts.Series
			v float64
		}{{&p50, st.P50Ms}, {&p99, st.P99Ms}, {&svc, st.ServiceP99Ms}} {
			p.s.Points = append(p.s.Points, charts.Point{X: st.CPS, Y: p.v})
			p.s.Labels = append(p.s.Labels, label)
		}
	}
	c.Series = []charts.Series{p50, p99, svc}
	if search.BestRate > 0 {
		c.Markers = []charts.Marker{{X: search.BestCPS, Label: "best " + results.FormatThousands(search.BestRate, 0) + "/s"}}
	}
	return c
}
