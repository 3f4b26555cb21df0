package local

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/resp"
)

// TestFaultsSingleRedis: on a real redis-server, kill and restart stop the server and start
// it again on the same port (a new process), pause stops it (PING unanswered) for its duration
// and continues it; a role the target lacks is refused; nothing is left after Stop.
func TestFaultsSingleRedis(t *testing.T) {
	needRedis(t)
	marker := setMarker(t)
	tg, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisSingle}}, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := StartWithin(ctx, tg, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Stop() }()
	addr := tg.Endpoints()[0].Address
	pid := func() int { return tg.(*redisTarget).procs[0].Pid() }
	for _, action := range []v1alpha1.FaultAction{v1alpha1.FaultKill, v1alpha1.FaultRestart} {
		before := pid()
		res, err := ApplyFault(ctx, tg, action, v1alpha1.FaultRoleMaster, 0)
		if err != nil || !strings.Contains(res.Process, addr) {
			t.Fatalf("%s: %+v, %v", action, res, err)
		}
		if pid() == before {
			t.Errorf("%s: the same process still holds the role", action)
		}
		if err := waitPing(ctx, addr, 10*time.Second); err != nil {
			t.Fatalf("%s: the server did not come back on %s: %v", action, addr, err)
		}
	}
	res, err := ApplyFault(ctx, tg, v1alpha1.FaultPause, v1alpha1.FaultRoleMaster, 700*time.Millisecond)
	if err != nil || res.Paused.IsZero() || res.Resumed == nil {
		t.Fatalf("pause: %+v, %v", res, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	sent := time.Now()
	_, perr := resp.Do(cctx, addr, "", "PING")
	cancel()
	if waited := time.Since(sent); perr == nil && waited < 500*time.Millisecond {
		t.Errorf("a paused server answered PING in %s", waited)
	}
	resumed := <-res.Resumed
	if d := resumed.Sub(res.Paused); d < 700*time.Millisecond || d > 2*time.Second {
		t.Errorf("paused for %s, want 700ms", d)
	}
	if err := waitPing(ctx, addr, 5*time.Second); err != nil {
		t.Fatalf("after the pause: %v", err)
	}
	if _, err := ApplyFault(ctx, tg, v1alpha1.FaultKill, v1alpha1.FaultRoleSentinel, 0); err == nil || !strings.Contains(err.Error(), "no role sentinel") {
		t.Errorf("a sentinel fault on a single server: %v", err)
	}
	if err := tg.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// waitPing waits until addr answers PING.
func waitPing(ctx context.Context, addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err := resp.Do(cctx, addr, "", "PING")
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFaultsHAFollowMaster: in mode ha with FollowMaster, the master endpoint forwards to the
// master the sentinels report; the master role is that server, the replica role another one.
func TestFaultsHAFollowMaster(t *testing.T) {
	needRedis(t)
	tg, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Replicas: int32p(1), Sentinels: int32p(1)}},
		Options{TempDir: t.TempDir(), FollowMaster: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := StartWithin(ctx, tg, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Stop() }()
	rt := tg.(*redisTarget)
	ep := tg.Endpoints()[0]
	if ep.Role != "master" || ep.Address == rt.master {
		t.Fatalf("master endpoint %+v is not the follower", ep)
	}
	got, err := resp.Do(ctx, ep.Address, "", "INFO", "replication")
	if err != nil || !strings.Contains(got, "role:master") {
		t.Fatalf("through the follower: %q, %v", got, err)
	}
	slot, unlock, err := rt.faultSlot(ctx, v1alpha1.FaultRoleMaster)
	if err != nil {
		t.Fatal(err)
	}
	if (*slot).addr != rt.master {
		t.Errorf("master role: %s, want %s", (*slot).addr, rt.master)
	}
	unlock()
	slot, unlock, err = rt.faultSlot(ctx, v1alpha1.FaultRoleReplica)
	if err != nil {
		t.Fatal(err)
	}
	if (*slot).addr != rt.replicas[0] {
		t.Errorf("replica role: %s, want %s", (*slot).addr, rt.replicas[0])
	}
	unlock()
}

// TestFaultsCustomEcho: a kill of a custom target (the real echo server) starts the same
// command again on the same port, with the user's environment; the echo answers again.
func TestFaultsCustomEcho(t *testing.T) {
	bin := buildEchoServer(t)
	spec := &v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{
		Image: "benchrun.local/echo:dev", Command: []string{bin}, Args: []string{"-listen", "127.0.0.1:$(BENCHRUN_PORT_ECHO)"},
		Ports: []v1alpha1.CustomPort{{Name: "echo", Port: 7007}}, ReadinessProbe: &v1alpha1.CustomProbe{TCPSocket: &v1alpha1.ProbePort{}},
	}}
	tg, err := New(spec, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := StartWithin(ctx, tg, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Stop() }()
	ep := tg.Endpoints()[0].Address
	before := tg.(*customTarget).proc.Pid()
	if _, err := ApplyFault(ctx, tg, v1alpha1.FaultKill, v1alpha1.FaultRoleCustom, 0); err != nil {
		t.Fatal(err)
	}
	if tg.(*customTarget).proc.Pid() == before {
		t.Error("the killed process still holds the role")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", ep, time.Second)
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the echo server did not come back on %s: %v", ep, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	echoOnce(t, ep, "again")
}
