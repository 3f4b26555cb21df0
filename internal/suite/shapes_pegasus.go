package suite

import (
	"bytes"
	"math"
	"slices"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// opGroup is the reads or the writes of one result (the Pegasus table's R-* and W-* columns):
// calls and CPS summed, the mean latency weighted by calls, p99 and p999 the largest of the
// group's operations (exact with one operation, an upper bound with several).
type opGroup struct {
	calls               int64
	cps                 float64
	meanUs, p99, p999Us int64
}

// group sums the operations of res named in names.
func group(res v1alpha1.ScenarioResult, names []string) opGroup {
	var g opGroup
	var weighted float64
	for _, op := range res.Operations {
		if !slices.Contains(names, op.Name) {
			continue
		}
		g.calls += op.Calls
		g.cps += op.CPS
		weighted += float64(op.MeanUs) * float64(op.Calls)
		g.p99, g.p999Us = max(g.p99, op.P99Us), max(g.p999Us, op.P999Us)
	}
	if g.calls > 0 {
		g.meanUs = int64(math.Round(weighted / float64(g.calls)))
	}
	return g
}

// cells are a group's QPS and latency cells ("-" without calls).
func (g opGroup) cells() []string {
	if g.calls == 0 {
		return dashes(4)
	}
	return []string{results.FormatThousands(math.Round(g.cps), 0), results.FormatInt(g.meanUs),
		results.FormatInt(g.p99), results.FormatInt(g.p999Us)}
}

// ycsbScenarios are the template's ycsb scenarios.
func ycsbScenarios(spec *v1alpha1.BenchmarkSuiteSpec) []v1alpha1.Scenario {
	var out []v1alpha1.Scenario
	for _, sc := range spec.Template.Load.Scenarios {
		if sc.Type == v1alpha1.ScenarioYCSB {
			out = append(out, sc)
		}
	}
	return out
}

// writePegasus writes the Pegasus YCSB table (seed 004) with a row per variant (and sweep
// point) and ycsb scenario: its case, read/write ratio and the R-* and W-* columns in µs.
// Nothing without ycsb scenarios.
func writePegasus(b *bytes.Buffer, spec *v1alpha1.BenchmarkSuiteSpec, rows []shapeRow, sweeps bool) error {
	scs := ycsbScenarios(spec)
	if len(scs) == 0 {
		return nil
	}
	b.WriteString("\nPegasus YCSB table (latencies in µs; with several write operations W-P99 and W-P999 are the largest of theirs):\n\n")
	headers := append(leadHeaders(sweeps), "Scenario", "Case", "Read/Write", "R-QPS", "R-AVG-Lat", "R-P99-Lat", "R-P999-Lat",
		"W-QPS", "W-AVG-Lat", "W-P99-Lat", "W-P999-Lat")
	k := len(leadHeaders(sweeps)) + 1
	var cells [][]string
	for _, r := range rows {
		for _, sc := range scs {
			row := append(lead(r, sweeps), results.MarkdownText(sc.Name))
			res, ok := r.results[sc.Name]
			rd, wr := group(res, results.ReadOperations), group(res, results.WriteOperations)
			if !ok || rd.calls+wr.calls == 0 {
				cells = append(cells, append(row, dashes(10)...))
				continue
			}
			kase := "Read & Write"
			if wr.calls == 0 {
				kase = "Read"
			} else if rd.calls == 0 {
				kase = "Write"
			}
			row = append(row, kase, results.RWRatio(rd.calls, wr.calls))
			cells = append(cells, append(append(row, rd.cells()...), wr.cells()...))
		}
	}
	return results.WriteMarkdownTable(b, headers, rightOf(k, 10, 0, 1), cells)
}

// meanOperations are the operations of a row's results averaged by name (in first-seen
// order): calls, CPS and latencies over the results that have the operation.
func meanOperations(res []v1alpha1.ScenarioResult) []v1alpha1.OperationResult {
	var out []v1alpha1.OperationResult
	n := map[string]int{}
	for _, r := range res {
		for _, op := range r.Operations {
			i := slices.IndexFunc(out, func(o v1alpha1.OperationResult) bool { return o.Name == op.Name })
			if i < 0 {
				out = append(out, v1alpha1.OperationResult{Name: op.Name})
				i = len(out) - 1
			}
			n[op.Name]++
			o := &out[i]
			o.Calls += op.Calls
			o.CPS += op.CPS
			o.MeanUs += op.MeanUs
			o.P99Us += op.P99Us
			o.P999Us += op.P999Us
		}
	}
	for i := range out {
		o, k := &out[i], int64(n[out[i].Name])
		o.Calls, o.MeanUs, o.P99Us, o.P999Us = (o.Calls+k/2)/k, (o.MeanUs+k/2)/k, (o.P99Us+k/2)/k, (o.P999Us+k/2)/k
		o.CPS = round2(o.CPS / float64(k))
	}
	return out
}
