package bench

import (
	"cmp"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/benchrun/benchrun/internal/livemetrics"
	"github.com/benchrun/benchrun/internal/progress"
	"github.com/benchrun/benchrun/internal/results"
)

// live streams the runner's metrics by Prometheus remote write while the load runs
// (BENCHRUN_REMOTE_WRITE_URL set): every interval the registry's live document is turned into
// series and queued on a livemetrics.Pusher, which never blocks the load.
type live struct {
	cfg    livemetrics.Config
	pusher *livemetrics.Pusher
	logger logrus.FieldLogger
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	lastTs int64
}

// startLive starts live metrics when env turns them on; nil when off or misconfigured (the
// load then runs without them, and the reason is logged).
func startLive(env func(string) string, runner string, logger logrus.FieldLogger) *live {
	cfg, ok, err := livemetrics.ConfigFromEnv(env)
	if err != nil {
		if logger != nil {
			logger.WithError(err).Warn("benchrun: live metrics are off")
		}
		return nil
	}
	if !ok {
		return nil
	}
	cfg.Runner = runner
	l := &live{cfg: cfg, logger: logger, stop: make(chan struct{}), done: make(chan struct{})}
	l.pusher = livemetrics.NewPusher(cfg, func(format string, args ...any) {
		if logger != nil {
			logger.Warnf("benchrun: "+format, args...)
		}
	})
	recorders.epoch.CompareAndSwap(0, 1) // VUs start publishing snapshots
	go l.loop()
	return l
}

// remoteWrite is the pusher's counts for the progress document; nil when live metrics are off.
func (l *live) remoteWrite() *progress.RemoteWrite {
	if l == nil {
		return nil
	}
	return progress.RemoteWriteOf(l.pusher.Stats())
}

// loop pushes the live document every interval until finish.
func (l *live) loop() {
	defer close(l.done)
	t := time.NewTicker(l.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			since := recorders.newEpoch()
			if !l.awaitSnapshots(since + 1) {
				return
			}
			stats, vus := recorders.liveStatsByScenario(since)
			l.push(stats, vus)
		}
	}
}

