// Package pause stops the processes of one container of a pod for a while and continues
// them: the `benchrun-runner pause` ephemeral container that the manager adds to a target pod
// for a pause fault. The pod shares one process namespace (shareProcessNamespace), so the
// server is not PID 1 of its namespace (the kernel ignores SIGSTOP sent to a namespace's init
// from inside it) and every container, running as the same UID, may signal it without any
// capability. The resume is done by the pod itself: the manager only starts the pause.
package pause

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Report is what a pause did; the pause container writes it as its termination message.
type Report struct {
	// Pids are the processes stopped.
	Pids []int `json:"pids"`
	// PausedUnixMicro is when the first process was stopped.
	PausedUnixMicro int64 `json:"pausedUnixMicro"`
	// ResumedUnixMicro is when the last process was continued.
	ResumedUnixMicro int64 `json:"resumedUnixMicro"`
	// Interrupted tells that the pause ended early (SIGTERM: the pod is being deleted).
	Interrupted bool `json:"interrupted,omitempty"`
}

// ContainerPids are the processes under procRoot (normally /proc) whose cgroup names the
// container ID (the runtime's ID, without its containerd:// scheme), never PID 1 (the pod's
// pause process) nor self. A container's cgroup path holds its ID with containerd and
// CRI-O, cgroup v1 and v2, systemd and cgroupfs drivers alike.
func ContainerPids(procRoot, containerID string, self int) ([]int, error) {
	if len(containerID) < 12 || strings.ContainsAny(containerID, "/\n") {
		return nil, fmt.Errorf("container ID %q is not a runtime container ID", containerID)
	}
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == self {
			continue
		}
		cg, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "cgroup"))
		if err != nil {
			continue // exited meanwhile
		}
		if strings.Contains(string(cg), containerID) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// Signaler sends a signal to a process (syscall.Kill; tests may record instead).
type Signaler func(pid int, sig syscall.Signal) error

// Run stops the container's processes, waits d (or until ctx ends: the pod is going away),
// and continues them. Processes started between the first scan and the stop are caught by a
// second scan. It continues every process it stopped whatever happens after the stop.
func Run(ctx context.Context, procRoot, containerID string, d time.Duration, kill Signaler) (rep Report, err error) {
	self := os.Getpid()
	stopped := map[int]bool{}
	defer func() {
		for _, pid := range rep.Pids {
			_ = kill(pid, syscall.SIGCONT)
		}
		if len(rep.Pids) > 0 {
			rep.ResumedUnixMicro = time.Now().UnixMicro()
		}
	}()
	for scan := 0; scan < 2; scan++ {
		pids, lerr := ContainerPids(procRoot, containerID, self)
		if lerr != nil {
			return rep, lerr
		}
		for _, pid := range pids {
			if stopped[pid] {
				continue
			}
			if kerr := kill(pid, syscall.SIGSTOP); kerr != nil {
				if errors.Is(kerr, syscall.ESRCH) {
					continue // exited meanwhile
				}
				return rep, fmt.Errorf("SIGSTOP %d: %w", pid, kerr)
			}
			if rep.PausedUnixMicro == 0 {
				rep.PausedUnixMicro = time.Now().UnixMicro()
			}
			stopped[pid] = true
			rep.Pids = append(rep.Pids, pid)
		}
	}
	if len(rep.Pids) == 0 {
		return rep, fmt.Errorf("no process of container %s found in %s (does the pod share its process namespace?)", containerID, procRoot)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		rep.Interrupted = true
	}
	return rep, nil
}

// Kill is the real Signaler.
func Kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// Message is the report as a termination message (bounded: at most 4 KiB is kept by the
// kubelet, so at most 64 pids are listed).
func (r Report) Message() string {
	r.Pids = r.Pids[:min(len(r.Pids), 64)]
	b, _ := json.Marshal(r)
	return string(b)
}

// ParseMessage reads a termination message written by Message; false when it is not one.
func ParseMessage(msg string) (Report, bool) {
	var r Report
	if len(msg) > 8192 || json.Unmarshal([]byte(msg), &r) != nil || r.PausedUnixMicro <= 0 || r.ResumedUnixMicro < r.PausedUnixMicro {
		return Report{}, false
	}
	return r, true
}
