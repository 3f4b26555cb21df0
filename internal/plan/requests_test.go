package plan

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestRequestsSplitExactly: a fixed request count is split over any number of runners so
// that the shares add up exactly (the first runners take the remainder), the scenario keeps
// load.duration as its time limit, and a redis.command template is split into words.
func TestRequestsSplitExactly(t *testing.T) {
	requests, data := int64(100003), int32(64)
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "fixed"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}},
			Load: v1alpha1.LoadSpec{
				Workers: 7, TasksPerWorker: 1, Duration: metav1.Duration{Duration: 20 * time.Second},
				Scenarios: []v1alpha1.Scenario{{Name: "hset", Type: v1alpha1.ScenarioRedisCommand, Requests: &requests,
					RedisCommand: &v1alpha1.RedisCommandSpec{Command: " HSET  k:__rand_int__ f __data__ ", DataSize: &data}}},
			},
		},
	}
	eps := []v1alpha1.Endpoint{{Role: RoleRedis, Address: "r:6379"}}
	for _, runners := range []int{1, 2, 3, 7} {
		var total int64
		for i := range runners {
			inv, err := ForRunner(run, eps, i, runners)
			if err != nil {
				t.Fatal(err)
			}
			var spec Spec
			if err := json.Unmarshal([]byte(inv.Env[EnvPlan]), &spec); err != nil {
				t.Fatal(err)
			}
			s := spec.Scenarios[0]
			if s.Requests == nil || s.DurationMs != 20000 || s.DataSize != 64 ||
				!slices.Equal(s.Command, []string{"HSET", "k:__rand_int__", "f", "__data__"}) {
				t.Fatalf("runner %d of %d: %+v", i, runners, s)
			}
			if want := requests / int64(runners); *s.Requests != want && *s.Requests != want+1 {
				t.Errorf("runner %d of %d: share %d", i, runners, *s.Requests)
			}
			total += *s.Requests
		}
		if total != requests {
			t.Errorf("%d runners: shares add up to %d, want %d", runners, total, requests)
		}
	}
}
