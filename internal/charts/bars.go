package charts

import (
	"fmt"
	"io"
	"math"
)

// BarSeries is one set of bars, one value per category (the bars of one colour).
type BarSeries struct {
	// Name is the legend entry.
	Name string
	// Values are the bar heights by category; NaN leaves a gap (e.g. a failed run).
	Values []float64
	// Low and High, when set (same length as Values), are the ends of each bar's error bar,
	// e.g. a confidence interval or the min and max of repetitions; NaN draws none.
	Low, High []float64
}

// BarChart is a grouped bar chart: for each category, one bar per series side by side, with
// optional error bars (the shape of the echo-server comparison chart).
type BarChart struct {
	// Title is the chart's heading.
	Title string
	// X titles the category axis; Y is the value axis (Linear or Log).
	X, Y Axis
	// Categories name the groups (e.g. scenarios).
	Categories []string
	// Series are the bars of each group, in order.
	Series []BarSeries
}

// Render writes the chart as a standalone SVG document; a chart without values says "no data".
func (c BarChart) Render(w io.Writer) error {
	below := 0.0
	band := (width - plotLeft - plotRight) / float64(max(len(c.Categories), 1))
	rotate := float64(min(longest(c.Categories), 16))*7.5 > band // labels wider than their group turn

	if rotate {
		below = 90
	}
	cv := open(w, c.Title, chartHeight(len(c.Series), below))
	cv.axisTitles(c.X.Title, c.Y.Title, below)
	ys, ok := c.scale()
	if !ok || len(c.Categories) == 0 {
		cv.text(width/2, plotTop+plotHeight/2, "middle", "no data", ` fill="#777"`)
		cv.frame()
		return cv.close()
	}
	cv.yGrid(ys)
	barW := band * 0.8 / float64(max(len(c.Series), 1))
	base := ys.from
	if c.Y.Kind != Log && ys.lo < 0 {
		base = ys.px(0)
	}
	for k, cat := range c.Categories {
		x0 := plotLeft + float64(k)*band
		cv.categoryLabel(x0+band/2, cat, rotate)
		var present []int // the series with a value here, centred in the group (gaps closed)
		for i, s := range c.Series {
			if k < len(s.Values) && ys.valid(s.Values[k]) {
				present = append(present, i)
			}
		}
		left := x0 + band/2 - float64(len(present))*barW/2
		for j, i := range present {
			cv.bar(i, k, c.Series[i], cat, left+float64(j)*barW, barW, base, ys)
		}
	}
	cv.frame()
	names := make([]string, len(c.Series))
	for i, s := range c.Series {
		names[i] = s.Name
	}
	cv.legend(names, below, func(i int, x, y float64) {
		fmt.Fprintf(cv.bw, `<rect x="%s" y="%s" width="20" height="10" fill="%s"%s/>`, num(x), num(y-5), Colour(i), Shade(i))
	})
	return cv.close()
}

// longest is the length in characters of the longest string.
func longest(ss []string) int {
	n := 0
	for _, s := range ss {
		n = max(n, len([]rune(s)))
	}
	return n
}

// categoryLabel writes a category's name under its group, rotated when there are many.
func (cv *canvas) categoryLabel(x float64, cat string, rotate bool) {
	y := plotTop + plotHeight + 16
	if !rotate {
		fmt.Fprintf(cv.bw, `<text x="%s" y="%s" text-anchor="middle"><title>%s</title>%s</text>`+"\n", num(x), num(y), Esc(cat), Esc(cut(cat, 16)))
		return
	}
	fmt.Fprintf(cv.bw, `<text x="%s" y="%s" text-anchor="end" transform="rotate(-60 %s %s)"><title>%s</title>%s</text>`+"\n",
		num(x), num(y-4), num(x), num(y-4), Esc(cat), Esc(cut(cat, 16)))
}

// bar draws series i's bar of category k with its error bar; its tooltip gives the figures.
func (cv *canvas) bar(i, k int, s BarSeries, cat string, x, w, base float64, ys *scale) {
	if k >= len(s.Values) || !ys.valid(s.Values[k]) {
		return
	}
	v := s.Values[k]
	y := ys.px(v)
	top, h := min(y, base), math.Abs(base-y)
	tip := fmt.Sprintf("%s · %s: %s", s.Name, cat, FormatValue(v))
	lo, hi, hasErr := errorBar(s, k, ys)
	if hasErr {
		tip += fmt.Sprintf(" (%s – %s)", FormatValue(lo), FormatValue(hi))
	}
	fmt.Fprintf(cv.bw, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"%s><title>%s</title></rect>`+"\n",
		num(x), num(top), num(max(w-1, 1)), num(max(h, 0.5)), Colour(i), Shade(i), Esc(tip))
	if hasErr {
		cx, a, b := x+w/2, ys.px(lo), ys.px(hi)
		fmt.Fprintf(cv.bw, `<path d="M%s %s V%s M%s %s h%s M%s %s h%s" stroke="#222" stroke-width="1.2"/>`+"\n",
			num(cx), num(a), num(b), num(cx-w/4), num(a), num(w/2), num(cx-w/4), num(b), num(w/2))
	}
}

// errorBar is bar k's error bar ends, when it has one that the scale can draw.
func errorBar(s BarSeries, k int, ys *scale) (lo, hi float64, ok bool) {
	if k >= len(s.Low) || k >= len(s.High) {
		return 0, 0, false
	}
	lo, hi = s.Low[k], s.High[k]
	return lo, hi, ys.valid(lo) && ys.valid(hi)
}

// scale fits the value axis to the bars and error bars; ok is false without any value.
func (c BarChart) scale() (*scale, bool) {
	probe := &scale{kind: c.Y.Kind}
	lo, hi, ok := math.Inf(1), math.Inf(-1), false
	for _, s := range c.Series {
		for k, v := range s.Values {
			for _, x := range []float64{v, at(s.Low, k), at(s.High, k)} {
				if probe.valid(x) {
					lo, hi, ok = min(lo, x), max(hi, x), true
				}
			}
		}
	}
	if !ok {
		return nil, false
	}
	kind := c.Y.Kind
	if kind != Log {
		kind = Linear
	}
	return newScale(kind, lo, hi, plotTop+plotHeight, plotTop), true
}

// at is vs[k], or NaN past its end.
func at(vs []float64, k int) float64 {
	if k < len(vs) {
		return vs[k]
	}
	return math.NaN()
}
