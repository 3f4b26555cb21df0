package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
)

// setup is a fake API with runner 0's state ConfigMap and an unreleased barrier.
func setup(t *testing.T, inv plan.Invocation) (client.Client, *Agent) {
	t.Helper()
	js, err := EncodeInvocation(inv)
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r-runner-0"}, Data: map[string]string{KeyInvocation: js}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r-barrier"}},
	).Build()
	dir := t.TempDir()
	return c, &Agent{Client: c, Namespace: "ns", StateName: "r-runner-0", BarrierName: "r-barrier",
		ResultFile: filepath.Join(dir, "result.json"), CgroupDir: dir, Poll: 10 * time.Millisecond}
}

// state reads the runner's state ConfigMap.
func state(t *testing.T, c client.Client) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "r-runner-0"}, &cm); err != nil {
		t.Fatal(err)
	}
	return &cm
}

// stateOf reads the runner's state (empty when unreadable).
func stateOf(c client.Client) string {
	var cm corev1.ConfigMap
	_ = c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "r-runner-0"}, &cm)
	return cm.Data[KeyState]
}

// release sets the barrier's startAt once the runner is ready.
func release(c client.Client, delay time.Duration) (time.Time, error) {
	for deadline := time.Now().Add(60 * time.Second); stateOf(c) != StateReady; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return time.Time{}, errors.New("runner never ready")
		}
	}
	var b corev1.ConfigMap
	_ = c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "r-barrier"}, &b)
	startAt := time.Now().Add(delay)
	b.Data = map[string]string{KeyStartAt: startAt.UTC().Format(time.RFC3339Nano)}
	return startAt, c.Update(context.Background(), &b)
}

// scriptedLoad is a Load that writes doc (when set) and exits with code.
type scriptedLoad struct {
	path    string
	doc     *results.Document
	code    int
	started bool
}

// Prepare implements Load.
func (l *scriptedLoad) Prepare(context.Context, plan.Invocation) error { return nil }

// Start implements Load.
func (l *scriptedLoad) Start(context.Context) error { l.started = true; return nil }

// Wait implements Load: the document is written whether or not k6 was released.
func (l *scriptedLoad) Wait() (int, error) {
	if l.doc != nil {
		var b bytes.Buffer
		_ = results.Encode(&b, l.doc)
		_ = os.WriteFile(l.path, b.Bytes(), 0o600)
	}
	if !l.started {
		return -1, nil
	}
	return l.code, nil
}

func TestAgentK6FailsKeepsPartialResult(t *testing.T) {
	c, a := setup(t, plan.Invocation{Script: "x.js"})
	doc, _ := results.NewDocument("runner-0")
	doc.Partial, doc.PartialReasons = true, []string{"runner-0: interrupted"}
	a.Load = &scriptedLoad{path: a.ResultFile, doc: doc, code: 99}
	go func() { _, _ = release(c, 20*time.Millisecond) }()
	err := a.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "code 99") {
		t.Fatalf("err %v", err)
	}
	cm := state(t, c)
	st := ParseState(cm, 0)
	if st.State != StateFailed || !st.HasResult || st.LoadStartedAt.IsZero() || cm.Data[KeyExitCode] != "99" {
		t.Fatalf("state %+v data %v", st, cm.Data)
	}
	got, err := DecodeResult(cm)
	if err != nil || !got.Partial {
		t.Fatalf("stored result %+v, %v", got, err)
	}
}

func TestAgentStoppedAtBarrier(t *testing.T) {
	c, a := setup(t, plan.Invocation{Script: "x.js"})
	a.Load = &scriptedLoad{path: a.ResultFile}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for stateOf(c) != StateReady {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	if err := a.Run(ctx); err == nil {
		t.Fatal("no error")
	}
	if st := ParseState(state(t, c), 0); st.State != StateFailed || !strings.Contains(st.Reason, "barrier") || !st.LoadStartedAt.IsZero() {
		t.Fatalf("state %+v", st)
	}
	// A second start of the pod does not run the load again.
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestAgentInvalidInvocation(t *testing.T) {
	c, a := setup(t, plan.Invocation{})
	cm := state(t, c)
	cm.Data[KeyInvocation] = "{"
	_ = c.Update(context.Background(), cm)
	if err := a.Run(context.Background()); err == nil {
		t.Fatal("no error")
	}
	if st := ParseState(state(t, c), 0); st.State != StateFailed {
		t.Fatalf("state %+v", st)
	}
}

// TestAgentRealK6 runs the repository's k6 build (bin/k6, skipped when not built): k6
// starts paused, is released at the barrier's start time and its document is stored.
func TestAgentRealK6(t *testing.T) {
	bin, _ := filepath.Abs("../../bin/k6")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/k6 not built")
	}
	script := filepath.Join(t.TempDir(), "t.js")
	if err := os.WriteFile(script, []byte("export const options = { vus: 2, duration: '1s' };\nexport default function () {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, a := setup(t, plan.Invocation{Script: script, Args: []string{"--quiet"}, Env: map[string]string{"BENCHRUN_RUNNER": "runner-0"}})
	a.K6 = bin
	a.Load = &k6Process{bin: bin, resultFile: a.ResultFile, address: "127.0.0.1:16565"}
	startAtCh := make(chan time.Time, 1)
	go func() {
		startAt, err := release(c, 300*time.Millisecond)
		if err != nil {
			t.Error(err)
		}
		startAtCh <- startAt
	}()
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	startAt := <-startAtCh
	cm := state(t, c)
	st := ParseState(cm, 0)
	if st.State != StateDone || !st.HasResult || st.LoadStartedAt.Before(startAt.Add(-time.Millisecond)) {
		t.Fatalf("state %+v (startAt %s)", st, startAt)
	}
	if _, err := DecodeResult(cm); err != nil {
		t.Fatal(err)
	}
}

// TestCgroupReadings reads CPU and peak memory from cgroup v2 and cgroup v1 layouts, and
// reports nothing (not zero) when neither is there.
func TestCgroupReadings(t *testing.T) {
	write := func(dir, name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v2 := t.TempDir()
	write(v2, "cpu.stat", "usage_usec 2500000\nuser_usec 2000000\n")
	write(v2, "memory.peak", "104857600\n")
	if cpu, err := readCPU(v2); err != nil || cpu != 2.5e6 {
		t.Errorf("v2 cpu: %v %v", cpu, err)
	}
	if m := readMemoryPeak(v2); m != 100<<20 {
		t.Errorf("v2 memory: %d", m)
	}
	v1 := t.TempDir()
	write(v1, "cpu,cpuacct/cpuacct.usage", "3000000000\n")
	write(v1, "memory/memory.max_usage_in_bytes", "52428800\n")
	if cpu, err := readCPU(v1); err != nil || cpu != 3e6 {
		t.Errorf("v1 cpu: %v %v", cpu, err)
	}
	if m := readMemoryPeak(v1); m != 50<<20 {
		t.Errorf("v1 memory: %d", m)
	}
	if _, err := readCPU(t.TempDir()); err == nil {
		t.Error("CPU read from an empty directory")
	}
}
