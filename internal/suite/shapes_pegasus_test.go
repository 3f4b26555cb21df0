package suite

import (
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// ycsbResult is a ycsb scenario's status result with its operations (latencies in µs: mean,
// p99, p999).
func ycsbResult(ops ...v1alpha1.OperationResult) v1alpha1.ScenarioResult {
	r := v1alpha1.ScenarioResult{Name: "rw", Type: "ycsb", Operations: ops}
	for _, op := range ops {
		r.Calls += op.Calls
		r.CPS += op.CPS
	}
	return r
}

// TestShapesPegasus: a suite of ycsb scenarios gets the Pegasus table (seed 004) with a row
// per variant: read and write groups averaged over the repetitions, writes of several
// operations summed (QPS), weighted by calls (mean) and their largest p99/p999; a write-only
// variant is "Write 0:1" with "-" read cells; a variant without a successful run is all "-".
func TestShapesPegasus(t *testing.T) {
	s := suiteFromYAML(t, "pegasus", `
template:
  target: {redis: {}}
  load: {scenarios: [{name: rw, type: ycsb}]}
variants: [{name: v240}, {name: v250, redis: {config: {io-threads: "4"}}}, {name: v260, redis: {config: {io-threads: "8"}}}]
repeat: 2
`)
	op := func(name string, calls int64, cps float64, mean, p99, p999 int64) v1alpha1.OperationResult {
		return v1alpha1.OperationResult{Name: name, Calls: calls, CPS: cps, MeanUs: mean, P99Us: p99, P999Us: p999}
	}
	outs := []Outcome{
		{Variant: "v240", Repetition: 1, Results: []v1alpha1.ScenarioResult{ycsbResult(op("read", 1000, 62000, 460, 5200, 9000), op("update", 600, 40000, 900, 3700, 8000), op("insert", 400, 22000, 1100, 4000, 7000))}},
		{Variant: "v240", Repetition: 2, Results: []v1alpha1.ScenarioResult{ycsbResult(op("read", 1000, 63144, 468, 5348, 9100), op("update", 600, 40000, 900, 3700, 8000), op("insert", 400, 22000, 1100, 4000, 7000))}},
		{Variant: "v250", Repetition: 1, Results: []v1alpha1.ScenarioResult{ycsbResult(op("insert", 3000, 56953, 787, 1786, 2500))}},
		{Variant: "v250", Repetition: 2, Results: []v1alpha1.ScenarioResult{ycsbResult(op("insert", 3000, 56953, 787, 1786, 2500))}},
		{Variant: "v260", Repetition: 1, Failed: true}, {Variant: "v260", Repetition: 2, Failed: true},
	}
	md, err := shapesMarkdown(&s.Spec, outs)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Pegasus YCSB table",
		"| Variant             | Scenario | Case         | Read/Write |  R-QPS | R-AVG-Lat | R-P99-Lat | R-P999-Lat |  W-QPS | W-AVG-Lat | W-P99-Lat | W-P999-Lat |",
		// reads: (62000+63144)/2, (460+468)/2, (5200+5348)/2; writes: 40000+22000, (900·600+1100·400)/1000, max p99/p999
		"| v240                | rw       | Read & Write | 1:1        | 62,572 |       464 |     5,274 |      9,050 | 62,000 |       980 |     4,000 |      8,000 |",
		"| v250                | rw       | Write        | 0:1        |      - |         - |         - |          - | 56,953 |       787 |     1,786 |      2,500 |",
		"| v260 (**2 FAILED**) | rw       | -            | -          |      - |         - |         - |          - |      - |         - |         - |          - |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if md, _ := shapesMarkdown(&suiteFromYAML(t, "t", twoVariants).Spec, nil); strings.Contains(md, "Pegasus") {
		t.Errorf("a suite without ycsb scenarios got a Pegasus table:\n%s", md)
	}
}
