package pause

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const testID = "0123456789abcdef0123456789abcdef"

// fakeProc is a proc root listing pid under the container testID's cgroup, plus pid 1 and
// another container's process.
func fakeProc(t *testing.T, pids ...int) string {
	t.Helper()
	root := t.TempDir()
	write := func(pid int, cg string) {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(1, "0::/../cri-containerd-"+testID+".scope\n") // never PID 1
	write(999999, "0::/../cri-containerd-fedcba9876543210.scope\n")
	for _, p := range pids {
		write(p, "0::/../cri-containerd-"+testID+".scope\n")
	}
	_ = os.MkdirAll(filepath.Join(root, "self"), 0o755)
	return root
}

// state is the process state letter of pid (T when stopped).
func state(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndex(s, ")")+1:])[0]
}

// TestPauseRealProcess: a real process of the container is stopped (state T) for the
// duration and continued after it; the report holds its pid and the times.
func TestPauseRealProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	root := fakeProc(t, pid)
	done := make(chan Report)
	go func() {
		rep, err := Run(context.Background(), root, testID, 600*time.Millisecond, Kill)
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	time.Sleep(300 * time.Millisecond)
	if s := state(t, pid); s != "T" {
		t.Errorf("state while paused: %s, want T", s)
	}
	rep := <-done
	if s := state(t, pid); s == "T" {
		t.Errorf("state after the pause: %s", s)
	}
	if len(rep.Pids) != 1 || rep.Pids[0] != pid {
		t.Errorf("pids: %v, want [%d]", rep.Pids, pid)
	}
	if d := time.Duration(rep.ResumedUnixMicro-rep.PausedUnixMicro) * time.Microsecond; d < 600*time.Millisecond || d > 2*time.Second {
		t.Errorf("paused for %v, want 600ms", d)
	}
	back, ok := ParseMessage(rep.Message())
	if !ok || back.PausedUnixMicro != rep.PausedUnixMicro || back.Pids[0] != pid {
		t.Errorf("termination message %q parsed as %+v %v", rep.Message(), back, ok)
	}
}

// TestPauseInterrupted: SIGTERM (ctx cancelled) continues the processes at once.
func TestPauseInterrupted(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, fakeProc(t, cmd.Process.Pid), testID, time.Minute, Kill)
	if err != nil || !rep.Interrupted || time.Since(start) > 5*time.Second {
		t.Fatalf("interrupted pause: %+v %v after %v", rep, err, time.Since(start))
	}
	if s := state(t, cmd.Process.Pid); s == "T" {
		t.Error("the process stayed stopped after an interrupted pause")
	}
}

// TestPauseSelection: only the container's processes, never PID 1 or self; a missing
// container or a malformed ID is an error; a failed SIGSTOP continues those already stopped.
func TestPauseSelection(t *testing.T) {
	root := fakeProc(t, 40, 41, os.Getpid())
	pids, err := ContainerPids(root, testID, os.Getpid())
	if err != nil || len(pids) != 2 || pids[0] != 40 || pids[1] != 41 {
		t.Fatalf("pids %v %v, want [40 41]", pids, err)
	}
	if _, err := ContainerPids(root, "../", 0); err == nil {
		t.Error("a malformed container ID was accepted")
	}
	var sent []string
	rec := func(pid int, sig syscall.Signal) error {
		sent = append(sent, strconv.Itoa(pid)+":"+sig.String())
		if pid == 41 && sig == syscall.SIGSTOP {
			return syscall.EPERM
		}
		return nil
	}
	if _, err := Run(context.Background(), root, testID, time.Second, rec); err == nil {
		t.Error("a refused SIGSTOP was not an error")
	}
	if got := strings.Join(sent, " "); got != "40:stopped (signal) 41:stopped (signal) 40:continued" {
		t.Errorf("signals: %s", got)
	}
	if _, err := Run(context.Background(), fakeProc(t), "ffffffffffffffff", time.Second, rec); err == nil || !strings.Contains(err.Error(), "no process") {
		t.Errorf("no process: %v", err)
	}
	if _, ok := ParseMessage("error: boom"); ok {
		t.Error("an error message parsed as a report")
	}
}
