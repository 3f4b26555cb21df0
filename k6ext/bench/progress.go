package bench

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/benchrun/benchrun/internal/progress"
)

// defaultProgressInterval is how often the progress file is rewritten by default.
const defaultProgressInterval = 2 * time.Second

// progressWriter rewrites the live progress document (calls, errors, elapsed time and a
// coarse latency histogram per scenario, a few hundred bytes each) atomically every interval,
// from the same VU snapshots as the live metrics: the runner agent and `benchrun run` read it
// to evaluate abortOnFail thresholds and show live calls/s.
type progressWriter struct {
	path     string
	interval time.Duration
	logger   logrus.FieldLogger
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	// per scenario: calls at the previous write and when they last grew
	lastCalls  map[string]int64
	lastActive map[string]time.Time
	// rw is the remote-write pusher's counts (nil without remote write)
	rw func() *progress.RemoteWrite
}

// startProgress starts the writer when env names a file; nil otherwise. rw (may return nil)
// gives the remote-write pusher's counts the document carries.
func startProgress(env func(string) string, logger logrus.FieldLogger, rw func() *progress.RemoteWrite) *progressWriter {
	path := env(progress.EnvFile)
	if path == "" {
		return nil
	}
	interval := defaultProgressInterval
	if v := env(progress.EnvInterval); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d >= 100*time.Millisecond {
			interval = d
		} else if logger != nil {
			logger.Warnf("benchrun: %s=%q is not a duration of at least 100ms; using %s", progress.EnvInterval, v, interval)
		}
	}
	p := &progressWriter{path: path, interval: interval, logger: logger, stop: make(chan struct{}), done: make(chan struct{}),
		lastCalls: map[string]int64{}, lastActive: map[string]time.Time{}, rw: rw}
	recorders.epoch.CompareAndSwap(0, 1) // VUs start publishing snapshots
	go p.loop()
	return p
}

// loop writes the document every interval until finish.
func (p *progressWriter) loop() {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			since := recorders.newEpoch()
			if !awaitSnapshots(since+1, p.interval/10, p.stop) {
				return
			}
			stats, _ := recorders.liveStatsByScenario(since)
			if err := p.write(stats, time.Now()); err != nil && p.logger != nil {
				p.logger.WithError(err).Warn("benchrun: writing the progress file")
			}
		}
	}
}

// awaitSnapshots waits until every VU published its snapshot of epoch e, at most wait
// (idle or blocked VUs do not publish), polling; false when stopped meanwhile.
func awaitSnapshots(e int64, wait time.Duration, stop <-chan struct{}) bool {
	deadline := time.Now().Add(wait)
	for recorders.unpublished(e) > 0 && time.Now().Before(deadline) {
		select {
		case <-stop:
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

// document builds the progress document at now: a scenario's elapsed time runs from k6's
// start of it to now while its calls grow, and stops growing once they stop.
func (p *progressWriter) document(stats map[string]*liveStats, now time.Time) progress.Doc {
	var d progress.Doc
	if p.rw != nil {
		d.RemoteWrite = p.rw()
	}
	for _, name := range slices.Sorted(maps.Keys(stats)) {
		st := stats[name]
		if st.calls != p.lastCalls[name] || p.lastActive[name].IsZero() {
			p.lastCalls[name], p.lastActive[name] = st.calls, now
		}
		var elapsed float64
		if start := recorders.startOf(name); !start.IsZero() {
			elapsed = max(p.lastActive[name].Sub(start).Seconds(), 0)
		}
		d.Scenarios = append(d.Scenarios, progress.Scenario{Name: name, Calls: st.calls, Errors: st.errors,
			ElapsedSeconds: elapsed, SumMicros: st.sumMicros, Buckets: st.buckets})
		if len(d.Scenarios) == progress.MaxScenarios {
			break
		}
	}
	return d
}

// write writes the document atomically (temporary file + rename).
func (p *progressWriter) write(stats map[string]*liveStats, now time.Time) error {
	b, err := progress.Encode(p.document(stats, now))
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p.path), ".progress-*.json")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }() // no-op after the rename
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p.path)
}

// finish stops the writer (the result document carries the exact figures).
func (p *progressWriter) finish() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		close(p.stop)
		<-p.done
	})
}
