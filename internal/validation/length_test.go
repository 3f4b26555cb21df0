package validation

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/workload"
)

// genScenario is one random scenario (YAML flow) of a generated spec: closed with or without
// its own duration, a requests scenario, a constant rate, a ramp, a search (factor or step,
// maxSteps or its default), with durations in ms, s and fractions of a second.
func genScenario(r *rand.Rand, i int) string {
	dur := func() string {
		switch r.IntN(3) {
		case 0:
			return fmt.Sprintf("%ds", 1+r.IntN(90))
		case 1:
			return fmt.Sprintf("%dms", 1000+r.IntN(60000))
		}
		return fmt.Sprintf("%d.%03ds", 1+r.IntN(30), r.IntN(1000))
	}
	name := fmt.Sprintf("s%d", i)
	switch r.IntN(6) {
	case 0:
		return fmt.Sprintf("{name: %s, type: redis.get}", name)
	case 1:
		return fmt.Sprintf("{name: %s, type: redis.get, duration: %s}", name, dur())
	case 2:
		return fmt.Sprintf("{name: %s, type: redis.get, requests: %d}", name, 1+r.IntN(1000))
	case 3:
		return fmt.Sprintf("{name: %s, type: redis.get, duration: %s, arrival: {rate: 100}}", name, dur())
	case 4:
		var st []string
		for range 1 + r.IntN(5) {
			st = append(st, fmt.Sprintf("{target: %d, duration: %s}", r.IntN(500), dur()))
		}
		return fmt.Sprintf("{name: %s, type: redis.get, arrival: {stages: [%s]}}", name, strings.Join(st, ", "))
	}
	grow := "factor: 1.5"
	if r.IntN(2) == 0 {
		grow = "step: 10"
	}
	steps := ""
	if r.IntN(2) == 0 {
		steps = fmt.Sprintf(", maxSteps: %d", 1+r.IntN(15))
	}
	return fmt.Sprintf("{name: %s, type: redis.get, arrival: {search: {startRate: 10, %s, stepDuration: %s, maxP99: 10ms%s}}}", name, grow, dur(), steps)
}

