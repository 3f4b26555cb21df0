package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/progress"
)

// k6StatusPausedBeforeRun is k6's lib.ExecutionStatusPausedBeforeRun: VUs initialized,
// waiting for the release.
const k6StatusPausedBeforeRun = lifecycle.K6PausedBeforeRun

// k6Process runs `k6 run --paused --address ADDR --out benchrun=FILE args... script` and
// releases it with PATCH /v1/status on its REST API (loopback only).
type k6Process struct {
	bin, resultFile, address string
	progressFile             string
	cmd                      *exec.Cmd
	exited                   chan struct{}
	waitErr                  error
}

// Prepare implements Load: it starts k6 paused and waits until its VUs are initialized.
// Cancelling ctx sends k6 SIGTERM, so it stops gracefully and writes a partial document.
func (k *k6Process) Prepare(ctx context.Context, inv plan.Invocation) error {
	if err := os.MkdirAll(filepath.Dir(k.resultFile), 0o700); err != nil {
		return err
	}
	script, err := inv.Materialize(filepath.Join(filepath.Dir(k.resultFile), "scripts"))
	if err != nil {
		return err
	}
	k.cmd = exec.CommandContext(ctx, k.bin, lifecycle.K6Args(inv, true, k.address, k.resultFile, script)...)
	k.cmd.Cancel = func() error { return k.cmd.Process.Signal(syscall.SIGTERM) }
	k.cmd.WaitDelay = 45 * time.Second
	k.cmd.Stdout, k.cmd.Stderr = os.Stdout, os.Stderr
	k.cmd.Env = os.Environ()
	if k.progressFile != "" {
		k.cmd.Env = append(k.cmd.Env, progress.EnvFile+"="+k.progressFile)
	}
	for name, v := range inv.Env {
		k.cmd.Env = append(k.cmd.Env, name+"="+v)
	}
	if err := k.cmd.Start(); err != nil {
		return err
	}
	k.exited = make(chan struct{})
	go func() { k.waitErr = k.cmd.Wait(); close(k.exited) }()
	for {
		status, err := k.status(ctx)
		if err == nil && status == k6StatusPausedBeforeRun {
			return nil
		}
		select {
		case <-k.exited:
			if k.waitErr == nil {
				return errors.New("k6 exited during initialization")
			}
			return fmt.Errorf("k6 exited during initialization: %w", k.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// status reads k6's execution status (lifecycle.K6Status).
func (k *k6Process) status(ctx context.Context) (int, error) {
	return lifecycle.K6Status(ctx, k.address)
}

// Start implements Load: PATCH /v1/status {paused: false} (lifecycle.K6Resume).
func (k *k6Process) Start(ctx context.Context) error { return lifecycle.K6Resume(ctx, k.address) }

// Stop implements Stopper: SIGTERM, so k6 ends gracefully and writes a partial document.
func (k *k6Process) Stop() error {
	if k.cmd == nil || k.cmd.Process == nil {
		return errors.New("k6 not started")
	}
	return k.cmd.Process.Signal(syscall.SIGTERM)
}

// Wait implements Load.
func (k *k6Process) Wait() (int, error) {
	if k.exited == nil {
		return -1, errors.New("k6 not started")
	}
	<-k.exited
	var exit *exec.ExitError
	if errors.As(k.waitErr, &exit) {
		return exit.ExitCode(), nil
	}
	if k.waitErr != nil {
		return -1, k.waitErr
	}
	return 0, nil
}
