package lifecycle

import (
	"bytes"
	"maps"

	"github.com/benchrun/benchrun/internal/results"
)

// Report file names.
const (
	// ReportMarkdown is the seed-format tables.
	ReportMarkdown = "report.md"
	// ReportJSON is the summary.
	ReportJSON = "results.json"
	// ReportMerged is the merged result document.
	ReportMerged = "merged.json"
)

// Reports renders the report files by name: report.md (title, the seed-format tables and
// extra, e.g. resource usage), results.json, the seed-shape tables, the SVG charts (Charts:
// from doc when set, else from the summary) and, when doc is set, merged.json.
func Reports(title string, sum results.Summary, doc *results.Document, extra string) (map[string][]byte, error) {
	var md, js bytes.Buffer
	if err := results.RenderMarkdown(&md, title, sum); err != nil {
		return nil, err
	}
	md.WriteString(extra)
	if err := results.RenderJSON(&js, sum); err != nil {
		return nil, err
	}
	out := map[string][]byte{ReportMarkdown: md.Bytes(), ReportJSON: js.Bytes()}
	if err := redisShapes(out, sum); err != nil {
		return nil, err
	}
	plots, err := Charts(sum, doc) // the charts and the searches' plots (report_charts.go)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, plots)
	if err := protocolShapes(out, sum); err != nil {
		return nil, err
	}
	if doc != nil {
		var merged bytes.Buffer
		if err := results.Encode(&merged, doc); err != nil {
			return nil, err
		}
		out[ReportMerged] = merged.Bytes()
	}
	return out, nil
}
