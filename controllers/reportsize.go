package controllers

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results"
)

// maxReportBytes bounds the data of one report ConfigMap, under the API server's 1 MiB
// object limit with room for metadata.
var maxReportBytes = 900 << 10

// maxReportReasons is how many partial reasons a report too large for one ConfigMap lists.
const maxReportReasons = 64

// reportSeriesKey is the key of a report part: the per-minute series of some scenarios.
const reportSeriesKey = "series.json"

// reportPart is one extra report ConfigMap.
type reportPart struct {
	name string
	data map[string]string
}

// scenarioSeries is one scenario's per-minute (or per-interval) series in a report part.
type scenarioSeries struct {
	Name             string  `json:"name"`
	CallsPerMinute   []int64 `json:"callsPerMinute,omitempty"`
	CallsPerInterval []int64 `json:"callsPerInterval,omitempty"`
	IntervalSeconds  int64   `json:"intervalSeconds,omitempty"`
}

// reportData renders the report ConfigMap's data: report.md (the seed tables plus extra),
// results.json, resources.json and the charts (plots: SVG files by name, drawn from the full
// summary). When that is over maxReportBytes, the per-minute series
// move to parts named base-series-N (each within maxReportBytes), report.md and results.json
// are rendered without them and report.md names the parts, and partial reasons beyond
// maxReportReasons are summarised by their count (e.g. a thousand runners without results);
// when it is still over, the charts are left out (report.md says so).
// It is an error when even that does not fit.
func reportData(title string, sum results.Summary, extra, resources, base string, plots map[string][]byte) (map[string]string, []reportPart, error) {
	data, err := renderReport(title, sum, extra, resources, plots)
	if err != nil || dataSize(data) <= maxReportBytes {
		return data, nil, err
	}
	parts, err := seriesParts(sum, base)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.name
	}
	short := sum
	if n := len(sum.PartialReasons); n > maxReportReasons {
		short.PartialReasons = append(sum.PartialReasons[:maxReportReasons:maxReportReasons],
			fmt.Sprintf("… and %d more reasons", n-maxReportReasons))
	}
	short.Scenarios = make([]results.ScenarioSummary, len(sum.Scenarios))
	for i, sc := range sum.Scenarios {
		sc.CallsPerMinute, sc.CallsPerInterval, sc.IntervalSeconds = nil, nil, 0
		short.Scenarios[i] = sc
	}
	note := fmt.Sprintf("\nCalls per minute: too long for this ConfigMap; in ConfigMaps %s (%s).\n", strings.Join(names, ", "), reportSeriesKey)
	if data, err = renderReport(title, short, note+extra, resources, plots); err != nil {
		return nil, nil, err
	}
	if dataSize(data) > maxReportBytes && len(plots) > 0 {
		note += "\nCharts: left out, the report is too large for its ConfigMap with them (`benchrun report --html` draws them from merged results).\n"
		if data, err = renderReport(title, short, note+extra, resources, nil); err != nil {
			return nil, nil, err
		}
	}
	if n := dataSize(data); n > maxReportBytes {
		return nil, nil, fmt.Errorf("report of %d KiB without its per-minute series: more than %d KiB", n>>10, maxReportBytes>>10)
	}
	return data, parts, nil
}

// renderReport renders the report files (report.md, results.json, the seed-shape tables),
// resources.json and the given charts (instead of those Reports draws from sum).
func renderReport(title string, sum results.Summary, extra, resources string, plots map[string][]byte) (map[string]string, error) {
	files, err := lifecycle.Reports(title, sum, nil, extra)
	if err != nil {
		return nil, err
	}
	data := map[string]string{"resources.json": resources}
	for name, b := range files { // report.md, results.json and the seed-shape tables
		if !lifecycle.IsChart(name) {
			data[name] = string(b)
		}
	}
	for name, b := range plots {
		data[name] = string(b)
	}
	return data, nil
}

// seriesParts packs the scenarios' series into as few parts as fit maxReportBytes each.
func seriesParts(sum results.Summary, base string) ([]reportPart, error) {
	var parts []reportPart
	var cur []scenarioSeries
	size := 2
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		b, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		parts = append(parts, reportPart{name: fmt.Sprintf("%s-series-%d", base, len(parts)), data: map[string]string{reportSeriesKey: string(b)}})
		cur, size = nil, 2
		return nil
	}
	for _, sc := range sum.Scenarios {
		ss := scenarioSeries{Name: sc.Name, CallsPerMinute: sc.CallsPerMinute, CallsPerInterval: sc.CallsPerInterval, IntervalSeconds: sc.IntervalSeconds}
		b, err := json.Marshal(ss)
		if err != nil {
			return nil, err
		}
		if len(b)+1 > maxReportBytes {
			return nil, fmt.Errorf("scenario %s: per-minute series of %d KiB, more than a ConfigMap holds", sc.Name, len(b)>>10)
		}
		if size+len(b)+1 > maxReportBytes {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		cur, size = append(cur, ss), size+len(b)+1
	}
	return parts, flush()
}

// dataSize is the byte size of a ConfigMap's data.
func dataSize(data map[string]string) int {
	n := 0
	for k, v := range data {
		n += len(k) + len(v)
	}
	return n
}
