package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/local"
)

// pingRun is a short run used to sweep after a killed one.
const pingRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-sweep
spec:
  target:
    redis: {mode: single}
  load:
    workers: 1
    tasksPerWorker: 1
    duration: 1s
    scenarios:
    - {name: ping, type: redis.ping}
`

// killedHeTuRun keeps a HeTu server (behind the unshare/sh/chroot wrapper) and its Redis back
// end busy long enough to be killed mid-run.
const killedHeTuRun = `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-killed-hetu
spec:
  target:
    hetu:
      workers: 2
      backend:
        redis: {mode: single}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 60s
    scenarios:
    - {name: hello_world, type: hetu.hello_world}
`

// TestKilledRunLeavesNothing: `benchrun run` killed by SIGKILL mid-run takes every child with
// it (redis-server, k6, and HeTu started through unshare + sh + chroot), and the next
// `benchrun run` removes the temporary directories it left, in TMPDIR and in the HeTu
// runtime's srv/.
func TestKilledRunLeavesNothing(t *testing.T) {
	needRedis(t)
	cases := []struct {
		name, run string
		children  []string // command names that must be running before the kill
	}{
		{"redis", fmt.Sprintf(redisRun, "60s"), []string{"redis-server", "k6"}},
		{"hetu", killedHeTuRun, []string{"redis-server", "k6", "hetu start", "unshare"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "hetu" {
				needHeTu(t)
			}
			tmp := t.TempDir() // TMPDIR of both runs
			env := []string{"TMPDIR=" + tmp}
			c := newCLI(t, env, "run", "-f", writeFile(t, "run.yaml", tc.run), "--runners", "2",
				"--out-dir", filepath.Join(t.TempDir(), "out"))
			done := c.startRunners(t, 2*time.Minute)
			time.Sleep(3 * time.Second) // k6 is loading the target
			pid := c.cmd.Process.Pid
			// The whole process tree (redis-server rewrites its environment with its title, so
			// leftovers cannot see it by the marker).
			tree := descendants(pid)
			var running []string
			for _, p := range tree {
				running = append(running, p.cmdline)
			}
			for _, want := range tc.children {
				if !strings.Contains(strings.Join(running, "\n"), want) {
					t.Fatalf("no %s running before the kill:\n%s\nstderr:\n%s", want, strings.Join(running, "\n"), c.stderr.String())
				}
			}
			// leftovers sees the servers as well (it checks every other CLI test).
			if seen := strings.Join(c.leftovers(t), "\n"); !strings.Contains(seen, "redis-server") || !strings.Contains(seen, "k6 run") {
				t.Fatalf("leftovers misses children before the kill:\n%s", seen)
			}
			if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var ee *exec.ExitError
			if err := <-done; !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("benchrun ended with %v, want killed by SIGKILL", err)
			}
			// The children get SIGKILL from the kernel when benchrun dies.
			if left := alive(tree, 5*time.Second); len(left) > 0 {
				t.Errorf("processes left after SIGKILL of benchrun:\n%s", strings.Join(left, "\n"))
			}
			if left := c.leftovers(t); len(left) > 0 {
				t.Errorf("processes left after SIGKILL of benchrun:\n%s", strings.Join(left, "\n"))
			}
			stale := staleDirs(t, tmp, pid)
			if len(stale) == 0 {
				t.Fatal("the killed run left no temporary directory: nothing to test")
			}
			t.Logf("left by the killed run: %v", stale)
			if srv := filepath.Join(local.DefaultHeTuRootfs(), "srv"); tc.name == "hetu" && !strings.Contains(strings.Join(stale, " "), srv) {
				t.Errorf("no HeTu app directory in %s among them", srv)
			}

			next := newCLI(t, env, "run", "-f", writeFile(t, "ping.yaml", pingRun), "--out-dir", filepath.Join(t.TempDir(), "out"))
			if code := next.run(t); code != 0 {
				t.Fatalf("next run: exit code %d", code)
			}
			if !strings.Contains(next.stderr.String(), "removed temporary directories left by killed runs") {
				t.Errorf("the next run did not report removing them")
			}
			for _, d := range stale {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s still there after the next run (%v)", d, err)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "benchrun-*")); len(left) > 0 {
				t.Errorf("temporary directories left in TMPDIR: %v", left)
			}
		})
	}
}

// staleDirs lists the temporary directories owned by pid: in tmp and in the HeTu runtime's srv/.
func staleDirs(t *testing.T, tmp string, pid int) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{filepath.Join(tmp, "benchrun-*"), filepath.Join(local.DefaultHeTuRootfs(), "srv", "benchrun-*")} {
		dirs, _ := filepath.Glob(pattern)
		for _, d := range dirs {
			b, err := os.ReadFile(filepath.Join(d, ".benchrun-owner"))
			if err == nil && strings.HasPrefix(string(b), strconv.Itoa(pid)+"\n") {
				out = append(out, d)
			}
		}
	}
	return out
}

// proc is a process seen in /proc: its start time tells it from a later one with its pid.
type proc struct {
	pid     int
	start   string
	cmdline string
}

// procStat returns the parent pid, state and start time of pid from /proc/PID/stat.
func procStat(pid int) (ppid int, state, start string, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", "", false
	}
	// pid (comm) state ppid ... starttime (field 22); comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if i < 0 || len(f) < 20 {
		return 0, "", "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0], f[19], true
}

// descendants lists every process below pid (in any PID namespace, as seen from here).
func descendants(pid int) []proc {
	children := map[int][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		p, _ := strconv.Atoi(filepath.Base(d))
		if ppid, _, _, ok := procStat(p); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []proc
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = append(queue[1:], children[p]...)
		if _, _, start, ok := procStat(p); ok {
			cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
			out = append(out, proc{pid: p, start: start, cmdline: strconv.Itoa(p) + " " + strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
		}
	}
	return out
}

// alive returns the processes of procs still running (not zombies) after waiting up to d.
func alive(procs []proc, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		var out []string
		for _, p := range procs {
			if _, state, start, ok := procStat(p.pid); ok && start == p.start && state != "Z" {
				out = append(out, p.cmdline)
			}
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}
