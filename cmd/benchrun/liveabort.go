package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	liveprogress "github.com/benchrun/benchrun/internal/progress"
)

// liveAbortPoll is how often `benchrun run` reads the runners' progress files.
const liveAbortPoll = time.Second

// progressInterval is how often the local k6 runners rewrite their progress files.
const progressInterval = "1s"

// liveAbort evaluates the abortOnFail thresholds on the runners' progress files
// (internal/progress, written by benchrun's k6 output) while the load runs, like the operator
// does on the runners' state ConfigMaps; the first threshold broken stops the load.
type liveAbort struct {
	ths      []v1alpha1.Threshold
	baseline []v1alpha1.ScenarioResult
	files    []string
	mu       sync.Mutex
	msg      string
	start    time.Time // load start: when calls were first seen, minus their elapsed time
}

// progressFile is where runner i of a local run writes its progress document.
func progressFile(outDir string, i int) string {
	return filepath.Join(outDir, fmt.Sprintf("runner-%d.progress.json", i))
}

// startLiveAbort returns ctx itself when no threshold has abortOnFail, else a context
// cancelled when one breaks live; why tells why (empty while none broke), end stops watching.
func (l *localRun) startLiveAbort(ctx context.Context) (actx context.Context, why func() string, end func()) {
	if !liveprogress.HasAbortOnFail(l.run.Spec.Thresholds) {
		return ctx, func() string { return "" }, func() {}
	}
	a := &liveAbort{ths: l.run.Spec.Thresholds, baseline: l.gate.baseline}
	for _, r := range l.runners {
		a.files = append(a.files, r.progress)
	}
	actx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	go func() {
		defer cancel()
		t := time.NewTicker(liveAbortPoll)
		defer t.Stop()
		for {
			select {
			case <-actx.Done():
				return
			case <-stop:
				return
			case now := <-t.C:
				if a.check(now) {
					return
				}
			}
		}
	}()
	return actx, a.message, func() { close(stop) }
}

// message is why the load was aborted, "" when it was not.
func (a *liveAbort) message() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.msg
}

// check reads and merges the progress files and evaluates the thresholds; true when one broke.
func (a *liveAbort) check(now time.Time) bool {
	var docs []liveprogress.Doc
	var elapsed float64
	for _, f := range a.files {
		d, err := readProgress(f)
		if err != nil {
			continue // not written yet, or unreadable: the final result decides
		}
		docs = append(docs, d)
		for _, sc := range d.Scenarios {
			if sc.Calls > 0 || sc.Errors > 0 {
				elapsed = max(elapsed, sc.ElapsedSeconds)
			}
		}
	}
	live := liveprogress.Merge(docs)
	if a.start.IsZero() {
		if elapsed == 0 {
			return false
		}
		a.start = now.Add(-time.Duration(elapsed * float64(time.Second)))
	}
	since := now.Sub(a.start)
	tr, broken := liveprogress.Broken(a.ths, live, a.baseline, since)
	if !broken {
		return false
	}
	a.mu.Lock()
	a.msg = liveprogress.AbortMessage(tr, since)
	a.mu.Unlock()
	return true
}

// readProgress reads one progress file, at most liveprogress.MaxBytes (+1 to detect larger ones).
func readProgress(path string) (liveprogress.Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return liveprogress.Doc{}, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, liveprogress.MaxBytes+1))
	if err != nil {
		return liveprogress.Doc{}, err
	}
	return liveprogress.Decode(string(b))
}

// appendVerdict appends text to the out dir's verdict.md (best effort: stderr has it too).
func appendVerdict(outDir, text string) {
	f, err := os.OpenFile(filepath.Join(outDir, "verdict.md"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	_, _ = f.WriteString(text)
	_ = f.Close()
}
