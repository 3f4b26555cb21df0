package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/local"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
	brunner "github.com/benchrun/benchrun/internal/runner"
)

// Fault injection in `benchrun run` (spec.faults): the runners start paused and are released
// together, so the load start is known to the millisecond; each fault is applied to the local
// target's processes when due (lifecycle.FaultDue, as the operator does to pods) by
// local.ApplyFault; on a Redis write path benchrun itself runs the fault probe (runner 0 does
// in a cluster); once merged, the faults are measured and reported by lifecycle.MeasureFaults
// and lifecycle.RenderFaults, as the operator does.

// faultsFile is the file of the faults' status entries in the output directory.
const faultsFile = "faults.json"

// localFaults applies a run's faults while its load runs.
type localFaults struct {
	run    *v1alpha1.BenchmarkRun
	target local.Target
	start  time.Time
	probe  *brunner.Probe
	cancel context.CancelFunc
	done   chan struct{}
	log    func(format string, args ...any)

	mu      sync.Mutex
	status  []v1alpha1.FaultStatus
	resumed map[int]<-chan time.Time // a pause's SIGCONT time, by status index
}

// startFaults starts applying l's faults, counted from the load start; nil without faults.
func (l *localRun) startFaults(start time.Time) *localFaults {
	if len(l.run.Spec.Faults) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &localFaults{run: l.run, target: l.target, start: start, cancel: cancel, done: make(chan struct{}),
		resumed: map[int]<-chan time.Time{}, log: func(format string, args ...any) { _, _ = fmt.Fprintf(l.stderr, format, args...) }}
	f.probe = brunner.ProbeFor(l.runners[0].inv.Env, lifecycle.FaultProbeKey(l.run.Name), secretValue(l.secretEnv, plan.EnvRedisPassword))
	var probeDone chan struct{}
	if f.probe != nil {
		probeDone = make(chan struct{})
		go func() { defer close(probeDone); f.probe.Run(ctx) }()
	}
	go func() {
		defer close(f.done)
		f.apply(ctx)
		if probeDone != nil {
			<-probeDone
		}
	}()
	return f
}

// secretValue is the value of name in NAME=value entries ("" when absent).
func secretValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// apply applies each fault when due, in due order, until ctx ends (the load ended).
func (f *localFaults) apply(ctx context.Context) {
	order := make([]int, len(f.run.Spec.Faults))
	due := make([]time.Time, len(order))
	for i := range order {
		order[i] = i
		due[i], _ = lifecycle.FaultDue(f.run, i, f.start) // admission checked the scenario names
	}
	slices.SortStableFunc(order, func(a, b int) int { return due[a].Compare(due[b]) })
	for _, i := range order {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(due[i])):
		}
		f.applyOne(ctx, i, due[i])
	}
}

// applyOne applies fault i (due at due) and records its status entry.
func (f *localFaults) applyOne(ctx context.Context, i int, due time.Time) {
	spec := f.run.Spec.Faults[i]
	var d time.Duration
	if spec.Duration != nil {
		d = spec.Duration.Duration
	}
	fs := lifecycle.FaultEntry(i, spec)
	res, err := local.ApplyFault(ctx, f.target, spec.Action, spec.Role, d)
	now := time.Now()
	fs.AppliedTime, fs.LateMs = &metav1.MicroTime{Time: now}, max(0, now.Sub(due).Milliseconds())
	fs.Pod, fs.Outcome, fs.Message = res.Process, v1alpha1.FaultApplied, res.Message
	if err != nil {
		fs.Outcome, fs.Message = v1alpha1.FaultFailed, err.Error()
	}
	if !res.Paused.IsZero() {
		fs.AppliedTime = &metav1.MicroTime{Time: res.Paused}
		fs.PausedTime = &metav1.MicroTime{Time: res.Paused}
	}
	f.log("benchrun: fault %d (%s %s at %s in %s): %s: %s\n", i, spec.Action, spec.Role, fs.Offset, spec.Scenario, fs.Outcome, fs.Message)
	f.mu.Lock()
	defer f.mu.Unlock()
	if res.Resumed != nil {
		f.resumed[len(f.status)] = res.Resumed
	}
	f.status = append(f.status, fs)
}

