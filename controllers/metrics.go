package controllers

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// DefaultHistoryRunsPerNamespace is how many finished runs per namespace History exports.
const DefaultHistoryRunsPerNamespace = 50

// maxHistorySeen bounds the memory of which finished runs History has exported.
const maxHistorySeen = 10000

// History exports finished runs as Prometheus metrics, so a dashboard can plot CPS and p99
// per scenario across runs (the seeds' comparisons) from the manager's /metrics. Its
// cardinality is bounded: only the newest perNamespace finished runs of each namespace are
// exported (an older run's series are deleted when a newer one finishes), each with one
// series per scenario (at most 32) and per role.
type History struct {
	mu           sync.Mutex
	perNamespace int
	seen         map[string]bool     // namespace/name/generation already exported
	order        map[string][]string // namespace → exported run names, oldest first

	cps, calls, errors, latency, duration, cpu, memory *prometheus.GaugeVec
	finished                                           *prometheus.CounterVec
	phase                                              *prometheus.GaugeVec // when a run entered each phase (annotations)

	live liveUsage // CPU/memory of running runs' pods (liveusage.go)
}

// NewHistory registers the history metrics on reg; perNamespace < 1 means the default.
func NewHistory(reg prometheus.Registerer, perNamespace int) *History {
	if perNamespace < 1 {
		perNamespace = DefaultHistoryRunsPerNamespace
	}
	scenario := []string{"namespace", "benchmarkrun", "generation", "target", "scenario"}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "benchrun", Subsystem: "run", Name: name, Help: help}, labels)
	}
	h := &History{
		perNamespace: perNamespace, seen: map[string]bool{}, order: map[string][]string{},
		cps:      gauge("scenario_cps", "Calls per second of a finished run's scenario (trimmed, as status.results[].cps).", scenario...),
		calls:    gauge("scenario_calls", "Calls of a finished run's scenario.", scenario...),
		errors:   gauge("scenario_errors", "Failed calls of a finished run's scenario.", scenario...),
		latency:  gauge("scenario_latency_ms", "Latency quantile (ms) of a finished run's scenario, merged exactly over runners.", append(scenario, "quantile")...),
		duration: gauge("duration_seconds", "Wall-clock time of a finished run from creation to its end.", "namespace", "benchmarkrun", "generation", "target", "phase", "verdict"),
		cpu:      gauge("cpu_cores", "CPU of a finished run's pods by role (stat avg or max).", "namespace", "benchmarkrun", "generation", "role", "stat"),
		memory:   gauge("memory_bytes", "Memory of a finished run's pods by role (stat avg or max).", "namespace", "benchmarkrun", "generation", "role", "stat"),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "benchrun", Name: "runs_finished_total",
			Help: "Runs this manager saw finish (after a restart: the finished runs it found), by phase and verdict."},
			[]string{"namespace", "phase", "verdict"}),
		phase: gauge("phase_entered_timestamp_seconds", "When a run's current generation entered each phase it reached (Unix seconds; the run dashboard's phase annotations).",
			"namespace", "benchmarkrun", "phase"),
	}
	reg.MustRegister(h.cps, h.calls, h.errors, h.latency, h.duration, h.cpu, h.memory, h.finished, h.phase)
	h.live = newLiveUsage(reg)
	return h
}

// Observe exports a finished run once per generation and drops the series of the runs that
// fall out of the namespace's newest perNamespace. Safe for concurrent reconciles.
func (h *History) Observe(run *v1alpha1.BenchmarkRun) {
	if h == nil || !finished(run.Status.Phase) {
		return
	}
	gen := strconv.FormatInt(run.Generation, 10)
	key := run.Namespace + "/" + run.Name + "/" + gen
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[key] {
		return
	}
	if len(h.seen) >= maxHistorySeen { // bounded: forgetting only means a finished run may be exported again
		clear(h.seen)
	}
	h.seen[key] = true
	h.live.drop(run.Namespace + "/" + run.Name) // finished: no live usage any more
	h.forget(run.Namespace, run.Name)           // an earlier generation of the same run
	h.export(run, gen)
	h.finished.WithLabelValues(run.Namespace, string(run.Status.Phase), string(run.Status.Verdict)).Inc()
	names := append(h.order[run.Namespace], run.Name)
	for len(names) > h.perNamespace {
		h.forget(run.Namespace, names[0])
		h.phase.DeletePartialMatch(prometheus.Labels{"namespace": run.Namespace, "benchmarkrun": names[0]})
		names = names[1:]
	}
	h.order[run.Namespace] = names
}

