package charts

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Point is one data point.
type Point struct {
	// X and Y are the point's values in axis units (seconds on an Elapsed axis, percent on a
	// Percentile axis). A NaN Y breaks the line there (a gap, e.g. an interval without data);
	// other points that cannot be drawn (0 on a log axis) are skipped.
	X, Y float64
}

// Series is one named line.
type Series struct {
	// Name is the legend entry (escaped when drawn).
	Name string
	// Points are drawn in order.
	Points []Point
	// Dashed draws the line dashed whatever its index.
	Dashed bool
	// Labels, when set, name each point in its dot's tooltip (e.g. a search step); unused
	// once the series is downsampled.
	Labels []string
}

// Marker is a labelled vertical line across the plot, e.g. a fault or the best rate.
type Marker struct {
	// X is its position in x axis units.
	X float64
	// Label is written at its top.
	Label string
}

// LineChart is a chart of lines over a shared x axis.
type LineChart struct {
	// Title is the chart's heading.
	Title string
	// X and Y are the axes.
	X, Y Axis
	// Series are the lines, one colour each (Colour, Dash).
	Series []Series
	// Markers are vertical lines.
	Markers []Marker
	// Dots marks every point with a dot whose tooltip gives its values (for short series).
	Dots bool
	// Budget, when positive, bounds the points of all series together (each series gets an
	// equal share, at least 100 and at most MaxPoints), to bound the file's size.
	Budget int
}

// Render writes the chart as a standalone SVG document. Series are downsampled to MaxPoints
// points; a chart without points says "no data".
func (c LineChart) Render(w io.Writer) error {
	series := make([]Series, len(c.Series))
	per := MaxPoints
	if c.Budget > 0 && len(c.Series) > 0 {
		per = min(max(c.Budget/len(c.Series), 100), MaxPoints)
	}
	for i, s := range c.Series {
		if len(s.Points) > per {
			s.Points, s.Labels = Downsample(s.Points, per), nil
		}
		series[i] = s
	}
	xs, ys, ok := c.scales(series)
	cv := open(w, c.Title, chartHeight(len(series), 0))
	cv.axisTitles(c.X.Title, c.Y.Title, 0)
	if !ok {
		cv.text(width/2, plotTop+plotHeight/2, "middle", "no data", ` fill="#777"`)
		cv.frame()
		return cv.close()
	}
	cv.grid(xs, ys)
	for i, s := range series {
		cv.line(i, s, xs, ys, c.X, c.Y, c.Dots)
	}
	for _, m := range c.Markers {
		if !xs.valid(m.X) {
			continue
		}
		x := xs.px(m.X)
		fmt.Fprintf(cv.bw, `<path d="M%s %s V%s" stroke="#555" stroke-dasharray="3 3"><title>%s</title></path>`+"\n",
			num(x), num(plotTop), num(plotTop+plotHeight), Esc(m.Label))
		cv.text(x+3, plotTop+11, "start", cut(m.Label, 30), ` fill="#333" font-size="11"`)
	}
	cv.frame()
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.Name
	}
	cv.legend(names, 0, func(i int, x, y float64) {
		fmt.Fprintf(cv.bw, `<path d="M%s %s h20" stroke="%s" stroke-width="2.5"%s/>`, num(x), num(y), Colour(i), dashAttr(i, series[i].Dashed))
	})
	return cv.close()
}

// dashAttr is the stroke-dasharray attribute of series i ("" for a solid line).
func dashAttr(i int, dashed bool) string {
	d := Dash(i)
	if dashed && d == "" {
		d = "6 3"
	}
	if d == "" {
		return ""
	}
	return ` stroke-dasharray="` + d + `"`
}

// scales fits both axes to the drawable points; ok is false when there are none.
func (c LineChart) scales(series []Series) (xs, ys *scale, ok bool) {
	probeX, probeY := &scale{kind: c.X.Kind}, &scale{kind: c.Y.Kind}
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			if !probeX.valid(p.X) || !probeY.valid(p.Y) {
				continue
			}
			ok = true
			xlo, xhi = min(xlo, p.X), max(xhi, p.X)
			ylo, yhi = min(ylo, p.Y), max(yhi, p.Y)
		}
	}
	if !ok {
		return nil, nil, false
	}
	xs = newScale(c.X.Kind, xlo, xhi, plotLeft, width-plotRight)
	ys = newScale(c.Y.Kind, ylo, yhi, plotTop+plotHeight, plotTop)
	return xs, ys, true
}

