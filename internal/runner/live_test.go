package runner

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/progress"
	"github.com/benchrun/benchrun/internal/results"
)

// stoppableLoad stands for k6 running until Stop: it writes a progress document, then on
// Stop a partial result document, like k6 on SIGTERM.
type stoppableLoad struct {
	result, progress string
	stop             chan struct{}
}

// Prepare implements Load.
func (l *stoppableLoad) Prepare(context.Context, plan.Invocation) error { return nil }

// Start implements Load.
func (l *stoppableLoad) Start(context.Context) error {
	b, _ := progress.Encode(progress.Doc{Scenarios: []progress.Scenario{{Name: "get", Calls: 42, ElapsedSeconds: 1}}})
	return os.WriteFile(l.progress, b, 0o600)
}

// Stop implements Stopper.
func (l *stoppableLoad) Stop() error { close(l.stop); return nil }

// Wait implements Load.
func (l *stoppableLoad) Wait() (int, error) {
	select {
	case <-l.stop:
	case <-time.After(30 * time.Second):
		return 0, nil
	}
	doc, _ := results.NewDocument("runner-0")
	doc.Partial, doc.PartialReasons = true, []string{"runner-0: interrupted by a signal"}
	var b bytes.Buffer
	_ = results.Encode(&b, doc)
	_ = os.WriteFile(l.result, b.Bytes(), 0o600)
	return 105, nil
}

// TestAgentPublishesProgressAndStops: while the load runs the agent copies the progress file
// into its state ConfigMap; stopAt in the barrier stops the load, and the partial document
// is stored with state done.
func TestAgentPublishesProgressAndStops(t *testing.T) {
	c, a := setup(t, plan.Invocation{Script: "x.js"})
	a.ProgressInterval = 20 * time.Millisecond
	a.ProgressFile = a.ResultFile + ".progress"
	l := &stoppableLoad{result: a.ResultFile, progress: a.ProgressFile, stop: make(chan struct{})}
	a.Load = l
	go func() { _, _ = release(c, 10*time.Millisecond) }()
	errc := make(chan error, 1)
	go func() { errc <- a.Run(context.Background()) }()

	deadline := time.Now().Add(20 * time.Second)
	for state(t, c).Data[progress.Key] == "" {
		if time.Now().After(deadline) {
			t.Fatal("no progress published")
		}
		time.Sleep(10 * time.Millisecond)
	}
	d, err := progress.Decode(state(t, c).Data[progress.Key])
	if err != nil || d.Scenarios[0].Calls != 42 {
		t.Fatalf("published progress %+v %v", d, err)
	}
	var b corev1.ConfigMap
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "r-barrier"}, &b); err != nil {
		t.Fatal(err)
	}
	b.Data[KeyStop] = time.Now().UTC().Format(time.RFC3339Nano)
	if err := c.Update(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the load was not stopped")
	}
	cm := state(t, c)
	st := ParseState(cm, 0)
	if st.State != StateDone || !st.HasResult || cm.Data[KeyExitCode] != "105" {
		t.Fatalf("state %+v data %v", st, cm.Data)
	}
	if got, err := DecodeResult(cm); err != nil || !got.Partial {
		t.Fatalf("stored result %+v, %v", got, err)
	}
}

func TestPublishInterval(t *testing.T) {
	a := &Agent{}
	if got := a.publishInterval(plan.Invocation{Env: map[string]string{plan.EnvRunnerCount: "1024"}}); got != 51200*time.Millisecond {
		t.Fatalf("1,024 runners: %s", got)
	}
	if got := a.publishInterval(plan.Invocation{Env: map[string]string{plan.EnvRunnerCount: "garbage"}}); got != 5*time.Second {
		t.Fatalf("garbage: %s", got)
	}
}
