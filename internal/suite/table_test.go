package suite

import (
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

func res(cps, p99 float64) []v1alpha1.ScenarioResult {
	return []v1alpha1.ScenarioResult{{Name: "get", Calls: 1000, Errors: 1, CPS: cps, LatencyMs: v1alpha1.LatencyMs{P50: p99 / 2, P99: p99, P999: p99 * 2}}}
}

const twoVariants = `
template:
  target: {redis: {}}
  load: {scenarios: [{name: get, type: redis.get}]}
variants: [{name: a}, {name: b, redis: {config: {io-threads: "4"}}}]
repeat: 4
thresholds:
- {variant: b, expr: "cps >= -5%", significance: true}
- {variant: b, expr: "p99 <= +10%"}
`

// TestTableAndVerdict: a clear 20 % slowdown of b over 4 interleaved runs each is
// significant (the same ratio in every repetition: paired p = 0) and fails both thresholds; a
// failed run of b is counted, not in the figures. Without pairs (b's runs in repetitions of
// their own) the same figures are judged by Mann–Whitney U: fully separated, p = 2/70.
func TestTableAndVerdict(t *testing.T) {
	s := suiteFromYAML(t, "t", twoVariants)
	var outs []Outcome
	for i, cps := range []float64{1000, 1010, 990, 1005} {
		outs = append(outs, Outcome{Variant: "a", Repetition: int32(i + 1), Results: res(cps, 1)})
		outs = append(outs, Outcome{Variant: "b", Repetition: int32(i + 1), Results: res(cps*0.8, 1.25)})
	}
	outs = append(outs, Outcome{Variant: "b", Repetition: 5, Failed: true, Results: res(1, 100)})
	rows := Table(&s.Spec, outs)
	if len(rows) != 2 {
		t.Fatalf("rows: %+v", rows)
	}
	a, b := rows[0], rows[1]
	if a.Variant != "a" || a.Runs != 4 || a.CPS.Mean != 1001.25 || a.CPSDeltaPercent != nil || a.Errors != 4 {
		t.Errorf("row a: %+v", a)
	}
	if b.Runs != 4 || b.Failed != 1 || b.CPSDeltaPercent == nil || *b.CPSDeltaPercent != -20 || *b.P99DeltaPercent != 25 || !b.Significant || *b.CPSPValue != 0 {
		t.Errorf("row b: %+v (delta %v p %v)", b, b.CPSDeltaPercent, b.CPSPValue)
	}
	unpaired := append([]Outcome(nil), outs...)
	for i := range unpaired {
		if unpaired[i].Variant == "b" {
			unpaired[i].Repetition += 10
		}
	}
	if b := Table(&s.Spec, unpaired)[1]; !b.Significant || *b.CPSPValue != 0.0286 {
		t.Errorf("row b without pairs: %+v (p %v)", b, b.CPSPValue)
	}
	if b.CPS.Low >= b.CPS.Mean || b.CPS.High <= b.CPS.Mean {
		t.Errorf("CI of b: %+v", b.CPS)
	}
	v, th := Evaluate(&s.Spec, outs)
	if v != v1alpha1.VerdictFailed || len(th) != 2 || th[0].Passed || th[0].PValue == nil || th[1].Passed {
		t.Errorf("verdict %s %+v", v, th)
	}
}

// TestNoSignificantDifference: b 6.1 % below a on average but inside the noise (faster than
// a in one repetition, slower by 7–14 % in the others: paired p 0.25) passes the
// significance threshold with the message naming the test.
func TestNoSignificantDifference(t *testing.T) {
	s := suiteFromYAML(t, "t", twoVariants)
	s.Spec.Thresholds = s.Spec.Thresholds[:1]
	v, th := Evaluate(&s.Spec, interleaved([][2]float64{{1000, 930}, {900, 950}, {1100, 1010}, {950, 820}}))
	if v != v1alpha1.VerdictPassed || !th[0].Passed || !strings.Contains(th[0].Message, "no significant difference from a (paired t-test on the log ratios of each repetition p=") {
		t.Errorf("verdict %s %+v", v, th)
	}
}

// TestDriftCancelsInPairs: the machine slows from 1,000 to 700 calls/s over the suite while
// b stays 20 % behind a in every repetition: the pooled runs overlap (Mann–Whitney alone
// would call it noise) but each pair shows the slowdown, so the threshold fails.
func TestDriftCancelsInPairs(t *testing.T) {
	s := suiteFromYAML(t, "t", twoVariants)
	s.Spec.Thresholds = s.Spec.Thresholds[:1]
	v, th := Evaluate(&s.Spec, interleaved([][2]float64{{1000, 805}, {900, 715}, {800, 642}, {700, 558}}))
	if v != v1alpha1.VerdictFailed || th[0].Passed || th[0].PValue == nil || *th[0].PValue >= 0.001 {
		t.Errorf("verdict %s %+v", v, th)
	}
}

// TestAllRunsFailed: a variant whose runs all failed has a row with Runs 0 and its failures,
// and a threshold on it fails naming why.
func TestAllRunsFailed(t *testing.T) {
	s := suiteFromYAML(t, "t", twoVariants)
	outs := []Outcome{{Variant: "a", Results: res(1000, 1)}, {Variant: "b", Failed: true}}
	rows := Table(&s.Spec, outs)
	if rows[1].Runs != 0 || rows[1].Failed != 1 || rows[1].CPSDeltaPercent != nil {
		t.Errorf("row b: %+v", rows[1])
	}
	v, th := Evaluate(&s.Spec, outs)
	if v != v1alpha1.VerdictFailed || !strings.Contains(th[0].Message, "no successful run") {
		t.Errorf("verdict %s %+v", v, th)
	}
}

// interleaved are the outcomes of a and b run in turn, one repetition per pair of CPS.
func interleaved(pairs [][2]float64) []Outcome {
	var outs []Outcome
	for i, pair := range pairs {
		outs = append(outs, Outcome{Variant: "a", Repetition: int32(i + 1), Results: res(pair[0], 1)},
			Outcome{Variant: "b", Repetition: int32(i + 1), Results: res(pair[1], 1)})
	}
	return outs
}