// grid draws the tick labels and light grid lines of both axes.
func (cv *canvas) grid(xs, ys *scale) {
	for _, t := range xs.ticks {
		x := xs.from + (t.v-xs.lo)/(xs.hi-xs.lo)*(xs.to-xs.from)
		fmt.Fprintf(cv.bw, `<path d="M%s %s V%s" stroke="#e5e5e5"/>`+"\n", num(x), num(plotTop), num(plotTop+plotHeight))
		cv.text(x, plotTop+plotHeight+16, "middle", t.label, "")
	}
	cv.yGrid(ys)
}

// yGrid draws the y axis' tick labels and horizontal grid lines.
func (cv *canvas) yGrid(ys *scale) {
	for _, t := range ys.ticks {
		y := ys.from + (t.v-ys.lo)/(ys.hi-ys.lo)*(ys.to-ys.from)
		fmt.Fprintf(cv.bw, `<path d="M%s %s H%s" stroke="#e5e5e5"/>`+"\n", num(plotLeft), num(y), num(width-plotRight))
		cv.text(plotLeft-6, y+4, "end", t.label, "")
	}
}

// line draws series i as a path (its name as tooltip, broken at NaN values) and, with dots,
// a dot per point.
func (cv *canvas) line(i int, s Series, xs, ys *scale, xa, ya Axis, dots bool) {
	var d strings.Builder
	gap := false
	for _, p := range s.Points {
		if math.IsNaN(p.Y) {
			gap = true
		}
		if !xs.valid(p.X) || !ys.valid(p.Y) {
			continue
		}
		cmd := "L"
		if d.Len() == 0 || gap {
			cmd, gap = "M", false
		}
		d.WriteString(cmd + num(xs.px(p.X)) + " " + num(ys.px(p.Y)))
	}
	if d.Len() == 0 {
		return
	}
	fmt.Fprintf(cv.bw, `<path class="series" d="%s" stroke="%s" stroke-width="2" fill="none"%s><title>%s</title></path>`+"\n",
		d.String(), Colour(i), dashAttr(i, s.Dashed), Esc(s.Name))
	if !dots {
		return
	}
	for k, p := range s.Points {
		if xs.valid(p.X) && ys.valid(p.Y) {
			name := s.Name
			if len(s.Labels) == len(s.Points) {
				name += " " + s.Labels[k]
			}
			fmt.Fprintf(cv.bw, `<circle cx="%s" cy="%s" r="3" fill="%s"><title>%s: %s %s, %s %s</title></circle>`+"\n",
				num(xs.px(p.X)), num(ys.px(p.Y)), Colour(i), Esc(name), Esc(xa.Title), Esc(axisValue(xa.Kind, p.X)), Esc(ya.Title), Esc(axisValue(ya.Kind, p.Y)))
		}
	}
}

// axisValue formats a value of an axis of kind for a tooltip.
func axisValue(kind AxisKind, v float64) string {
	switch kind {
	case Elapsed:
		return FormatElapsed(v)
	case Percentile:
		return FormatValue(v) + "%"
	}
	return FormatValue(v)
}

// Downsample returns at most n points of pts keeping its shape: pts is cut into n/2 runs of
// consecutive points and each run keeps its lowest and highest point (in order), so spikes
// survive. pts itself is returned when it is short enough.
func Downsample(pts []Point, n int) []Point {
	if len(pts) <= n || n < 2 {
		return pts
	}
	runs := n / 2
	out := make([]Point, 0, n)
	for r := range runs {
		a, b := r*len(pts)/runs, (r+1)*len(pts)/runs
		lo, hi := a, a
		for i := a; i < b; i++ {
			if pts[i].Y < pts[lo].Y {
				lo = i
			}
			if pts[i].Y > pts[hi].Y {
				hi = i
			}
		}
		switch {
		case lo == hi:
			out = append(out, pts[lo])
		case lo < hi:
			out = append(out, pts[lo], pts[hi])
		default:
			out = append(out, pts[hi], pts[lo])
		}
	}
	return out
}
