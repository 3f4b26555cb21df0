package lifecycle

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/charts"
	"github.com/benchrun/benchrun/internal/results"
)

// Chart files of a report (SVG), written when the run has data for them.
const (
	// ChartCPS is calls per second over time, one line per scenario.
	ChartCPS = "chart-cps.svg"
	// ChartLatency is the latency percentiles (p50, p90, p99, p99.9, max) per scenario as bars.
	ChartLatency = "chart-latency.svg"
	// ChartPercentiles is the HDR percentile plot, one curve per scenario.
	ChartPercentiles = "chart-percentiles.svg"
	// ChartReturnValues is the return value distribution per scenario as bars.
	ChartReturnValues = "chart-return-values.svg"
	// ChartCPU and ChartMemory are the target's and runners' resource usage by role.
	ChartCPU    = "chart-cpu.svg"
	ChartMemory = "chart-memory.svg"
)

// chartPointBudget bounds the points of one line chart (all series), so a run of 32
// scenarios over 24 h stays within the report ConfigMap's budget.
const chartPointBudget = 8000

// LatencyTimeChartFile is the chart file of a scenario's latency percentiles over time
// (p50, p90, p99 and max per interval of call starts).
func LatencyTimeChartFile(scenario string) string {
	return latencyTimePrefix + fileKey(scenario) + ".svg"
}

// latencyTimePrefix starts the file names of LatencyTimeChartFile.
const latencyTimePrefix = "chart-latency-time-"

// FaultChartFiles are the chart files of a scenario's per-second timeline around its faults:
// calls completed per second and latency per second.
func FaultChartFiles(scenario string) (calls, latency string) {
	return "chart-fault-calls-" + fileKey(scenario) + ".svg", "chart-fault-latency-" + fileKey(scenario) + ".svg"
}

