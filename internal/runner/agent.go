package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/internal/plan"
)

// Agent is the in-pod runner: it waits at the start barrier, runs k6 and stores the result
// document in its result ConfigMap (see the package comment for the protocol).
type Agent struct {
	// Client reads the barrier and updates the state and result ConfigMaps; when it is a
	// client.WithWatch the barrier is watched, else read with a backoff.
	Client client.Client
	// Namespace is the run's namespace.
	Namespace string
	// StateName is this runner's state ConfigMap.
	StateName string
	// ResultName is this runner's result ConfigMap; empty stores the result in the state
	// ConfigMap (the protocol of older operators).
	ResultName string
	// BarrierName is the barrier ConfigMap.
	BarrierName string
	// K6 is the k6 binary (default "k6" on PATH).
	K6 string
	// ResultFile is where k6 writes the result document.
	ResultFile string
	// ProgressFile is where k6 writes its live progress (default: progress.json next to
	// ResultFile); the agent publishes it in its state ConfigMap (live.go).
	ProgressFile string
	// ProgressInterval overrides the publish interval (default progress.PublishInterval of
	// the runner count).
	ProgressInterval time.Duration
	// CgroupDir is the pod's cgroup v2 directory (default /sys/fs/cgroup).
	CgroupDir string
	// Poll is the first retry delay of a failed barrier read or watch (default 250ms); it
	// doubles up to MaxBarrierBackoff.
	Poll time.Duration
	// Now tells the time (default time.Now).
	Now func() time.Time
	// Load runs k6 (default: the K6 binary, started paused and released through its REST API).
	Load Load

	// probeReport is the fault probe's JSON report, stored with the final state.
	probeReport string
}

// Load is one k6 run as the agent drives it.
type Load interface {
	// Prepare starts k6 paused and returns once its virtual users are initialized, so
	// that the barrier also covers k6's start-up time.
	Prepare(ctx context.Context, inv plan.Invocation) error
	// Start releases the paused k6.
	Start(ctx context.Context) error
	// Wait waits until k6 exits and returns its exit code.
	Wait() (int, error)
}

// Run goes through the protocol once. It returns an error when the load did not complete,
// after storing whatever result k6 wrote.
func (a *Agent) Run(ctx context.Context) error {
	a.defaults()
	var cm corev1.ConfigMap
	if err := a.Client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.StateName}, &cm); err != nil {
		return fmt.Errorf("reading state %s: %w", a.StateName, err)
	}
	if s := cm.Data[KeyState]; s == StateDone || s == StateFailed {
		return nil // already finished (a restarted pod must not run the load twice)
	}
	inv, err := DecodeInvocation(&cm)
	if err != nil {
		return a.finish(StateFailed, "invalid invocation", -1, nil)
	}
	if err := a.Load.Prepare(ctx, inv); err != nil {
		return a.finish(StateFailed, "k6 did not start: "+err.Error(), -1, nil)
	}
	if err := a.update(ctx, map[string]string{KeyState: StateReady, KeyReadyAt: a.stamp()}, nil); err != nil {
		return err
	}
	if err := a.waitUntilStart(ctx); err != nil {
		code, _ := a.Load.Wait() // cancelling ctx stopped k6
		return a.finish(StateFailed, "stopped at the start barrier", code, nil)
	}
	cpu0, cpuErr := readCPU(a.CgroupDir)
	started := a.Now()
	if err := a.Load.Start(ctx); err != nil {
		code, _ := a.Load.Wait()
		return a.finish(StateFailed, "k6 could not be released: "+err.Error(), code, nil)
	}
	if err := a.update(ctx, map[string]string{KeyState: StateRunning, KeyLoadStartedAt: started.UTC().Format(time.RFC3339Nano)}, nil); err != nil {
		return err
	}
	stopProbe := a.startProbe(ctx, inv) // spec.faults: runner 0 measures failover (probe.go)
	liveCtx, endLive := context.WithCancel(ctx)
	var stopped atomic.Bool
	a.follow(liveCtx, a.publishInterval(inv), &stopped)
	code, waitErr := a.Load.Wait()
	endLive()
	stopProbe()
	cpu1, err := readCPU(a.CgroupDir)
	var usage *Usage // nil when the cgroup cannot be read: reported as unavailable, not as zero
	if cpuErr == nil && err == nil {
		usage = &Usage{CPUSeconds: (cpu1 - cpu0) / 1e6, WallSeconds: a.Now().Sub(started).Seconds(), MemoryPeakBytes: readMemoryPeak(a.CgroupDir)}
	}
	switch {
	case stopped.Load() && waitErr == nil:
		return a.finish(StateDone, "", code, usage) // stopped on request: what k6 wrote is kept (partial)
	case waitErr != nil:
		return a.finish(StateFailed, "k6 failed: "+waitErr.Error(), -1, usage)
	case code != 0:
		return a.finish(StateFailed, fmt.Sprintf("k6 exited with code %d", code), code, usage)
	}
	return a.finish(StateDone, "", 0, usage)
}

