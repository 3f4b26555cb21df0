package charts

import "io"

// PercentileChart is an HDR percentile plot: latency (y) against percentile (x, the
// Percentile axis up to 99.999 %), one curve per series, e.g. per scenario or per variant.
type PercentileChart struct {
	// Title is the chart's heading.
	Title string
	// YTitle titles the latency axis, e.g. "latency (ms)".
	YTitle string
	// LogY draws the latency axis logarithmically.
	LogY bool
	// Series are the curves: X is the percentile (0–100), Y the latency at it.
	Series []Series
	// Budget bounds the points of all curves together (see LineChart.Budget).
	Budget int
}

// Render writes the plot as a standalone SVG document (a LineChart over the Percentile axis).
func (c PercentileChart) Render(w io.Writer) error {
	y := Axis{Title: c.YTitle}
	if c.LogY {
		y.Kind = Log
	}
	return LineChart{Title: c.Title, X: Axis{Title: "percentile", Kind: Percentile}, Y: y, Series: c.Series, Budget: c.Budget}.Render(w)
}
