package suite

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestDescribe: the textbook sample {2,4,4,4,5,5,7,9}: mean 5, sample SD sqrt(32/7) = 2.1381,
// 95 % CI 5 ± t(0.975, 7)·SD/√8 = 5 ± 2.365·0.7559 = [3.2122, 6.7878].
func TestDescribe(t *testing.T) {
	s := Describe([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if s.Mean != 5 || !near(s.SD, 2.1381, 1e-4) || !near(s.Low, 3.2122, 1e-3) || !near(s.High, 6.7878, 1e-3) {
		t.Errorf("Describe = %+v", s)
	}
	one := Describe([]float64{42})
	if one.Mean != 42 || one.SD != 0 || one.Low != 42 || one.High != 42 {
		t.Errorf("one value: %+v", one)
	}
	if !math.IsNaN(Describe(nil).Mean) {
		t.Error("no values: want NaN")
	}
}

// TestTQuantile: table values and the approximation past 30 (exact t(0.975, 60) = 2.0003,
// t(0.975, 120) = 1.9799).
func TestTQuantile(t *testing.T) {
	for df, want := range map[int]float64{1: 12.706, 4: 2.776, 9: 2.262, 30: 2.042, 60: 2.0003, 120: 1.9799} {
		if got := TQuantile975(df); !near(got, want, 0.002) {
			t.Errorf("t(0.975, %d) = %v, want %v", df, got, want)
		}
	}
}

// TestMannWhitneyExact: exact two-sided p-values of fully separated samples are 2/C(n1+n2, n1):
// 4 vs 4 → 2/70 = 0.02857, 3 vs 3 → 2/20 = 0.1, 5 vs 5 → 2/252 = 0.00794; interleaved samples
// {1,3,5,7} vs {2,4,6,8}: U = 6; the null counts of U for 4 vs 4 (partitions in a 4×4 box)
// are 1,1,2,3,5,5,7,7,8,... of 70, so P(U ≤ 6) = 24/70 and p = 48/70 = 0.6857.
func TestMannWhitneyExact(t *testing.T) {
	cases := []struct {
		xs, ys []float64
		u, p   float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 2.0 / 70},
		{[]float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}, 16, 2.0 / 70},
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1},
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252},
		{[]float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 6, 48.0 / 70},
		{[]float64{1}, []float64{2}, 0, 1},
	}
	for _, c := range cases {
		u, p := MannWhitney(c.xs, c.ys)
		if u != c.u || !near(p, c.p, 1e-4) {
			t.Errorf("MannWhitney(%v, %v) = U %v p %v, want U %v p %v", c.xs, c.ys, u, p, c.u, c.p)
		}
	}
}

// TestMannWhitneyTies: with ties the normal approximation (tie and continuity corrections):
// {1,2,2,3} vs {2,3,4,5}: midranks 1,3,3,5.5 → R1 = 12.5, U = 2.5; μ = 8, ties (2×3, 3×2)
// give σ² = 16/12·(9 − 30/56) = 11.286, z = (5.5 − 0.5)/3.3594 = 1.4884, p = 0.1367.
func TestMannWhitneyTies(t *testing.T) {
	u, p := MannWhitney([]float64{1, 2, 2, 3}, []float64{2, 3, 4, 5})
	if u != 2.5 || !near(p, 0.1367, 1e-3) {
		t.Errorf("U %v p %v, want 2.5, 0.1367", u, p)
	}
	if _, p := MannWhitney([]float64{3, 3}, []float64{3, 3}); p != 1 {
		t.Errorf("all equal: p %v, want 1", p)
	}
	if _, p := MannWhitney(nil, []float64{1}); !math.IsNaN(p) {
		t.Errorf("empty: p %v, want NaN", p)
	}
}

// TestStudentP: at the tabulated 0.975 quantiles the two-sided p is 0.05 for every df, and
// known values hold (t = 1, df = 1: 0.5; t = 0: 1).
func TestStudentP(t *testing.T) {
	for df := 1; df <= 30; df++ {
		if p := StudentP(TQuantile975(df), df); math.Abs(p-0.05) > 0.0005 {
			t.Errorf("df %d: p(t=%.3f) = %.5f, want 0.05", df, TQuantile975(df), p)
		}
	}
	for _, c := range []struct {
		t    float64
		df   int
		want float64
	}{{1, 1, 0.5}, {0, 5, 1}, {-2.776, 4, 0.05}, {5.841, 3, 0.01}, {math.Inf(1), 3, 0}} {
		if p := StudentP(c.t, c.df); math.Abs(p-c.want) > 0.0005 {
			t.Errorf("StudentP(%g, %d) = %.5f, want %g", c.t, c.df, p, c.want)
		}
	}
	if !math.IsNaN(StudentP(1, 0)) {
		t.Error("df 0: not NaN")
	}
}

// TestPairedLogRatio: four pairs drifting from 1,000 to 700 calls/s, b 20 % slower than a in
// each pair: the pooled runs overlap (Mann–Whitney p 0.2) but the ratios agree (paired
// p < 0.001, ratio 0.8); identical pairs give ratio 1 and p 1.
func TestPairedLogRatio(t *testing.T) {
	a := []float64{1000, 900, 800, 700}
	b := []float64{805, 715, 642, 558}
	ratio, p := PairedLogRatio(b, a)
	_, u := MannWhitney(b, a)
	t.Logf("ratio %.3f, paired p %.5f, Mann–Whitney p %.3f", ratio, p, u)
	if math.Abs(ratio-0.8) > 0.01 || p >= 0.001 || u < 0.05 {
		t.Errorf("ratio %.3f, paired p %.5f, Mann–Whitney p %.3f", ratio, p, u)
	}
	if ratio, p := PairedLogRatio(a, a); ratio != 1 || p != 1 {
		t.Errorf("same: ratio %v p %v", ratio, p)
	}
	if _, p := PairedLogRatio(a[:1], b[:1]); !math.IsNaN(p) {
		t.Error("one pair: not NaN")
	}
	if _, p := PairedLogRatio([]float64{1, 0}, []float64{1, 1}); !math.IsNaN(p) {
		t.Error("a zero figure: not NaN")
	}
}
