package suite

import (
	"math"
	"slices"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// SignificanceLevel is the two-sided level below which a difference is significant.
const SignificanceLevel = 0.05

// tQuantile975 is Student's t 0.975 quantile for 1..30 degrees of freedom (two-sided 95 %).
var tQuantile975 = []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// TQuantile975 is Student's t 0.975 quantile for df degrees of freedom (df ≥ 1): the table up
// to 30, then 1.96 + 2.4/df (within 0.002 of the exact value).
func TQuantile975(df int) float64 {
	switch {
	case df < 1:
		return math.NaN()
	case df <= len(tQuantile975):
		return tQuantile975[df-1]
	}
	return 1.96 + 2.4/float64(df)
}

// Describe is the mean, sample standard deviation (n-1) and the 95 % confidence interval of
// the mean by Student's t (the per-run figures of a repeated benchmark are few, so the
// normal 1.96 would be far too narrow). One value: SD 0 and the interval is that value. No
// values: all NaN.
func Describe(xs []float64) v1alpha1.Stat {
	n := len(xs)
	if n == 0 {
		nan := math.NaN()
		return v1alpha1.Stat{Mean: nan, SD: nan, Low: nan, High: nan}
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	if n == 1 {
		return v1alpha1.Stat{Mean: mean, Low: mean, High: mean}
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	half := TQuantile975(n-1) * sd / math.Sqrt(float64(n))
	return v1alpha1.Stat{Mean: mean, SD: sd, Low: mean - half, High: mean + half}
}

// MannWhitney is the two-sided Mann–Whitney U test of two samples of per-run figures: U of
// the first sample and the p-value (NaN when a sample is empty).
//
// Why this test: a suite has few runs per variant (repeat ≤ 10) and run-to-run figures on
// shared hardware are not normal (a run that shares its node with a noisy neighbour is an
// outlier); the U test needs no distribution, ignores how far an outlier lies and, without
// ties, its exact null distribution is cheap to count for n ≤ 10, so its p-value is exact
// where a bootstrap CI of the ratio (resampling 3 to 10 values) undercovers. Its price: with
// n runs per side the smallest two-sided p is 2/C(2n, n), so it can be significant at 0.05
// only from 4 runs per variant (p = 0.029); 3 give at best 0.1. With ties (identical figures,
// rare for CPS) the normal approximation with tie and continuity corrections is used.
func MannWhitney(xs, ys []float64) (u, p float64) {
	n1, n2 := len(xs), len(ys)
	if n1 == 0 || n2 == 0 {
		return math.NaN(), math.NaN()
	}
	ranks, ties := rank(xs, ys)
	var r1 float64
	for i := range n1 {
		r1 += ranks[i]
	}
	u = r1 - float64(n1*(n1+1))/2
	if !ties && n1+n2 <= 40 {
		return u, exactP(n1, n2, u)
	}
	return u, normalP(n1, n2, u, ranks)
}

// rank gives the midranks of xs then ys in their pooled order, and whether any tie exists.
func rank(xs, ys []float64) ([]float64, bool) {
	type obs struct {
		v float64
		i int
	}
	all := make([]obs, 0, len(xs)+len(ys))
	for i, x := range xs {
		all = append(all, obs{x, i})
	}
	for i, y := range ys {
		all = append(all, obs{y, len(xs) + i})
	}
	slices.SortStableFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	ranks := make([]float64, len(all))
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j+1 < len(all) && all[j+1].v == all[i].v {
			j++
		}
		if j > i {
			ties = true
		}
		mid := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[all[k].i] = mid
		}
		i = j + 1
	}
	return ranks, ties
}

// exactP is the two-sided exact p-value of U for sample sizes n1, n2 without ties: twice the
// smaller tail of U's null distribution (counted by the recurrence
// N(n1, n2, u) = N(n1-1, n2, u-n2) + N(n1, n2-1, u)), at most 1.
func exactP(n1, n2 int, u float64) float64 {
	maxU := n1 * n2
	// counts[a][b] is the distribution of U for sample sizes a, b.
	counts := make([][][]float64, n1+1)
	for a := range counts {
		counts[a] = make([][]float64, n2+1)
		for b := range counts[a] {
			d := make([]float64, a*b+1)
			switch {
			case a == 0 || b == 0:
				d[0] = 1
			default:
				for k := range d {
					if k-b >= 0 && k-b < len(counts[a-1][b]) {
						d[k] += counts[a-1][b][k-b]
					}
					if k < len(counts[a][b-1]) {
						d[k] += counts[a][b-1][k]
					}
				}
			}
			counts[a][b] = d
		}
	}
	dist := counts[n1][n2]
	var total, lower, upper float64
	for k := 0; k <= maxU; k++ {
		total += dist[k]
		if float64(k) <= u {
			lower += dist[k]
		}
		if float64(k) >= u {
			upper += dist[k]
		}
	}
	return math.Min(1, 2*math.Min(lower, upper)/total)
}

// normalP is the two-sided p-value of U by the normal approximation with the tie correction
// of the variance and a continuity correction of 0.5.
func normalP(n1, n2 int, u float64, ranks []float64) float64 {
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	counts := map[float64]int{}
	for _, r := range ranks {
		counts[r]++
	}
	var tieSum float64
	for _, t := range counts {
		tieSum += float64(t*t*t - t)
	}
	variance := float64(n1*n2) / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		return 1 // every value equal: no difference at all
	}
	z := (math.Abs(u-mu) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// StudentP is the two-sided p-value of Student's t statistic t with df degrees of freedom
// (df ≥ 1), from the closed forms for integer df (Abramowitz & Stegun 26.7.3–4): with
// θ = atan(|t|/√df), A = sin θ · Σ over even df and (2/π)(θ + sin θ cos θ · Σ) over odd df.
func StudentP(t float64, df int) float64 {
	if df < 1 || math.IsNaN(t) {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		return 0
	}
	theta := math.Atan(math.Abs(t) / math.Sqrt(float64(df)))
	s, c2 := math.Sin(theta), math.Cos(theta)*math.Cos(theta)
	var a float64
	if df%2 == 0 {
		term, sum := 1.0, 1.0
		for k := 2; k <= df-2; k += 2 {
			term *= c2 * float64(k-1) / float64(k)
			sum += term
		}
		a = s * sum
	} else {
		sum := 0.0
		if df > 1 {
			term := 1.0
			sum = 1
			for k := 3; k <= df-2; k += 2 {
				term *= c2 * float64(k-1) / float64(k)
				sum += term
			}
		}
		a = 2 / math.Pi * (theta + s*math.Cos(theta)*sum)
	}
	return math.Max(0, math.Min(1, 1-a))
}

// PairedLogRatio compares figures measured in pairs (xs[i] beside ys[i]: the same
// repetition of two variants, run one after the other) by a two-sided paired t-test on the
// log ratios ln(xs[i]/ys[i]); it returns their geometric mean ratio and the p-value. Why:
// a suite interleaves its variants (A B A B …), so a slow drift of the machine moves both
// runs of a pair alike and cancels in their ratio, where Mann–Whitney U compares the pooled
// runs and counts that drift as noise; and with n pairs it can be significant from n = 3,
// where the U test needs 4 runs a side and then only when they do not overlap at all.
// Fewer than 2 pairs, a figure ≤ 0, or lengths that differ: NaN.
func PairedLogRatio(xs, ys []float64) (ratio, p float64) {
	n := len(xs)
	if n < 2 || len(ys) != n {
		return math.NaN(), math.NaN()
	}
	ds := make([]float64, n)
	for i := range xs {
		if xs[i] <= 0 || ys[i] <= 0 {
			return math.NaN(), math.NaN()
		}
		ds[i] = math.Log(xs[i] / ys[i])
	}
	d := Describe(ds)
	ratio = math.Exp(d.Mean)
	if d.SD == 0 {
		if d.Mean == 0 {
			return ratio, 1
		}
		return ratio, 0
	}
	return ratio, StudentP(d.Mean/(d.SD/math.Sqrt(float64(n))), n-1)
}