// waitUntilStart waits at the barrier, then until its startAt.
func (a *Agent) waitUntilStart(ctx context.Context) error {
	startAt, err := a.waitBarrier(ctx)
	if err != nil {
		return err
	}
	if d := startAt.Sub(a.Now()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// defaults fills unset fields.
func (a *Agent) defaults() {
	if a.K6 == "" {
		a.K6 = "k6"
	}
	if a.CgroupDir == "" {
		a.CgroupDir = "/sys/fs/cgroup"
	}
	if a.Poll <= 0 {
		a.Poll = 250 * time.Millisecond
	}
	if a.Now == nil {
		a.Now = time.Now
	}
	if a.ProgressFile == "" {
		a.ProgressFile = filepath.Join(filepath.Dir(a.ResultFile), "progress.json")
	}
	if a.Load == nil {
		a.Load = &k6Process{bin: a.K6, resultFile: a.ResultFile, progressFile: a.ProgressFile, address: "127.0.0.1:6565"}
	}
}

// stamp is the current time in RFC 3339 with nanoseconds.
func (a *Agent) stamp() string { return a.Now().UTC().Format(time.RFC3339Nano) }

// MaxBarrierBackoff bounds the delay between barrier reads when watching fails (or the
// client cannot watch): below the operator's 3 s start delay, so a runner still starts on time.
const MaxBarrierBackoff = time.Second

// barrierWatchTimeout bounds one barrier watch; a silently dead connection is replaced.
const barrierWatchTimeout = 5 * time.Minute

// waitBarrier waits until the operator sets startAt in the barrier ConfigMap: it reads the
// barrier, then watches that one object until it changes. A failed read or a broken watch
// is retried after a delay doubling from Poll up to MaxBarrierBackoff, so a thousand
// runners waiting cost a thousand idle watches, not thousands of GETs per second.
func (a *Agent) waitBarrier(ctx context.Context) (time.Time, error) {
	return a.waitBarrierKey(ctx, KeyStartAt)
}

// waitBarrierKey waits until the barrier holds a time under key (startAt, stopAt), the same way.
func (a *Agent) waitBarrierKey(ctx context.Context, key string) (time.Time, error) {
	delay := a.Poll
	for {
		if t, rv, ok := a.readBarrier(ctx, key); ok {
			return t, nil
		} else if wc, canWatch := a.Client.(client.WithWatch); canWatch && rv != "" {
			began := a.Now()
			if t, ok := a.watchBarrier(ctx, wc, rv, key); ok {
				return t, nil
			}
			if a.Now().Sub(began) > MaxBarrierBackoff {
				delay = a.Poll // a watch that lasted: not a failure
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, MaxBarrierBackoff)
	}
}

// readBarrier reads the barrier: the time under key when set (ok), else its resourceVersion
// ("" when the read failed).
func (a *Agent) readBarrier(ctx context.Context, key string) (time.Time, string, bool) {
	var b corev1.ConfigMap
	if err := a.Client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.BarrierName}, &b); err != nil {
		return time.Time{}, "", false
	}
	t, ok := barrierTime(&b, key)
	return t, b.ResourceVersion, ok
}

// barrierTime is the barrier's time under key (startAt, stopAt), ok when set.
func barrierTime(b *corev1.ConfigMap, key string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, b.Data[key])
	return t, err == nil
}

