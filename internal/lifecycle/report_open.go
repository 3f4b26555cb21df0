package lifecycle

import (
	"bytes"

	"github.com/benchrun/benchrun/internal/results"
)

// SearchPlotFile is the report file of a saturation search's latency-vs-throughput plot.
func SearchPlotFile(scenario string) string { return "search-" + scenario + ".svg" }

// searchPlots adds the SVG plot of every saturation-search scenario to out.
func searchPlots(out map[string][]byte, sum results.Summary) error {
	for _, sc := range sum.Scenarios {
		if sc.Open == nil || sc.Open.Search == nil {
			continue
		}
		var b bytes.Buffer
		if err := results.RenderSearchSVG(&b, sc); err != nil {
			return err
		}
		out[SearchPlotFile(sc.Name)] = b.Bytes()
	}
	return nil
}