// fileKey is a scenario name as part of a report file name: a name from a result document
// (written by a runner) could hold anything, while a file name must stay in its directory and
// be a valid ConfigMap key, so every character but letters, digits, '_' and '-' becomes '_'
// and the key is at most 200 bytes. Names admitted by the API are kept as they are.
func fileKey(name string) string {
	b := []byte(name)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			b[i] = '_'
		}
	}
	if len(b) > 200 {
		b = b[:200]
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// IsChart tells whether a report file is a chart (an SVG).
func IsChart(name string) bool { return strings.HasSuffix(name, ".svg") }

// ChartOrder sorts chart file names in the order a report shows them: CPS, latency over time
// per scenario, latency, the percentile plot, return values, faults, searches, resource usage.
func ChartOrder(names []string) []string {
	rank := func(n string) int {
		for i, p := range []string{ChartCPS, latencyTimePrefix, ChartLatency, ChartPercentiles, ChartReturnValues, "chart-fault-", "search-", ChartCPU, ChartMemory} {
			if strings.HasPrefix(n, p) {
				return i
			}
		}
		return 99
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return out
}

// renderer is anything that draws itself as SVG.
type renderer interface{ Render(io.Writer) error }

// addChart renders c into out[name].
func addChart(out map[string][]byte, name string, c renderer) error {
	var b bytes.Buffer
	if err := c.Render(&b); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	out[name] = b.Bytes()
	return nil
}

// Charts renders the report's charts from the summary and, when doc is set, the merged
// document (per-second CPS, the full latency distribution, the seconds around faults; without
// it, CPS per minute and the summary's percentiles). Charts without data are left out.
func Charts(sum results.Summary, doc *results.Document) (map[string][]byte, error) {
	out := map[string][]byte{}
	if s := cpsSeries(sum, doc); hasPoints(s) {
		c := charts.LineChart{Title: "Calls per second", X: charts.Axis{Title: "elapsed", Kind: charts.Elapsed},
			Y: charts.Axis{Title: "calls/s"}, Series: s, Budget: chartPointBudget}
		if err := addChart(out, ChartCPS, c); err != nil {
			return nil, err
		}
	}
	if err := latencyTimeCharts(out, sum, doc); err != nil {
		return nil, err
	}
	withCalls := slices.DeleteFunc(slices.Clone(sum.Scenarios), func(sc results.ScenarioSummary) bool { return sc.Calls == 0 })
	if len(withCalls) > 0 {
		if err := addChart(out, ChartLatency, latencyBars(withCalls)); err != nil {
			return nil, err
		}
		c := charts.PercentileChart{Title: "Latency by percentile", YTitle: "latency (ms)", LogY: true,
			Series: percentileSeries(withCalls, doc), Budget: chartPointBudget}
		if err := addChart(out, ChartPercentiles, c); err != nil {
			return nil, err
		}
	}
	if c, ok := returnValueBars(withCalls); ok {
		if err := addChart(out, ChartReturnValues, c); err != nil {
			return nil, err
		}
	}
	if err := faultCharts(out, doc); err != nil {
		return nil, err
	}
	return out, searchPlots(out, sum)
}

// hasPoints tells whether any series has a point.
func hasPoints(ss []charts.Series) bool {
	return slices.ContainsFunc(ss, func(s charts.Series) bool { return len(s.Points) > 0 })
}

// runStart is the earliest first call of the run's scenarios.
func runStart(sum results.Summary) time.Time {
	var t time.Time
	for _, sc := range sum.Scenarios {
		if sc.Calls > 0 && (t.IsZero() || sc.Start.Before(t)) {
			t = sc.Start
		}
	}
	return t
}

// cpsSeries is each scenario's calls per second over time from the run's start: per bucket of
// the document's start timeline, or per minute (per interval) of the summary without it.
func cpsSeries(sum results.Summary, doc *results.Document) []charts.Series {
	t0 := runStart(sum).Truncate(time.Second) // timeline buckets start on whole seconds
	var out []charts.Series
	for i, sc := range sum.Scenarios {
		s := charts.Series{Name: sc.Name}
		switch {
		case doc != nil && i < len(doc.Scenarios) && doc.Scenarios[i].Name == sc.Name && doc.Scenarios[i].Calls > 0:
			tl := doc.Scenarios[i].Starts
			w := float64(tl.BucketMs) / 1000
			for k, n := range tl.Counts {
				at := float64(tl.StartUnixMs-t0.UnixMilli())/1000 + float64(k)*w
				s.Points = append(s.Points, charts.Point{X: max(at, 0), Y: float64(n) / w}) // a wide first bucket starts before the run
			}
		case len(sc.CallsPerMinute) > 0:
			from := float64(sc.Start.Truncate(time.Second).Sub(t0)) / 1e9
			for k, n := range sc.CallsPerMinute {
				s.Points = append(s.Points, charts.Point{X: from + 60*float64(k), Y: float64(n) / 60})
			}
		case sc.IntervalSeconds > 0:
			w := float64(sc.IntervalSeconds)
			from := float64(sc.Start.Truncate(time.Duration(sc.IntervalSeconds)*time.Second).Sub(t0)) / 1e9
			for k, n := range sc.CallsPerInterval {
				s.Points = append(s.Points, charts.Point{X: from + w*float64(k), Y: float64(n) / w})
			}
		}
		out = append(out, s)
	}
	return out
}

// latencyTimeCharts adds, per scenario of doc with a latency timeline, its p50, p90, p99 and
// max latency per interval of call starts (x: elapsed from the run's start, like the CPS
// chart; a point per interval with calls, at the interval's start, the lines broken where
// intervals have none). The charts share chartPointBudget, at least 40 points per line each
// (charts.Downsample keeps the spikes; a downsampled line is not broken).
func latencyTimeCharts(out map[string][]byte, sum results.Summary, doc *results.Document) error {
	if doc == nil {
		return nil
	}
	n := 0
	for i := range doc.Scenarios {
		if doc.Scenarios[i].LatencyTimeline != nil {
			n++
		}
	}
	t0 := runStart(sum).Truncate(time.Second)
	per := max(chartPointBudget/max(4*n, 1), 40)
	for _, sc := range doc.Scenarios {
		pts := sc.LatencyTimeline.Points()
		if len(pts) == 0 {
			continue
		}
		w := charts.FormatElapsed(float64(sc.LatencyTimeline.BucketMs) / 1000)
		c := charts.LineChart{Title: sc.Name + ": latency over time (per " + w + " of call starts)",
			X: charts.Axis{Title: "elapsed", Kind: charts.Elapsed}, Y: charts.Axis{Title: "latency (ms)", Kind: charts.Log},
			Dots: len(pts) <= 60}
		gaps := len(sc.LatencyTimeline.Intervals) <= per // a downsampled line is not broken
		for _, st := range []struct {
			name string
			v    func(results.LatencyPoint) float64
		}{
			{"p50", func(p results.LatencyPoint) float64 { return p.P50Ms }},
			{"p90", func(p results.LatencyPoint) float64 { return p.P90Ms }},
			{"p99", func(p results.LatencyPoint) float64 { return p.P99Ms }},
			{"max", func(p results.LatencyPoint) float64 { return p.MaxMs }},
		} {
			s := charts.Series{Name: st.name, Dashed: st.name == "max"}
			for k, p := range pts {
				x := max(float64(p.StartUnixMs-t0.UnixMilli())/1000, 0)
				if gaps && k > 0 && p.StartUnixMs-pts[k-1].StartUnixMs > sc.LatencyTimeline.BucketMs {
					s.Points = append(s.Points, charts.Point{X: x, Y: math.NaN()})
				}
				s.Points = append(s.Points, charts.Point{X: x, Y: st.v(p)})
			}
			s.Points = charts.Downsample(s.Points, per)
			c.Series = append(c.Series, s)
		}
		if err := addChart(out, LatencyTimeChartFile(sc.Name), c); err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
	}
	return nil
}

// latencyBars is the latency percentiles of each scenario as grouped bars on a log axis.
func latencyBars(scs []results.ScenarioSummary) charts.BarChart {
	c := charts.BarChart{Title: "Latency percentiles per scenario", X: charts.Axis{Title: "scenario"},
		Y: charts.Axis{Title: "latency (ms)", Kind: charts.Log}}
	stats := []struct {
		name string
		v    func(results.Latency) float64
	}{
		{"p50", func(l results.Latency) float64 { return l.P50 }},
		{"p90", func(l results.Latency) float64 { return l.P90 }},
		{"p99", func(l results.Latency) float64 { return l.P99 }},
		{"p99.9", func(l results.Latency) float64 { return l.P999 }},
		{"max", func(l results.Latency) float64 { return l.Max }},
	}
	for _, sc := range scs {
		c.Categories = append(c.Categories, sc.Name)
	}
	for _, st := range stats {
		s := charts.BarSeries{Name: st.name}
		for _, sc := range scs {
			s.Values = append(s.Values, st.v(sc.LatencyMs))
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// percentileSeries is each scenario's latency (ms) by percentile: from every bucket of the
// document's histogram, or from the summary's percentiles without it.
func percentileSeries(scs []results.ScenarioSummary, doc *results.Document) []charts.Series {
	var out []charts.Series
	for _, sc := range scs {
		s := charts.Series{Name: sc.Name}
		if h := histogramOf(doc, sc.Name); h != nil && sc.Calls > 0 {
			s.Points = histogramCurve(h, sc.Calls)
		} else {
			l := sc.LatencyMs
			s.Points = []charts.Point{{X: 0, Y: l.Min}, {X: 50, Y: l.P50}, {X: 90, Y: l.P90}, {X: 99, Y: l.P99}, {X: 99.9, Y: l.P999}, {X: 100, Y: l.Max}}
		}
		out = append(out, s)
	}
	return out
}

// histogramOf is the latency histogram of the document's scenario of that name.
func histogramOf(doc *results.Document, name string) *results.Histogram {
	if doc == nil {
		return nil
	}
	for i := range doc.Scenarios {
		if doc.Scenarios[i].Name == name {
			return &doc.Scenarios[i].Latency
		}
	}
	return nil
}

// histogramCurve is the percentile curve of a histogram of n values, in ms: for each bucket,
// the percentile of the values below it and of the values up to it, at the bucket's value
// (kept within the exact min and max), ending at the maximum.
func histogramCurve(h *results.Histogram, n int64) []charts.Point {
	pts := []charts.Point{{X: 0, Y: float64(h.Min) / 1000}}
	var seen int64
	for _, b := range h.Buckets {
		v := float64(min(max(b[0], h.Min), h.Max)) / 1000
		pts = append(pts, charts.Point{X: 100 * float64(seen) / float64(n), Y: v})
		seen += b[1]
		pts = append(pts, charts.Point{X: 100 * float64(seen) / float64(n), Y: v})
	}
	return append(pts, charts.Point{X: 100, Y: float64(h.Max) / 1000})
}

// maxValueBars bounds the return values charted (the most frequent over all scenarios).
const maxValueBars = 8

// returnValueBars is the share of each frequent return value per scenario; ok is false when
// no scenario has return values.
func returnValueBars(scs []results.ScenarioSummary) (charts.BarChart, bool) {
	total := map[string]int64{}
	var values []string
	for _, sc := range scs {
		for _, v := range sc.ReturnValues {
			if _, seen := total[v.Value]; !seen {
				values = append(values, v.Value)
			}
			total[v.Value] += v.Count
		}
	}
	if len(values) == 0 {
		return charts.BarChart{}, false
	}
	slices.SortStableFunc(values, func(a, b string) int { return cmp.Compare(total[b], total[a]) })
	values = values[:min(len(values), maxValueBars)]
	c := charts.BarChart{Title: "Return values", X: charts.Axis{Title: "return value"}, Y: charts.Axis{Title: "% of successful calls"}, Categories: values}
	for _, sc := range scs {
		s := charts.BarSeries{Name: sc.Name}
		for _, v := range values {
			p := math.NaN()
			for _, vc := range sc.ReturnValues {
				if vc.Value == v {
					p = vc.Percent
				}
			}
			s.Values = append(s.Values, p)
		}
		c.Series = append(c.Series, s)
	}
	return c, true
}

// UsageCharts renders the target's and runners' CPU and memory by role (average per pod as
// bars, the maximum as the error bar's top) into out; nothing without usage.
func UsageCharts(out map[string][]byte, usage []v1alpha1.ResourceUsage) error {
	if len(usage) == 0 {
		return nil
	}
	cpu := charts.BarChart{Title: "CPU per pod (average, bar to the maximum)", X: charts.Axis{Title: "role"}, Y: charts.Axis{Title: "cores"}}
	mem := charts.BarChart{Title: "Memory per pod (average, bar to the maximum)", X: charts.Axis{Title: "role"}, Y: charts.Axis{Title: "MiB"}}
	cs, ms := charts.BarSeries{Name: "CPU"}, charts.BarSeries{Name: "memory"}
	for _, u := range usage {
		name := fmt.Sprintf("%s (%d)", u.Role, u.Pods)
		cpu.Categories, mem.Categories = append(cpu.Categories, name), append(mem.Categories, name)
		cs.Values, cs.Low, cs.High = append(cs.Values, u.CPUAvgCores), append(cs.Low, u.CPUAvgCores), append(cs.High, u.CPUMaxCores)
		avg, peak := float64(u.MemoryAvgBytes)/(1<<20), float64(u.MemoryMaxBytes)/(1<<20)
		ms.Values, ms.Low, ms.High = append(ms.Values, avg), append(ms.Low, avg), append(ms.High, peak)
	}
	cpu.Series, mem.Series = []charts.BarSeries{cs}, []charts.BarSeries{ms}
	if err := addChart(out, ChartCPU, cpu); err != nil {
		return err
	}
	return addChart(out, ChartMemory, mem)
}
