// Package local runs a BenchmarkRun's target on this machine for `benchrun run`: Redis or
// Valkey servers (single, or HA with replicas and sentinels), the HeTu bench app and a custom
// target's command as child processes, or an external endpoint that is only checked.
// Everything listens on 127.0.0.1 on free ports; every process runs in its own process group and is stopped, and
// its temporary directory removed, by Stop (also after a failed or interrupted Start).
// When benchrun itself is killed, its children die with it (parent-death signal, Linux) and
// the next RemoveStale removes its temporary directories (each holds a lock while it lives).
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/target"
)

// Target is a benchmark target on this machine (target.LocalTarget: Start, Endpoints, Stop).
type Target = target.LocalTarget

// Options configure local targets.
type Options struct {
	// Secrets resolve the run's secret references (the run file's Secret objects).
	Secrets Secrets
	// Log receives one line per process started or stopped (never secret values).
	Log io.Writer
	// TempDir is where each target makes its temporary directory (default os.TempDir()).
	TempDir string
	// HeTuApp is the directory with the HeTu bench app (app.py, config.yml), e.g. examples/hetu-bench.
	HeTuApp string
	// ConfigMaps looks up the data of the run file's ConfigMaps by name (a HeTu target's app).
	ConfigMaps func(name string) (map[string]string, bool)
	// HeTuRootfs is the cached HeTu runtime root (default $BENCHRUN_CACHE or
	// ~/.cache/benchrun, then hetu-runtime/rootfs), built by hack/hetu-runtime.sh.
	HeTuRootfs string
	// FollowMaster makes a Redis target of mode ha give as its master endpoint a forwarder to
	// the master the sentinels report at each new connection (follow.go), as the cluster's master
	// Service follows the master pod: set when the run declares faults.
	FollowMaster bool
}

// ErrNotSupported is returned for targets the local runner cannot start yet.
var ErrNotSupported = errors.New("not supported locally yet")

// New returns the local target of a run's target spec (not started): its kind's
// target.KindInfo.Local, built by builder.
func New(spec *v1alpha1.TargetSpec, opts Options) (Target, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	k, err := target.KindOf(spec)
	if err != nil {
		return nil, errors.New("the run has no target (set spec.target.redis, hetu, external or custom)")
	}
	return k.Local(spec, builder{opts})
}

// builder implements target.LocalBuilder: one constructor per kind, in the kind's file here.
type builder struct{ opts Options }

// HeTu implements target.LocalBuilder.
func (b builder) HeTu(spec *v1alpha1.HeTuTarget) (Target, error) {
	return nilIfErr(newHeTu(spec, b.opts))
}

// Redis implements target.LocalBuilder.
func (b builder) Redis(spec *v1alpha1.RedisTarget) (Target, error) {
	return nilIfErr(newRedis(spec, b.opts))
}

// External implements target.LocalBuilder.
func (b builder) External(spec *v1alpha1.ExternalTarget) (Target, error) {
	return newExternal(spec), nil
}

// Custom implements target.LocalBuilder.
func (b builder) Custom(spec *v1alpha1.CustomTarget) (Target, error) {
	return nilIfErr(newCustom(spec, b.opts))
}

// nilIfErr returns a nil Target (not a typed nil) with err.
func nilIfErr[T Target](t T, err error) (Target, error) {
	if err != nil {
		return nil, err
	}
	return t, nil
}

// StartWithin starts t and fails with a clear error when it is not ready within timeout.
// On error, t has been stopped.
func StartWithin(ctx context.Context, t Target, timeout time.Duration) error {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := t.Start(cctx)
	if err != nil {
		_ = t.Stop()
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("target not ready within %s (spec.timeouts.targetReady): %w", timeout, err)
		}
		return err
	}
	return nil
}
