package progress

import (
	"errors"
	"fmt"
	"strings"

	"github.com/benchrun/benchrun/internal/livemetrics"
)

// RemoteWrite is what a runner's live-metrics pusher (Prometheus remote write) did so far:
// carried in its progress document so an endpoint that refuses or cannot be reached is
// reported where a user looks (a run condition and a Warning Event, `benchrun run`'s output),
// not only in runner logs that go with cleanup.
type RemoteWrite struct {
	// Sent counts pushes the endpoint accepted.
	Sent int64 `json:"sent"`
	// Failed counts pushes that failed (an error or a non-2xx answer).
	Failed int64 `json:"failed"`
	// LastError is the last failure, one line of at most livemetrics.MaxErrorBytes, without
	// the endpoint's credentials.
	LastError string `json:"lastError,omitempty"`
}

// RemoteWriteOf is the progress document's view of a pusher's stats.
func RemoteWriteOf(st livemetrics.Stats) *RemoteWrite {
	return &RemoteWrite{Sent: st.Sent, Failed: st.Failed, LastError: st.LastError}
}

// checkRemoteWrite refuses a remote-write entry no honest runner writes.
func checkRemoteWrite(rw *RemoteWrite) error {
	if rw == nil {
		return nil
	}
	if !count(rw.Sent) || !count(rw.Failed) {
		return errors.New("progress document has an invalid remote-write count")
	}
	if len(rw.LastError) > livemetrics.MaxErrorBytes || strings.ContainsAny(rw.LastError, "\n\r") {
		return fmt.Errorf("progress document's remote-write error is not one line of at most %d bytes", livemetrics.MaxErrorBytes)
	}
	return nil
}

// RemoteWriteFailures sums what the runners' documents say about remote write: failed pushes,
// how many runners had failures, and the last error of the last of those runners in docs' order.
type RemoteWriteFailures struct {
	// Failed is the failed pushes over all runners.
	Failed int64
	// Runners counts the runners with failures.
	Runners int
	// LastError is one runner's last error.
	LastError string
}

// AddRemoteWrite counts one runner's document into f.
func (f *RemoteWriteFailures) AddRemoteWrite(d Doc) {
	if d.RemoteWrite == nil || d.RemoteWrite.Failed == 0 {
		return
	}
	f.Failed += d.RemoteWrite.Failed
	f.Runners++
	if d.RemoteWrite.LastError != "" {
		f.LastError = d.RemoteWrite.LastError
	}
}
