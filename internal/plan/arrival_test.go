package plan

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestArrivalSplitExactly: an arrival rate, ramp and search are split over the runners so
// that the runners' rates add up exactly; stages and search steps set the scenario's length
// and the next scenario's start; the search rule reaches the summary options.
func TestArrivalSplitExactly(t *testing.T) {
	rate, unit := int64(1001), metav1.Duration{Duration: time.Minute}
	factor, maxP99, steps := 2.0, metav1.Duration{Duration: 10 * time.Millisecond}, int32(3)
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "open"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}},
			Load: v1alpha1.LoadSpec{
				Workers: 4, TasksPerWorker: 1, Duration: metav1.Duration{Duration: 20 * time.Second},
				Scenarios: []v1alpha1.Scenario{
					{Name: "rate", Type: v1alpha1.ScenarioRedisGet, Arrival: &v1alpha1.ArrivalSpec{Rate: &rate, TimeUnit: &unit}},
					{Name: "ramp", Type: v1alpha1.ScenarioRedisSet, Arrival: &v1alpha1.ArrivalSpec{Stages: []v1alpha1.ArrivalStage{
						{Target: 300, Duration: metav1.Duration{Duration: 10 * time.Second}}, {Target: 0, Duration: metav1.Duration{Duration: 5 * time.Second}}}}},
					{Name: "search", Type: v1alpha1.ScenarioRedisPing, Arrival: &v1alpha1.ArrivalSpec{Search: &v1alpha1.SearchSpec{
						StartRate: 100, Factor: &factor, StepDuration: metav1.Duration{Duration: 4 * time.Second}, MaxSteps: &steps, MaxP99: &maxP99}}},
					{Name: "closed", Type: v1alpha1.ScenarioRedisPing},
				},
			},
		},
	}
	eps := []v1alpha1.Endpoint{{Role: RoleRedis, Address: "r:6379"}}
	const runners = 3
	sums := make([]float64, 6)
	for i := range runners {
		inv, err := ForRunner(run, eps, i, runners)
		if err != nil {
			t.Fatal(err)
		}
		var spec Spec
		if err := json.Unmarshal([]byte(inv.Env[EnvPlan]), &spec); err != nil {
			t.Fatal(err)
		}
		r, ramp, search, closed := spec.Scenarios[0], spec.Scenarios[1], spec.Scenarios[2], spec.Scenarios[3]
		if r.Arrival == nil || r.Arrival.MaxVUs != 100 || len(r.Arrival.Segments) != 1 || r.Arrival.Segments[0].DurationMs != 20000 {
			t.Fatalf("runner %d rate: %+v", i, r.Arrival)
		}
		if ramp.DurationMs != 15000 || ramp.StartMs != 22000 || search.DurationMs != 12000 || closed.Arrival != nil ||
			closed.StartMs != 22000+15000+2000+12000+2000 {
			t.Errorf("runner %d: lengths/starts ramp %d@%d search %d closed @%d", i, ramp.DurationMs, ramp.StartMs, search.DurationMs, closed.StartMs)
		}
		if g := search.Arrival.Segments; len(g) != 3 || g[2].Step != 3 || g[0].From != g[0].To {
			t.Errorf("runner %d search segments %+v", i, g)
		}
		if st := search.Arrival.Stop; st == nil || st.After != 1 || st.MaxP99Ms != 10 || st.MaxErrorPercent != nil || r.Arrival.Stop != nil {
			t.Errorf("runner %d search stop %+v (rate's %+v): want after 1, p99 10 ms, only on the search", i, st, r.Arrival.Stop)
		}
		sums[0] += r.Arrival.Segments[0].From
		sums[1] += ramp.Arrival.Segments[0].To
		sums[2] += ramp.Arrival.Segments[1].From
		for k, g := range search.Arrival.Segments {
			sums[3+k] += g.From
		}
	}
	for k, want := range []float64{1001.0 / 60, 300, 300, 100, 200, 400} {
		if d := sums[k] - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("rate %d: runners add up to %v/s, want %v", k, sums[k], want)
		}
	}
	if r := SummaryOptions(run).Search["search"]; r.MaxP99 != 10*time.Millisecond || r.MaxErrorPercent != nil {
		t.Errorf("search rule %+v", r)
	}
	// stopAfter 0 runs every step: no early stop in the plan
	zero := int32(0)
	run.Spec.Load.Scenarios[2].Arrival.Search.StopAfter = &zero
	if st := arrivalFor(run.Spec.Load.Scenarios[2].Arrival, 12*time.Second, 0, 1).Stop; st != nil {
		t.Errorf("stopAfter 0: stop %+v, want none", st)
	}
}