// watchBarrier watches the barrier from resourceVersion rv until startAt is set (ok), the
// watch ends, or ctx is cancelled.
func (a *Agent) watchBarrier(ctx context.Context, wc client.WithWatch, rv, key string) (time.Time, bool) {
	wctx, cancel := context.WithTimeout(ctx, barrierWatchTimeout)
	defer cancel()
	w, err := wc.Watch(wctx, &corev1.ConfigMapList{}, client.InNamespace(a.Namespace),
		client.MatchingFields{"metadata.name": a.BarrierName}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	if err != nil {
		return time.Time{}, false
	}
	defer w.Stop()
	// A release between the read and the watch is seen by the watch from rv; clients that do
	// not honour rv (test fakes) still see it here.
	if t, _, ok := a.readBarrier(ctx, key); ok {
		return t, true
	}
	for {
		var ev watch.Event
		select {
		case <-wctx.Done(): // not every watch implementation ends with its context
			return time.Time{}, false
		case e, open := <-w.ResultChan():
			if !open {
				return time.Time{}, false
			}
			ev = e
		}
		switch ev.Type {
		case watch.Error, watch.Deleted:
			return time.Time{}, false
		case watch.Added, watch.Modified:
			if b, isCM := ev.Object.(*corev1.ConfigMap); isCM && b.Name == a.BarrierName {
				if t, ok := barrierTime(b, key); ok {
					return t, true
				}
			}
		}
	}
}

// finish stores the result file (when k6 wrote one) in the result ConfigMap, then the final
// state (so a done state always finds its result stored). It uses a fresh context: on
// SIGTERM the run context is cancelled but the partial result must be kept.
func (a *Agent) finish(state, reason string, code int, usage *Usage) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data := map[string]string{KeyState: state, KeyFinishedAt: a.stamp(), KeyExitCode: strconv.Itoa(code)}
	if reason != "" {
		data[KeyReason] = reason
	}
	if usage != nil {
		b, _ := json.Marshal(usage)
		data[KeyUsage] = string(b)
	}
	if a.probeReport != "" {
		data[KeyFaultProbe] = a.probeReport
	}
	var binary map[string][]byte
	if doc, err := os.ReadFile(a.ResultFile); err == nil {
		gz, err := EncodeResult(doc)
		if err != nil {
			return err
		}
		if len(gz) > maxResultBytes {
			data[KeyState], data[KeyReason] = StateFailed, fmt.Sprintf("result document too large to store (%d bytes compressed)", len(gz))
		} else if a.ResultName == "" {
			binary = map[string][]byte{KeyResult: gz}
		} else if err := a.updateConfigMap(ctx, a.ResultName, nil, map[string][]byte{KeyResult: gz}); err != nil {
			data[KeyState], data[KeyReason] = StateFailed, "storing the result document: "+boundText(err.Error(), 512)
		} else {
			data[KeyResultBytes] = strconv.Itoa(len(gz))
		}
	} else if state == StateDone {
		data[KeyState], data[KeyReason] = StateFailed, "k6 wrote no result document"
	}
	if err := a.update(ctx, data, binary); err != nil {
		return err
	}
	if data[KeyState] != StateDone {
		return errors.New(data[KeyReason])
	}
	return nil
}

// updateBackoff retries state updates for about half a minute (API server hiccups must not
// lose a result document).
var updateBackoff = wait.Backoff{Steps: 10, Duration: 200 * time.Millisecond, Factor: 1.6, Jitter: 0.1}

// maxResultBytes keeps the state ConfigMap under the API server's 1 MiB object limit.
const maxResultBytes = 900 << 10

// update sets keys of the state ConfigMap, retrying on errors.
func (a *Agent) update(ctx context.Context, data map[string]string, binary map[string][]byte) error {
	return a.updateConfigMap(ctx, a.StateName, data, binary)
}

// updateConfigMap sets keys of one of the runner's ConfigMaps, retrying on errors.
func (a *Agent) updateConfigMap(ctx context.Context, name string, data map[string]string, binary map[string][]byte) error {
	return retry.OnError(updateBackoff, func(error) bool { return ctx.Err() == nil }, func() error {
		var cm corev1.ConfigMap
		if err := a.Client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, &cm); err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		for k, v := range data {
			cm.Data[k] = v
		}
		if len(binary) > 0 && cm.BinaryData == nil {
			cm.BinaryData = map[string][]byte{}
		}
		for k, v := range binary {
			cm.BinaryData[k] = v
		}
		return a.Client.Update(ctx, &cm)
	})
}

// readCPU reads the pod's CPU time in microseconds: usage_usec of the cgroup v2 cpu.stat, or
// on cgroup v1 nodes cpuacct.usage (nanoseconds) of the cpuacct hierarchy.
func readCPU(dir string) (float64, error) {
	f, err := os.Open(filepath.Join(dir, "cpu.stat"))
	if err == nil {
		defer func() { _ = f.Close() }()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "usage_usec "); ok {
				return strconv.ParseFloat(v, 64)
			}
		}
	}
	for _, sub := range []string{"cpuacct", "cpu,cpuacct"} {
		if ns, ok := readInt(filepath.Join(dir, sub, "cpuacct.usage")); ok {
			return float64(ns) / 1e3, nil
		}
	}
	return 0, errors.New("no cgroup CPU accounting (cpu.stat usage_usec or cpuacct.usage)")
}

// readMemoryPeak reads the pod's peak memory: cgroup v2 memory.peak, or cgroup v1
// memory.max_usage_in_bytes (0 when unavailable).
func readMemoryPeak(dir string) int64 {
	for _, p := range []string{"memory.peak", filepath.Join("memory", "memory.max_usage_in_bytes")} {
		if n, ok := readInt(filepath.Join(dir, p)); ok {
			return n
		}
	}
	return 0
}

// readInt reads a file holding one integer.
func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}
