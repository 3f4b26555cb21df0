package charts

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"
)

// wellFormed parses an SVG document and counts its elements by name.
func wellFormed(t *testing.T, svg []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	counts := map[string]int{}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return counts
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
}

// render renders a chart into bytes.
func render(t *testing.T, r interface{ Render(io.Writer) error }) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.Render(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const hostile = `<script>alert("x")</script>&'`

func TestLineChartNSeries(t *testing.T) {
	var series []Series
	for i := range 10 { // more series than colours: dashes take over
		var pts []Point
		for x := range 50 {
			pts = append(pts, Point{X: float64(x), Y: float64(i*100 + x)})
		}
		series = append(series, Series{Name: hostile, Points: pts})
	}
	svg := render(t, LineChart{Title: hostile, X: Axis{Title: "elapsed", Kind: Elapsed}, Y: Axis{Title: "calls/s"},
		Series: series, Markers: []Marker{{X: 20, Label: hostile}}, Dots: true})
	n := wellFormed(t, svg)
	if got := strings.Count(string(svg), `class="series"`); got != 10 {
		t.Errorf("%d series paths, want 10", got)
	}
	if n["circle"] != 500 {
		t.Errorf("%d dots, want 500", n["circle"])
	}
	if bytes.Contains(svg, []byte("<script")) {
		t.Error("a series name is not escaped")
	}
	if !bytes.Contains(svg, []byte(`stroke-dasharray="6 3"`)) {
		t.Error("series beyond the palette are not dashed")
	}
	for _, want := range []string{">0s<", ">10s<", ">50s<"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("no tick %s", want)
		}
	}
}

func TestLineChartEmptyAndLog(t *testing.T) {
	svg := render(t, LineChart{Title: "empty", Series: []Series{{Name: "a"}}})
	wellFormed(t, svg)
	if !bytes.Contains(svg, []byte("no data")) {
		t.Error("an empty chart does not say no data")
	}
	svg = render(t, LineChart{Title: "log", Y: Axis{Kind: Log}, Series: []Series{{Name: "a", Points: []Point{{0, 0}, {1, 3}, {2, 4000}}}}})
	wellFormed(t, svg)
	for _, want := range []string{">1<", ">10<", ">100<", ">1000<", ">10k<"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("log axis has no tick %s", want)
		}
	}
	// A NaN breaks the line (two sub-paths); a point a log axis cannot draw does not.
	svg = render(t, LineChart{Title: "gap", Y: Axis{Kind: Log}, Series: []Series{{Name: "a", Points: []Point{{0, 1}, {1, 0}, {2, 2}, {3, math.NaN()}, {4, 3}, {5, 4}}}}})
	wellFormed(t, svg)
	path := regexp.MustCompile(`class="series" d="([^"]+)"`).FindSubmatch(svg)
	if path == nil || strings.Count(string(path[1]), "M") != 2 || strings.Count(string(path[1]), "L") != 2 {
		t.Errorf("a line with a gap: %s", path)
	}
}

func TestBarChartGroupedWithErrorBars(t *testing.T) {
	c := BarChart{Title: "CPS", Y: Axis{Title: "calls/s"}, Categories: []string{"get", hostile, "set"}}
	for i := range 4 { // 4 variants × 3 scenarios
		v := float64(1000 * (i + 1))
		c.Series = append(c.Series, BarSeries{Name: hostile,
			Values: []float64{v, v / 2, math.NaN()}, Low: []float64{v * 0.9, v * 0.4, math.NaN()}, High: []float64{v * 1.1, v * 0.6, math.NaN()}})
	}
	svg := render(t, c)
	wellFormed(t, svg)
	if got := strings.Count(string(svg), `class="bar"`); got != 8 {
		t.Errorf("%d bars, want 8 (NaN left out)", got)
	}
	if got := strings.Count(string(svg), `stroke="#222"`); got != 8 {
		t.Errorf("%d error bars, want 8", got)
	}
	if bytes.Contains(svg, []byte("<script")) {
		t.Error("a category or series name is not escaped")
	}
	many := BarChart{Title: "many", Categories: []string{"a"}}
	for i := range 10 {
		many.Series = append(many.Series, BarSeries{Name: string(rune('a' + i)), Values: []float64{float64(i + 1)}})
	}
	if svg := render(t, many); !bytes.Contains(svg, []byte(`fill-opacity="0.6"`)) {
		t.Error("bar series beyond the palette are not lighter")
	}
	if !bytes.Contains(svg, []byte("(3600 – 4400)")) {
		t.Error("a bar's tooltip lacks its error bar's ends")
	}
}

func TestPercentileChartNSeries(t *testing.T) {
	var series []Series
	for i := range 3 {
		series = append(series, Series{Name: string(rune('a' + i)), Points: []Point{{0, 1}, {50, 2}, {99, 5}, {99.9, 9}, {100, 20}}})
	}
	svg := render(t, PercentileChart{Title: "latency", YTitle: "ms", Series: series})
	wellFormed(t, svg)
	for _, want := range []string{">90%<", ">99.999%<"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("percentile axis has no tick %s", want)
		}
	}
	if got := strings.Count(string(svg), `class="series"`); got != 3 {
		t.Errorf("%d curves, want 3", got)
	}
	// 100 % (the maximum) is drawn at the axis' end, 99.999 %.
	s := newScale(Percentile, 0, 100, 0, 500)
	if got := s.px(100); math.Abs(got-500) > 0.01 {
		t.Errorf("100%% at %v, want the end 500", got)
	}
	if got := s.px(99); math.Abs(got-200) > 0.01 {
		t.Errorf("99%% at %v, want 200", got)
	}
}

func TestDownsampleKeepsSpikes(t *testing.T) {
	pts := make([]Point, 86_400)
	for i := range pts {
		pts[i] = Point{X: float64(i), Y: 100}
	}
	pts[40_000].Y = 5000
	out := Downsample(pts, MaxPoints)
	if len(out) > MaxPoints {
		t.Fatalf("%d points, want at most %d", len(out), MaxPoints)
	}
	spike := false
	for i, p := range out {
		spike = spike || p.Y == 5000
		if i > 0 && p.X < out[i-1].X {
			t.Fatal("points out of order")
		}
	}
	if !spike {
		t.Error("the spike was lost")
	}
}

func TestFormat(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.0123: "0.0123", 1.5: "1.5", 250: "250", 12_500: "12.5k", 25_000_000: "25M"} {
		if got := FormatValue(v); got != want {
			t.Errorf("FormatValue(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{45: "45s", 150: "2m30s", 3600: "1h", 5400: "1h30m"} {
		if got := FormatElapsed(v); got != want {
			t.Errorf("FormatElapsed(%v) = %q, want %q", v, got, want)
		}
	}
}
