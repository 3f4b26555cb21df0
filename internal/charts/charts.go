// Package charts draws benchrun's report charts as small standalone SVG documents, server-side
// and without JavaScript: line charts over linear, logarithmic or elapsed-time axes, HDR
// percentile plots (a logarithmic "percentile" axis up to 99.999 %), and grouped bars with
// optional error bars. Every chart takes N series, so a run's report (one series per scenario)
// and a comparison of runs (one series per run or variant) draw with the same code.
//
// Text is escaped (every name may come from a user's spec or a target's reply), colours come
// from the Okabe–Ito colour-blind-safe palette (with dash patterns once it is exhausted), and
// hovering an element shows its figures through SVG <title> tooltips. Series are downsampled
// to at most MaxPoints points so a 24-hour run stays a small file.
//
// The package is pure: no I/O beyond io.Writer.
package charts

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Palette is the Okabe–Ito colour-blind-safe palette, in the order series use it (yellow,
// the faintest on white, last).
var Palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"}

// dashes are the stroke patterns of series beyond the palette's length (one per round).
var dashes = []string{"", "6 3", "2 2", "8 3 2 3"}

// MaxPoints bounds the points drawn per series (Downsample).
const MaxPoints = 1000

// Chart geometry in pixels.
const (
	width      = 760.0
	plotTop    = 40.0
	plotLeft   = 72.0
	plotRight  = 44.0
	plotHeight = 300.0
	legendRowH = 18.0
	legendColW = 220.0
	maxLabel   = 26 // characters of a legend or category label before it is cut
	legendCols = 3  // legend entries per row
)

// Colour is the colour of series i.
func Colour(i int) string { return Palette[i%len(Palette)] }

// Dash is the stroke-dasharray of series i ("" for a solid line).
func Dash(i int) string { return dashes[(i/len(Palette))%len(dashes)] }

// Shade is the fill-opacity attribute of bar series i: lighter once the palette repeats, as
// lines get dashes ("" for the first round).
func Shade(i int) string {
	switch (i / len(Palette)) % 3 {
	case 1:
		return ` fill-opacity="0.6"`
	case 2:
		return ` fill-opacity="0.35"`
	}
	return ""
}

// Esc escapes s for SVG or HTML text and attribute values.
func Esc(s string) string { return html.EscapeString(s) }

// num formats a coordinate compactly.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// cut shortens a label to n characters (on a rune boundary), marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// canvas is an SVG document being written.
type canvas struct {
	bw     *bufio.Writer
	height float64
}

// open starts an SVG document of the given height with a white background and a title.
func open(w io.Writer, title string, height float64) *canvas {
	c := &canvas{bw: bufio.NewWriter(w), height: height}
	fmt.Fprintf(c.bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="sans-serif" font-size="12" role="img">`+"\n",
		num(width), num(height), num(width), num(height))
	fmt.Fprintf(c.bw, "<title>%s</title>\n", Esc(title))
	c.bw.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(c.bw, `<text x="%s" y="22" text-anchor="middle" font-size="15" font-weight="bold">%s</text>`+"\n", num(width/2), Esc(cut(title, 90)))
	return c
}

// close ends the document.
func (c *canvas) close() error {
	c.bw.WriteString("</svg>\n")
	return c.bw.Flush()
}

// text writes a text element; anchor is start, middle or end.
func (c *canvas) text(x, y float64, anchor, s string, extra string) {
	fmt.Fprintf(c.bw, `<text x="%s" y="%s" text-anchor="%s"%s>%s</text>`+"\n", num(x), num(y), anchor, extra, Esc(s))
}

// axisTitles writes the x axis title under the plot and the y axis title beside it.
func (c *canvas) axisTitles(xTitle, yTitle string, below float64) {
	c.text(plotLeft+(width-plotLeft-plotRight)/2, plotTop+plotHeight+38+below, "middle", xTitle, "")
	y := plotTop + plotHeight/2
	fmt.Fprintf(c.bw, `<text x="16" y="%s" text-anchor="middle" transform="rotate(-90 16 %s)">%s</text>`+"\n", num(y), num(y), Esc(yTitle))
}

// frame draws the plot's left and bottom axis lines.
func (c *canvas) frame() {
	fmt.Fprintf(c.bw, `<path d="M%s %s V%s H%s" stroke="#333" fill="none"/>`+"\n",
		num(plotLeft), num(plotTop), num(plotTop+plotHeight), num(width-plotRight))
}

// legendHeight is the height of a legend of n entries.
func legendHeight(n int) float64 {
	if n <= 1 {
		return 0
	}
	cols := legendCols
	return float64((n+cols-1)/cols)*legendRowH + 8
}

// legend writes the entries under the plot, in columns, each a swatch and its name (the full
// name as a tooltip).
func (c *canvas) legend(names []string, below float64, swatch func(i int, x, y float64)) {
	if len(names) <= 1 {
		return
	}
	cols := legendCols
	top := plotTop + plotHeight + 56 + below
	for i, n := range names {
		x := plotLeft + float64(i%cols)*legendColW
		y := top + float64(i/cols)*legendRowH
		fmt.Fprintf(c.bw, `<g class="legend"><title>%s</title>`, Esc(n))
		swatch(i, x, y)
		c.text(x+26, y+4, "start", cut(n, maxLabel), "")
		c.bw.WriteString("</g>\n")
	}
}

// chartHeight is the height of a chart with a legend of n entries and below pixels of extra
// room under the x axis (rotated labels).
func chartHeight(n int, below float64) float64 {
	return plotTop + plotHeight + 50 + below + legendHeight(n)
}

// FormatValue formats an axis or tooltip value: thousands separated, at most 3 significant
// decimals for small values, k/M suffixes for large ones.
func FormatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1e7:
		return trimZeros(strconv.FormatFloat(v/1e6, 'f', 1, 64)) + "M"
	case a >= 1e4:
		return trimZeros(strconv.FormatFloat(v/1e3, 'f', 1, 64)) + "k"
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case a >= 1:
		return trimZeros(strconv.FormatFloat(v, 'f', 2, 64))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// trimZeros drops trailing zeros after a decimal point (and the point).
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}