// finish stops applying faults (the load ended), lets pauses still running end (at most
// their duration), stops the probe and reads its markers back; it returns the status entries
// of the faults applied and the probe's report (nil without a probe). A stopped load
// (interrupt, timeout, abort) waits for neither: the runners still load until stopped.
func (f *localFaults) finish(stopped bool) ([]v1alpha1.FaultStatus, *brunner.ProbeReport) {
	f.cancel()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, ch := range f.resumed {
		wait := time.Second
		if d := f.run.Spec.Faults[f.status[i].Index].Duration; d != nil && !stopped {
			wait += time.Until(f.status[i].PausedTime.Add(d.Duration))
		}
		if t, ok := receiveWithin(ch, wait); ok {
			f.status[i].ResumedTime = &metav1.MicroTime{Time: t}
		}
	}
	if f.probe == nil {
		return f.status, nil
	}
	readBack := 30 * time.Second // a failover may still be under way
	if stopped {
		readBack = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), readBack+5*time.Second)
	defer cancel()
	rep := f.probe.Finish(ctx, readBack)
	return f.status, &rep
}

// receiveWithin receives from ch, waiting at most d (not at all when d <= 0): what is already
// there is always taken.
func receiveWithin(ch <-chan time.Time, d time.Duration) (time.Time, bool) {
	select {
	case t := <-ch:
		return t, true
	default:
	}
	if d <= 0 {
		return time.Time{}, false
	}
	select {
	case t := <-ch:
		return t, true
	case <-time.After(d):
		return time.Time{}, false
	}
}

// faultReport measures the faults once the results are merged (lifecycle.MeasureFaults),
// writes faults.json and returns the report.md section (lifecycle.RenderFaults).
func faultReport(dir string, run *v1alpha1.BenchmarkRun, applied []v1alpha1.FaultStatus, probe *brunner.ProbeReport,
	merged *results.Document) (string, error) {
	if len(run.Spec.Faults) == 0 {
		return "", nil
	}
	st := v1alpha1.BenchmarkRunStatus{Faults: applied}
	var fo func(int64) *v1alpha1.FailoverStatus
	if probe != nil && probe.Bound() {
		fo = probe.Failover
	}
	lifecycle.MeasureFaults(&st, run.Spec.Faults, merged, fo)
	b, err := json.MarshalIndent(st.Faults, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, faultsFile), append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	var md strings.Builder
	lifecycle.RenderFaults(&md, &st)
	return md.String(), nil
}

// releaseWithFaults waits until every runner's k6 initialized its VUs (started paused), within
// timeouts.runnersReady, releases them together and starts applying the faults from then. An
// interrupt (sigCtx) while waiting fails the start.
func (l *localRun) releaseWithFaults(sigCtx context.Context) error {
	timeout := lifecycle.RunnersReadyTimeout(l.run)
	ctx, cancel := context.WithTimeout(sigCtx, timeout)
	defer cancel()
	for _, r := range l.runners {
		for {
			st, err := lifecycle.K6Status(ctx, r.api)
			if err == nil && st == lifecycle.K6PausedBeforeRun {
				break
			}
			if r.proc.Exited() {
				return fmt.Errorf("k6 runner %d exited while initializing (%s, see %s)%s", r.index, exitText(r.proc.ExitCode()), r.log, logTail(r.log))
			}
			select {
			case <-ctx.Done():
				if sigCtx.Err() != nil {
					return fmt.Errorf("interrupted while the k6 runners initialized")
				}
				return fmt.Errorf("k6 runner %d not ready within %s (spec.timeouts.runnersReady)", r.index, timeout)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	start := time.Now()
	for _, r := range l.runners {
		if err := lifecycle.K6Resume(ctx, r.api); err != nil {
			return fmt.Errorf("releasing k6 runner %d: %w", r.index, err)
		}
	}
	l.faults = l.startFaults(start)
	return nil
}

// endFaults stops applying faults once the load ended and keeps what they did.
func (l *localRun) endFaults(out loadOutcome) {
	if l.faults != nil {
		l.applied, l.probe = l.faults.finish(out.stopped())
	}
}

// faultSection is report.md's faults section ("" without faults); it writes faults.json.
func (l *localRun) faultSection(merged *results.Document) (string, error) {
	return faultReport(l.outDir, l.run, l.applied, l.probe, merged)
}
