package main

import (
	"fmt"

	"github.com/benchrun/benchrun/internal/livemetrics"
	liveprogress "github.com/benchrun/benchrun/internal/progress"
)

// Remote-write failures in `benchrun run`: the k6 runners only log their first failed push (in
// runner-<i>.log); their progress documents carry the counts (progress.RemoteWrite), so once
// the load ended benchrun prints one warning on stderr when any push failed, as the operator
// sets the LiveMetrics condition.

// remoteWriteOn tells whether runner r pushes live metrics (its invocation has a remote-write URL).
func (r *runner) remoteWriteOn() bool { return r.inv.Env[livemetrics.EnvURL] != "" }

// warnRemoteWrite prints a warning when the runners' progress documents say pushes to the
// remote-write endpoint failed.
func (l *localRun) warnRemoteWrite() {
	var f liveprogress.RemoteWriteFailures
	for _, r := range l.runners {
		if !r.remoteWriteOn() {
			continue
		}
		if d, err := readProgress(r.progress); err == nil {
			f.AddRemoteWrite(d)
		}
	}
	if f.Failed == 0 {
		return
	}
	msg := fmt.Sprintf("benchrun: warning: %d pushes to the remote-write endpoint failed on %d runner(s): live metrics are incomplete (the results are not affected)", f.Failed, f.Runners)
	if f.LastError != "" {
		msg += "; last error: " + f.LastError
	}
	_, _ = fmt.Fprintln(l.stderr, msg)
}
