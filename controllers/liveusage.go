package controllers

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/usage"
)

// liveStale is how long a run's live usage series stay exported without a new sample (a run
// deleted mid-run never finishes): they are dropped at the next sample of any run.
const liveStale = 10 * time.Minute

// liveUsage exports the latest CPU/memory sample of every pod of the runs being measured
// (target and runners, the samples status.resources averages), so the "benchrun / run"
// dashboard shows the target's usage during the load. Bounded: only running runs' pods; a
// run's series go when it finishes (History.Observe) or after liveStale without a sample.
// Guarded by History.mu.
type liveUsage struct {
	cpu, memory *prometheus.GaugeVec
	runs        map[string]*liveRun // namespace/name
}

// liveRun is what a run exports: when it was last sampled and its pods' label values.
type liveRun struct {
	at   time.Time
	pods map[[2]string]bool // role, pod
}

func newLiveUsage(reg prometheus.Registerer) liveUsage {
	labels := []string{"namespace", "benchmarkrun", "role", "pod"}
	l := liveUsage{
		cpu: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "benchrun", Name: "live_cpu_cores",
			Help: "CPU of a running run's pod (cores), the latest sample (metrics.k8s.io or the kubelet)."}, labels),
		memory: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "benchrun", Name: "live_memory_bytes",
			Help: "Memory (working set) of a running run's pod, the latest sample."}, labels),
		runs: map[string]*liveRun{},
	}
	reg.MustRegister(l.cpu, l.memory)
	return l
}

// drop deletes the live series of run key (namespace/name).
func (l *liveUsage) drop(key string) {
	if l.cpu == nil {
		return
	}
	ns, name, _ := strings.Cut(key, "/")
	match := prometheus.Labels{"namespace": ns, "benchmarkrun": name}
	l.cpu.DeletePartialMatch(match)
	l.memory.DeletePartialMatch(match)
	delete(l.runs, key)
}

// podSample is one pod's latest sample.
type podSample struct {
	role, pod string
	cpu, mem  float64
}

// latestSamples are the samples added to after since before was copied (usage.Samples
// accumulates sums; a pod whose count grew by one has its newest sample as the difference).
func latestSamples(before map[[2]string]usage.PodUsage, after usage.Samples) []podSample {
	var out []podSample
	for role, pods := range after {
		for pod, p := range pods {
			b := before[[2]string{role, pod}]
			if p.N == b.N+1 {
				out = append(out, podSample{role, pod, max(p.CPUSum-b.CPUSum, 0), max(p.MemSum-b.MemSum, 0)})
			}
		}
	}
	return out
}

// copySamples copies the per-pod sums (to diff against after the next sample).
func copySamples(s usage.Samples) map[[2]string]usage.PodUsage {
	out := map[[2]string]usage.PodUsage{}
	for role, pods := range s {
		for pod, p := range pods {
			out[[2]string{role, pod}] = *p
		}
	}
	return out
}

// LiveUsage exports the newest sample of each pod of a running run (pods without a new
// sample, e.g. gone, drop out) and drops the series of runs not sampled for liveStale.
func (h *History) LiveUsage(run *v1alpha1.BenchmarkRun, samples []podSample, now time.Time) {
	if h == nil || len(samples) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	key := run.Namespace + "/" + run.Name
	for k, lr := range h.live.runs {
		if now.Sub(lr.at) > liveStale {
			h.live.drop(k)
		}
	}
	pods := map[[2]string]bool{}
	for _, s := range samples {
		pods[[2]string{s.role, s.pod}] = true
		h.live.cpu.WithLabelValues(run.Namespace, run.Name, s.role, s.pod).Set(s.cpu)
		h.live.memory.WithLabelValues(run.Namespace, run.Name, s.role, s.pod).Set(s.mem)
	}
	if prev := h.live.runs[key]; prev != nil {
		for p := range prev.pods {
			if !pods[p] {
				h.live.cpu.DeleteLabelValues(run.Namespace, run.Name, p[0], p[1])
				h.live.memory.DeleteLabelValues(run.Namespace, run.Name, p[0], p[1])
			}
		}
	}
	h.live.runs[key] = &liveRun{at: now, pods: pods}
}
