package results

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
)

// svgW, svgH and svgPad are the plot's size and margin in pixels.
const (
	svgW, svgH = 640.0, 400.0
	svgPad     = 60.0
)

// RenderSearchSVG writes the latency-vs-throughput plot of a saturation search: one point per
// step at (achieved CPS, corrected latency), p50 and p99 as two lines, the service-time p99 as
// a dashed third, the highest rate meeting the rule marked; steps cut by an early stop are
// left out. A small standalone SVG document.
func RenderSearchSVG(w io.Writer, sc ScenarioSummary) error {
	if sc.Open == nil || sc.Open.Search == nil {
		return fmt.Errorf("scenario %q is not a saturation search", sc.Name)
	}
	var steps []SearchStep // a cut step ran only until the search stopped: not a point of the curve
	for _, st := range sc.Open.Search.Steps {
		if !st.Cut {
			steps = append(steps, st)
		}
	}
	var maxX, maxY float64
	for _, st := range steps {
		maxX = max(maxX, st.CPS, st.TargetRate)
		maxY = max(maxY, st.P99Ms, st.ServiceP99Ms)
	}
	maxX, maxY = niceCeil(maxX), niceCeil(maxY)
	x := func(v float64) float64 { return svgPad + v/maxX*(svgW-2*svgPad) }
	y := func(v float64) float64 { return svgH - svgPad - v/maxY*(svgH-2*svgPad) }
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(bw, `<text x="%g" y="20" text-anchor="middle" font-size="14">%s: latency vs throughput</text>`+"\n", svgW/2, html.EscapeString(sc.Name))
	// axes and ticks
	fmt.Fprintf(bw, `<path d="M%g %g V%g H%g" stroke="black" fill="none"/>`+"\n", svgPad, svgPad, svgH-svgPad, svgW-svgPad)
	for i := 0; i <= 4; i++ {
		vx, vy := maxX*float64(i)/4, maxY*float64(i)/4
		fmt.Fprintf(bw, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", x(vx), svgH-svgPad+16, FormatThousands(vx, 0))
		fmt.Fprintf(bw, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", svgPad-6, y(vy)+4, formatG(round2(vy)))
		fmt.Fprintf(bw, `<path d="M%g %.1f H%g" stroke="#ddd"/>`+"\n", svgPad, y(vy), svgW-svgPad)
	}
	fmt.Fprintf(bw, `<text x="%g" y="%g" text-anchor="middle">achieved calls/s</text>`+"\n", svgW/2, svgH-16)
	fmt.Fprintf(bw, `<text x="16" y="%g" text-anchor="middle" transform="rotate(-90 16 %g)">latency (ms)</text>`+"\n", svgH/2, svgH/2)
	series := []struct {
		name, color, dash string
		v                 func(SearchStep) float64
	}{
		{"p50 (corrected)", "#1f77b4", "", func(s SearchStep) float64 { return s.P50Ms }},
		{"p99 (corrected)", "#d62728", "", func(s SearchStep) float64 { return s.P99Ms }},
		{"p99 service time", "#7f7f7f", ` stroke-dasharray="4 3"`, func(s SearchStep) float64 { return s.ServiceP99Ms }},
	}
	for i, se := range series {
		d := ""
		for _, st := range steps {
			if st.Calls == 0 {
				continue
			}
			cmd := "L"
			if d == "" {
				cmd = "M"
			}
			d += fmt.Sprintf("%s%.1f %.1f ", cmd, x(st.CPS), y(se.v(st)))
		}
		if d != "" {
			fmt.Fprintf(bw, `<path d="%s" stroke="%s" fill="none" stroke-width="2"%s/>`+"\n", d, se.color, se.dash)
		}
		for _, st := range steps {
			if st.Calls > 0 {
				fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s/s: %s ms</title></circle>`+"\n",
					x(st.CPS), y(se.v(st)), se.color, st.Name, FormatThousands(st.TargetRate, 0), formatG(se.v(st)))
			}
		}
		fmt.Fprintf(bw, `<text x="%g" y="%d" fill="%s">%s</text>`+"\n", svgPad+10, 40+14*i, se.color, se.name)
	}
	if b := sc.Open.Search.BestRate; b > 0 {
		fmt.Fprintf(bw, `<path d="M%.1f %g V%g" stroke="green" stroke-dasharray="2 2"/>`+"\n", x(sc.Open.Search.BestCPS), svgPad, svgH-svgPad)
		fmt.Fprintf(bw, `<text x="%.1f" y="%g" fill="green" text-anchor="end">best %s/s</text>`+"\n", x(sc.Open.Search.BestCPS)-4, svgPad+12, FormatThousands(b, 0))
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for v <= 0).
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
