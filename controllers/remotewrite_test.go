package controllers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/progress"
	"github.com/benchrun/benchrun/internal/runner"
)

// withRemoteWrite is a progress document with the pusher's counts added.
func withRemoteWrite(t *testing.T, doc string, rw progress.RemoteWrite) string {
	t.Helper()
	d, err := progress.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	d.RemoteWrite = &rw
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRemoteWriteFailingCondition (envtest): runners whose progress documents say pushes to
// the remote-write endpoint failed make LiveMetrics False with reason RemoteWriteFailing (the
// failures summed over runners, one runner's last error, no more), with a Warning Event; the
// run itself goes on and succeeds. Runners whose pushes all succeeded set nothing; a document
// whose error is not one bounded line is refused (and counted as ignored).
func TestRemoteWriteFailingCondition(t *testing.T) {
	e := newEnv(t)
	run := e.startedRun(e.redisRun("rw-failing", 3))
	state := func(i int, p string) {
		e.setRunnerState(run, i, map[string]string{runner.KeyState: runner.StateRunning,
			runner.KeyLoadStartedAt: e.clock.Now().Format(time.RFC3339Nano), progress.Key: p}, nil)
	}
	state(0, withRemoteWrite(t, progressDoc(t, run, 500), progress.RemoteWrite{Sent: 12}))
	e.clock.Step(10 * time.Second)
	e.reconcile(run.Name)
	if c := apimeta.FindStatusCondition(e.get(run.Name).Status.Conditions, v1alpha1.ConditionLiveMetrics); c != nil {
		t.Fatalf("LiveMetrics condition with no failed push: %+v", c)
	}
	const refused = "dial tcp 127.0.0.1:1: connect: connection refused"
	state(1, withRemoteWrite(t, progressDoc(t, run, 500), progress.RemoteWrite{Failed: 4, LastError: refused}))
	state(2, withRemoteWrite(t, progressDoc(t, run, 500), progress.RemoteWrite{Failed: 3, LastError: refused}))
	e.clock.Step(10 * time.Second)
	e.reconcile(run.Name)
	got := e.get(run.Name)
	c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionLiveMetrics)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRemoteWriteFailing ||
		!strings.HasPrefix(c.Message, "7 pushes to the remote-write endpoint failed on 2 runner(s)") || !strings.HasSuffix(c.Message, "last error: "+refused) {
		t.Fatalf("LiveMetrics condition: %+v", c)
	}
	e.drainEvents()
	if !strings.Contains(strings.Join(e.events, "\n"), "Warning "+v1alpha1.ConditionLiveMetrics+v1alpha1.ReasonRemoteWriteFailing+" 7 pushes") {
		t.Errorf("no Warning Event: %v", e.events)
	}
	if got.Status.Phase != v1alpha1.PhaseRunning {
		t.Errorf("phase %s: remote-write failures must not stop the load", got.Status.Phase)
	}
	state(2, withRemoteWrite(t, progressDoc(t, run, 500), progress.RemoteWrite{Failed: 3, LastError: "two\nlines"}))
	e.clock.Step(10 * time.Second)
	e.reconcile(run.Name)
	if l := e.get(run.Name).Status.Live; l == nil || l.Ignored != 1 {
		t.Errorf("a multi-line remote-write error was not refused: %+v", l)
	}
	for i := range 3 {
		e.finishRunner(run, i, 100)
	}
	e.until(run.Name, v1alpha1.PhaseSucceeded)
}
