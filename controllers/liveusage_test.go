package controllers

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/usage"
)

// TestLiveUsage: the newest sample of each pod is exported while the run runs (the
// difference of the accumulated sums), a pod without a new sample drops out, the run's series
// go when it finishes, and a run never sampled again (deleted mid-run) goes after liveStale.
func TestLiveUsage(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := NewHistory(reg, DefaultHistoryRunsPerNamespace)
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "r1", Generation: 1}}
	samples := usage.Samples{}
	now := time.Unix(1_700_000_000, 0)

	before := copySamples(samples)
	samples.AddPod("redis-master", "redis-0", "kubelet", 0.5, 10<<20)
	samples.AddPod("runner", "runner-0", "kubelet", 1.5, 40<<20)
	h.LiveUsage(run, latestSamples(before, samples), now)
	before = copySamples(samples)
	samples.AddPod("redis-master", "redis-0", "kubelet", 0.75, 12<<20) // runner-0 not sampled
	h.LiveUsage(run, latestSamples(before, samples), now.Add(5*time.Second))

	if got := testutil.ToFloat64(h.live.cpu.WithLabelValues("bench", "r1", "redis-master", "redis-0")); got != 0.75 {
		t.Errorf("live CPU of redis-0 %v, want the newest sample 0.75", got)
	}
	if got := testutil.ToFloat64(h.live.memory.WithLabelValues("bench", "r1", "redis-master", "redis-0")); got != 12<<20 {
		t.Errorf("live memory of redis-0 %v, want %d", got, 12<<20)
	}
	if n := testutil.CollectAndCount(h.live.cpu); n != 1 {
		t.Errorf("%d live CPU series, want 1 (runner-0 had no new sample)", n)
	}

	other := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "gone", Generation: 1}}
	h.LiveUsage(other, []podSample{{"runner", "gone-0", 1, 1}}, now.Add(6*time.Second))
	run.Status.Phase = v1alpha1.PhaseSucceeded
	h.Observe(run)
	if n := testutil.CollectAndCount(h.live.cpu); n != 1 {
		t.Errorf("%d live CPU series after r1 finished, want 1 (gone's)", n)
	}
	third := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "r3", Generation: 1}}
	h.LiveUsage(third, []podSample{{"runner", "r3-0", 1, 1}}, now.Add(liveStale+time.Minute))
	if n := testutil.CollectAndCount(h.live.memory); n != 1 || len(h.live.runs) != 1 {
		t.Errorf("%d live memory series, %d runs after liveStale, want only r3's", n, len(h.live.runs))
	}
}
