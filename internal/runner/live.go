package runner

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/progress"
)

// Live progress and early stop (abortOnFail).
//
// While k6 runs, benchrun's k6 output rewrites the live progress document (internal/progress)
// in ProgressFile; the agent copies it into its state ConfigMap under progress.Key every
// progress.PublishInterval(runner count) (max(5s, n/20 s): 1,024 runners write about 20
// updates per second in all), only when it changed. The manager merges the runners' documents,
// shows live calls/s in status and evaluates abortOnFail thresholds; when one breaks it writes
// KeyStop into the barrier ConfigMap, which the agent watches like startAt: it then stops k6
// gracefully (SIGTERM: k6 ends its iterations and writes a partial document), stores what k6
// wrote and reports done.

// KeyStop in the barrier ConfigMap asks every runner to stop the load early (RFC 3339 time of
// the request, written by the operator when an abortOnFail threshold broke live).
const KeyStop = "stopAt"

// Stopper is a Load that can be stopped gracefully before its end.
type Stopper interface {
	// Stop asks the load to end now, writing what it recorded.
	Stop() error
}

// publishInterval is the agent's progress publish interval for its invocation.
func (a *Agent) publishInterval(inv plan.Invocation) time.Duration {
	if a.ProgressInterval > 0 {
		return a.ProgressInterval
	}
	n, err := strconv.Atoi(inv.Env[plan.EnvRunnerCount])
	if err != nil || n < 1 {
		n = 1
	}
	return progress.PublishInterval(n)
}

// follow publishes the progress and watches for a stop request until ctx ends; stopped is
// set when the load was stopped on request.
func (a *Agent) follow(ctx context.Context, interval time.Duration, stopped *atomic.Bool) {
	go a.publishProgress(ctx, interval)
	go func() {
		if _, err := a.waitBarrierKey(ctx, KeyStop); err != nil {
			return // the load ended first
		}
		if s, ok := a.Load.(Stopper); ok {
			stopped.Store(true)
			_ = s.Stop()
		}
	}()
}

// publishProgress copies the progress file into the state ConfigMap every interval when it
// changed; errors are skipped (the next interval retries, the result document is what counts).
func (a *Agent) publishProgress(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last []byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b, err := readBounded(a.ProgressFile, progress.MaxBytes)
		if err != nil || bytes.Equal(b, last) {
			continue
		}
		if _, err := progress.Decode(string(b)); err != nil {
			continue
		}
		if a.publishOnce(ctx, string(b)) == nil {
			last = b
		}
	}
}

// publishOnce writes the progress key with one read-modify-write (no retries: the next
// interval publishes a newer document anyway).
func (a *Agent) publishOnce(ctx context.Context, doc string) error {
	var cm corev1.ConfigMap
	if err := a.Client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.StateName}, &cm); err != nil {
		return err
	}
	if s := cm.Data[KeyState]; s != StateRunning {
		return nil // finished meanwhile: never touch a final state
	}
	cm.Data[progress.Key] = doc
	return a.Client.Update(ctx, &cm)
}

// readBounded reads at most max bytes of a file; a larger file is an error.
func readBounded(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err == nil && len(b) > max {
		err = io.ErrShortBuffer
	}
	return b, err
}