// awaitSnapshots waits until every VU published its snapshot of epoch e, at most a tenth of
// the interval (idle or blocked VUs do not publish), polling; false when stopped meanwhile.
func (l *live) awaitSnapshots(e int64) bool {
	deadline := time.Now().Add(l.cfg.Interval / 10)
	for recorders.unpublished(e) > 0 && time.Now().Before(deadline) {
		select {
		case <-l.stop:
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

// finish stops the loop, pushes the final (exact) document and waits a few seconds at most
// for the queue to drain; it logs what was lost, once.
func (l *live) finish(doc *results.Document) {
	if l == nil {
		return
	}
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		if doc != nil {
			stats := map[string]*liveStats{}
			for i := range doc.Scenarios {
				stats[doc.Scenarios[i].Name] = statsOf(&doc.Scenarios[i])
			}
			l.push(stats, nil)
		}
		st := l.pusher.Close(5 * time.Second)
		if l.logger != nil && (st.Failed > 0 || st.Dropped > 0) {
			l.logger.WithField("sent", st.Sent).WithField("failed", st.Failed).WithField("dropped", st.Dropped).
				Warn("benchrun: some live-metric pushes were lost (the result document is complete)")
		}
	})
}

// push encodes the figures as series at a timestamp after the previous push's and queues it.
func (l *live) push(stats map[string]*liveStats, vus map[string]int) {
	ts := max(time.Now().UnixMilli(), l.lastTs+1)
	l.lastTs = ts
	body, err := livemetrics.Encode(ts, liveSeries(l.cfg, stats, vus))
	if err == nil {
		l.pusher.Push(body)
	}
}

// liveStats are the figures of one scenario a runner pushes: counters, error kinds and the
// latency in livemetrics' buckets (about 600 bytes, whatever the HDR histogram holds).
type liveStats struct {
	name          string
	calls, errors int64
	kinds         map[string]int64
	buckets       []int64 // livemetrics.NewBucketCounts
	sumMicros     int64
}

// statsOf condenses a scenario snapshot.
func statsOf(s *results.Scenario) *liveStats {
	ls := &liveStats{name: s.Name, calls: s.Calls, errors: s.Errors, sumMicros: s.Latency.Sum,
		buckets: livemetrics.NewBucketCounts()}
	livemetrics.AddHDR(ls.buckets, s.Latency.Buckets)
	if len(s.ErrorKinds) > 0 {
		ls.kinds = maps.Clone(s.ErrorKinds)
	}
	return ls
}

// add adds o's figures to ls.
func (ls *liveStats) add(o *liveStats) {
	ls.calls += o.calls
	ls.errors += o.errors
	ls.sumMicros += o.sumMicros
	for i, n := range o.buckets {
		ls.buckets[i] += n
	}
	for k, n := range o.kinds {
		if ls.kinds == nil {
			ls.kinds = map[string]int64{}
		}
		ls.kinds[k] += n
	}
}

// clone returns a copy of ls that add may change.
func (ls *liveStats) clone() *liveStats {
	c := *ls
	c.buckets = slices.Clone(ls.buckets)
	c.kinds = maps.Clone(ls.kinds)
	return &c
}

// liveSeries turns the figures per scenario into the pushed series.
func liveSeries(cfg livemetrics.Config, stats map[string]*liveStats, vus map[string]int) []livemetrics.Series {
	base := []livemetrics.Label{{Name: "benchmarkrun", Value: cfg.Run}, {Name: "namespace", Value: cfg.Namespace},
		{Name: "runner", Value: cfg.Runner}, {Name: "target", Value: cfg.Target}}
	var out []livemetrics.Series
	for _, name := range slices.Sorted(maps.Keys(stats)) {
		sc := stats[name]
		ls := livemetrics.With(base, "scenario", name)
		out = append(out,
			livemetrics.Series{Name: livemetrics.MetricCalls, Labels: ls, Value: float64(sc.calls)},
			livemetrics.Series{Name: livemetrics.MetricErrors, Labels: ls, Value: float64(sc.errors)},
			livemetrics.Series{Name: livemetrics.MetricVUs, Labels: ls, Value: float64(vus[name])})
		for kind, n := range errorKinds(sc.kinds) {
			out = append(out, livemetrics.Series{Name: livemetrics.MetricErrorsByKind,
				Labels: livemetrics.With(ls, "kind", kind), Value: float64(n)})
		}
		out = append(out, livemetrics.HistogramSeries(ls, sc.buckets, sc.sumMicros)...)
	}
	if cpu, ok := processCPUSeconds(); ok {
		out = append(out, livemetrics.Series{Name: livemetrics.MetricRunnerCPU, Labels: base, Value: cpu})
	}
	if rss, ok := processRSS(); ok {
		out = append(out, livemetrics.Series{Name: livemetrics.MetricRunnerMemory, Labels: base, Value: rss})
	}
	return out
}

// errorKinds keeps the MaxErrorKinds most frequent kinds (empty kinds named "unknown") and
// counts the rest as "other", so a script cannot blow up the label's cardinality.
func errorKinds(m map[string]int64) map[string]int64 {
	type kv struct {
		k string
		n int64
	}
	all := make([]kv, 0, len(m))
	for k, n := range m {
		if k == "" {
			k = "unknown"
		}
		all = append(all, kv{k, n})
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.k, b.k)) })
	out := make(map[string]int64, min(len(all), livemetrics.MaxErrorKinds+1))
	for i, e := range all {
		if i >= livemetrics.MaxErrorKinds {
			out["other"] += e.n
			continue
		}
		out[e.k] += e.n
	}
	return out
}

// processCPUSeconds is this process's user + system CPU time.
func processCPUSeconds() (float64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime), true
}

// processRSS is this process's resident memory from /proc/self/statm (Linux).
func processRSS() (float64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(pages * int64(os.Getpagesize())), true
}
