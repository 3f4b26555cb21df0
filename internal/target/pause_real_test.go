package target

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/pause"
	"github.com/benchrun/benchrun/internal/redistest"
	"github.com/benchrun/benchrun/internal/resp"
)

// needPodEmulation skips t unless pods can be emulated by mount namespaces here: as root,
// with unshare and mount.
func needPodEmulation(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (mount namespaces emulate the pods)")
	}
	for _, tool := range []string{"unshare", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
}

// TestPauseMasterRealSentinels: the builtin HA target's own scripts (master, 1 replica, 3
// sentinels; real redis-server processes, pod DNS names through /etc/hosts, see
// proxy_real_test.go) and a pause of the master's process by internal/pause (the pause
// container's code) for 8 s, longer than the sentinels' down-after (5 s): the sentinels
// promote the replica while the master is stopped, and the old master, continued, comes
// back as a replica of it.
func TestPauseMasterRealSentinels(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: real sentinels take 20 s")
	}
	bin := redistest.Bin(t)
	needPodEmulation(t)
	tg, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin,
		Replicas: ptr.To[int32](1), Sentinels: ptr.To[int32](3)}}, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	c := (&realEnv{redisServer: bin}).startServers(t, tg, "")
	ctx := context.Background()
	sentinel := c.addr["run-g1-redis-sentinel-0"]
	logFile := filepath.Join(c.dir, "run-g1-redis-sentinel-0", "log")
	last := ""
	defer func() {
		if t.Failed() {
			t.Log("last SENTINEL MASTER: ", last)
		}
	}()
	waitUntil(t, 30*time.Second, "the sentinel knows the replica and the 2 other sentinels", func() bool {
		got, err := resp.Do(ctx, sentinel, "", "SENTINEL", "MASTER", masterGroup)
		last = fmt.Sprintf("%q %v", got, err)
		return err == nil && strings.Contains(got, "num-slaves\n1\n") && strings.Contains(got, "num-other-sentinels\n2\n")
	}, logFile)
	info, err := resp.Do(ctx, c.addr["run-g1-redis-master-0"], "", "INFO", "server")
	if err != nil {
		t.Fatal(err)
	}
	pid := 0
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			pid, _ = strconv.Atoi(v)
		}
	}
	proc := t.TempDir() // the master's container: its one process
	if err := os.MkdirAll(filepath.Join(proc, strconv.Itoa(pid)), 0o755); err != nil || pid == 0 {
		t.Fatalf("master pid %d: %v", pid, err)
	}
	const id = "0123456789abcdef0123"
	if err := os.WriteFile(filepath.Join(proc, strconv.Itoa(pid), "cgroup"), []byte("0::/kubepods/pod1/"+id+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan pause.Report, 1)
	start := time.Now()
	go func() {
		rep, err := pause.Run(ctx, proc, id, 8*time.Second, func(p int, s syscall.Signal) error { return syscall.Kill(p, s) })
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	replicaHost := "run-g1-redis-replica-0.run-g1-redis-hl.ns.svc"
	waitUntil(t, 8*time.Second, "the sentinels promote the replica while the master is paused", func() bool {
		got, err := resp.Do(ctx, sentinel, "", "SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterGroup)
		return err == nil && strings.HasPrefix(got, replicaHost+"\n")
	}, logFile)
	promoted := time.Since(start)
	rep := <-done
	waitUntil(t, 20*time.Second, "the old master, continued, is a replica", func() bool {
		got, err := resp.Do(ctx, c.addr["run-g1-redis-master-0"], "", "ROLE")
		return err == nil && strings.HasPrefix(got, "slave\n")
	}, logFile)
	t.Logf("replica promoted %v after the SIGSTOP; paused %v", promoted.Round(time.Millisecond),
		time.Duration(rep.ResumedUnixMicro-rep.PausedUnixMicro)*time.Microsecond)
}