// export sets the gauges of one finished run.
func (h *History) export(run *v1alpha1.BenchmarkRun, gen string) {
	st := &run.Status
	target := "" // a run that failed before provisioning has no target status
	if st.Target != nil {
		target = st.Target.Kind
	}
	for _, sc := range st.Results {
		l := []string{run.Namespace, run.Name, gen, target, sc.Name}
		h.cps.WithLabelValues(l...).Set(sc.CPS)
		h.calls.WithLabelValues(l...).Set(float64(sc.Calls))
		h.errors.WithLabelValues(l...).Set(float64(sc.Errors))
		for q, v := range map[string]float64{"0.5": sc.LatencyMs.P50, "0.9": sc.LatencyMs.P90, "0.99": sc.LatencyMs.P99,
			"0.999": sc.LatencyMs.P999, "1": sc.LatencyMs.Max} {
			h.latency.WithLabelValues(append(l, q)...).Set(v)
		}
	}
	if st.CompletionTime != nil {
		h.duration.WithLabelValues(run.Namespace, run.Name, gen, target, string(st.Phase), string(st.Verdict)).
			Set(st.CompletionTime.Sub(run.CreationTimestamp.Time).Seconds())
	}
	for _, u := range st.Resources {
		h.cpu.WithLabelValues(run.Namespace, run.Name, gen, u.Role, "avg").Set(u.CPUAvgCores)
		h.cpu.WithLabelValues(run.Namespace, run.Name, gen, u.Role, "max").Set(u.CPUMaxCores)
		h.memory.WithLabelValues(run.Namespace, run.Name, gen, u.Role, "avg").Set(float64(u.MemoryAvgBytes))
		h.memory.WithLabelValues(run.Namespace, run.Name, gen, u.Role, "max").Set(float64(u.MemoryMaxBytes))
	}
}

// forget deletes every series of run name in namespace and its place in the order.
func (h *History) forget(namespace, name string) {
	match := prometheus.Labels{"namespace": namespace, "benchmarkrun": name}
	for _, v := range []*prometheus.GaugeVec{h.cps, h.calls, h.errors, h.latency, h.duration, h.cpu, h.memory} {
		v.DeletePartialMatch(match)
	}
	names := h.order[namespace]
	for i, n := range names {
		if n == name {
			h.order[namespace] = append(names[:i:i], names[i+1:]...)
			break
		}
	}
}

// PhaseEntered records when run entered its current phase. A new generation starts its phases
// afresh. The series of a run go when it falls out of the namespace's newest perNamespace
// finished runs, or when it is deleted before it finished (Drop). Nil-safe.
func (h *History) PhaseEntered(run *v1alpha1.BenchmarkRun, at time.Time) {
	if h == nil || run.Status.Phase == "" {
		return
	}
	if run.Status.Phase == v1alpha1.PhasePending { // a new generation: the earlier one's phases go
		h.phase.DeletePartialMatch(prometheus.Labels{"namespace": run.Namespace, "benchmarkrun": run.Name})
	}
	h.phase.WithLabelValues(run.Namespace, run.Name, string(run.Status.Phase)).Set(float64(at.UnixMilli()) / 1000)
}

// Drop deletes the phase series of a run deleted before it finished (a finished run's series
// go with its history series).
func (h *History) Drop(namespace, name string) {
	if h == nil {
		return
	}
	h.phase.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "benchmarkrun": name})
}

// Forget deletes every series of a deleted run (history, phases, live usage) and lets a new
// run of the same name be exported again. With lastInNamespace (no run of the namespace is
// left, e.g. the namespace was deleted), the namespace's runs_finished_total series go too,
// so the series of deleted namespaces do not pile up. Nil-safe.
func (h *History) Forget(namespace, name string, lastInNamespace bool) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forget(namespace, name)
	h.phase.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "benchmarkrun": name})
	h.live.drop(namespace + "/" + name)
	runKey := namespace + "/" + name + "/"
	for key := range h.seen {
		if strings.HasPrefix(key, runKey) {
			delete(h.seen, key)
		}
	}
	if lastInNamespace {
		h.finished.DeletePartialMatch(prometheus.Labels{"namespace": namespace})
		delete(h.order, namespace)
		nsKey := namespace + "/"
		for key := range h.seen {
			if strings.HasPrefix(key, nsKey) {
				delete(h.seen, key)
			}
		}
	}
}

// forgetDeleted drops the metrics of run key, which no longer exists; when no run of its
// namespace is left (read from the cache), the namespace's too.
func (r *BenchmarkRunReconciler) forgetDeleted(ctx context.Context, key types.NamespacedName) {
	if r.History == nil {
		return
	}
	var left v1alpha1.BenchmarkRunList
	last := false
	if err := r.List(ctx, &left, client.InNamespace(key.Namespace), client.Limit(1)); err != nil {
		logf.FromContext(ctx).V(1).Info("listing the runs left in the namespace", "error", err.Error())
	} else {
		last = len(left.Items) == 0
	}
	r.History.Forget(key.Namespace, key.Name, last)
}