// TestScenarioLengthCELMatchesGo is the drift test between the CRD's CEL rules that need a
// scenario's length (timeouts.run against the total, faults[].offset and offset + duration,
// trim, thresholds[].delayAbortEval) and workload.ScenarioLength, which the runners' schedule and the fault due times use:
// on generated specs, each rule accepts the value at the Go function's boundary and refuses
// the value just past it.
func TestScenarioLengthCELMatchesGo(t *testing.T) {
	v := newValidator(t)
	r := rand.New(rand.NewPCG(25, 1))
	ms := func(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
	for n := range 120 {
		var sc []string
		for i := range 1 + r.IntN(4) {
			sc = append(sc, genScenario(r, i))
		}
		base := fmt.Sprintf("target: {redis: {}}\nload: {duration: %ds, scenarios: [%s]}\n", 2+r.IntN(60), strings.Join(sc, ", "))
		file, err := v.ParseFile(context.Background(), strings.NewReader(doc("gen", base)))
		if err != nil {
			t.Fatalf("spec %d is invalid: %v\n%s", n, err, base)
		}
		spec := &file.Runs[0].Spec
		check := func(what, extra string, valid bool, want string) {
			t.Helper()
			_, err := v.ParseFile(context.Background(), strings.NewReader(doc("gen", base+extra)))
			switch {
			case valid && err != nil:
				t.Errorf("spec %d, %s: refused, Go says valid: %v\n%s%s", n, what, err, base, extra)
			case !valid && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("spec %d, %s: got %v, Go says invalid (%q)\n%s%s", n, what, err, want, base, extra)
			}
		}
		total := workload.TotalLength(spec)
		if total > time.Second {
			check("timeouts.run = total", fmt.Sprintf("timeouts: {run: %s}\n", ms(total)), true, "")
			check("timeouts.run = total - 1ms", fmt.Sprintf("timeouts: {run: %s}\n", ms(total-time.Millisecond)), false, "is shorter than the total length of the scenarios")
		}
		var whole time.Duration // every scenario, requests ones at their bound
		for j := range spec.Load.Scenarios {
			whole += workload.ScenarioLength(spec, j)
		}
		delay := func(d time.Duration) string {
			return fmt.Sprintf("thresholds: [{expr: 'p99 < 5', abortOnFail: true, delayAbortEval: %s}]\n", ms(d))
		}
		check("delayAbortEval = load - 1ms", delay(whole-time.Millisecond), true, "")
		check("delayAbortEval = load", delay(whole), false, "delayAbortEval is not shorter than the whole load")
		i := r.IntN(len(spec.Load.Scenarios))
		l, name := workload.ScenarioLength(spec, i), spec.Load.Scenarios[i].Name
		fault := func(offset time.Duration, pause string) string {
			return fmt.Sprintf("faults: [{scenario: %s, offset: %s, role: master, action: %s}]\n", name, ms(offset), pause)
		}
		check("offset = length - 1ms", fault(l-time.Millisecond, "kill"), true, "")
		check("offset = length", fault(l, "kill"), false, "spec.faults[].offset must be shorter than")
		check("offset + pause = length - 1ms", fault(l-101*time.Millisecond, "pause, duration: 100ms"), true, "")
		check("offset + pause = length", fault(l-100*time.Millisecond, "pause, duration: 100ms"), false, "must end inside its scenario")
		shortest := time.Duration(1 << 62)
		for j, s := range spec.Load.Scenarios {
			if s.Requests == nil {
				shortest = min(shortest, workload.ScenarioLength(spec, j))
			}
		}
		if shortest < time.Duration(1<<62) {
			trim := strings.Replace(base, "load: {", "load: {trim: {warmUp: %s}, ", 1)
			for _, c := range []struct {
				d     time.Duration
				valid bool
			}{{shortest - time.Millisecond, true}, {shortest, false}} {
				_, err := v.ParseFile(context.Background(), strings.NewReader(doc("gen", fmt.Sprintf(trim, ms(c.d)))))
				if (err == nil) != c.valid {
					t.Errorf("spec %d, trim.warmUp %v (shortest scenario %v): valid %v, got %v", n, c.d, shortest, c.valid, err)
				}
			}
		}
	}
}

// doc is a BenchmarkRun document named name with spec (YAML, unindented).
func doc(name, spec string) string {
	return "apiVersion: bench.benchrun.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: " + name + "}\nspec:\n" + indent(spec)
}

// TestNoFaultOverlapAcrossScenarios: with the scenarios laid out in time by
// workload.ScenarioWindows (the length the runners and the plan use), no two faults on one role
// in different scenarios that admission accepts overlap: a fault must end inside its scenario,
// and the scenarios run one after another. A pause in a ramp that runs past the ramp's 8 s into
// the next scenario's fault is refused; one that ends inside the ramp is accepted.
func TestNoFaultOverlapAcrossScenarios(t *testing.T) {
	v := newValidator(t)
	accepted, refused := 0, 0
	for _, offA := range []int{5, 6, 7} {
		for _, durA := range []int{1, 2, 3, 4} {
			for _, offB := range []int{0, 1} {
				spec := fmt.Sprintf(`target: {redis: {mode: ha}}
load: {duration: 4s, scenarios: [{name: ramp, type: redis.get, arrival: {stages: [{target: 100, duration: 4s}, {target: 200, duration: 4s}]}}, {name: b, type: redis.get}]}
faults: [{scenario: ramp, offset: %ds, action: pause, duration: %ds, role: master}, {scenario: b, offset: %ds, action: pause, duration: 1s, role: master}]
`, offA, durA, offB)
				f, err := v.ParseFile(context.Background(), strings.NewReader(doc("overlap", spec)))
				if err != nil {
					refused++
					if !strings.Contains(err.Error(), "must end inside its scenario") {
						t.Errorf("offset %ds duration %ds: %v", offA, durA, err)
					}
					continue
				}
				accepted++
				run := f.Runs[0]
				w := workload.ScenarioWindows(&run.Spec)
				var ends, starts []time.Duration
				for _, ft := range run.Spec.Faults {
					start := w[ft.Scenario].Start + ft.Offset.Duration
					starts, ends = append(starts, start), append(ends, start+ft.Duration.Duration)
				}
				if ends[0] > starts[1] {
					t.Errorf("accepted overlapping pauses: ramp's ends at %v, b's starts at %v", ends[0], starts[1])
				}
			}
		}
	}
	if accepted == 0 || refused == 0 {
		t.Errorf("accepted %d, refused %d: want both", accepted, refused)
	}
}
