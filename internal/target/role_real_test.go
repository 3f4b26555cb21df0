package target

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/redisrole"
	"github.com/benchrun/benchrun/internal/redistest"
	"github.com/benchrun/benchrun/internal/resp"
)

// roleTimeline samples both pods' role labels every 20 ms.
type roleTimeline struct {
	mu      sync.Mutex
	start   time.Time
	samples []roleSample
}

// roleSample is one sample: the master pod's and the replica pod's labels.
type roleSample struct {
	at              time.Duration
	master, replica string
}

// first is when cond first held at or after from (-1: never).
func (tl *roleTimeline) first(from time.Duration, cond func(roleSample) bool) time.Duration {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, s := range tl.samples {
		if s.at >= from && cond(s) {
			return s.at
		}
	}
	return -1
}

// startRoleEnv starts envtest's kube-apiserver with the two Redis pods of the target.
func startRoleEnv(t *testing.T) client.Client {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs a kube-apiserver: KUBEBUILDER_ASSETS not set")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}); err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]string{"run-g1-redis-master-0": "master", "run-g1-redis-replica-0": "replica"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{redisrole.Label: role}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: "redis:t"}}}}
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestRoleLabelsFollowPausedMaster: the redis-role sidecars' code (redisrole.Follower, its
// defaults) labels two pods in a real kube-apiserver (envtest) for the builtin HA target's
// real redis-server processes and 3 real sentinels (see TestPauseMasterRealSentinels). A 1 s
// SIGSTOP of the master (one slow reply, shorter than the sentinels' down-after) costs it
// nothing; an 8 s SIGSTOP takes the master label away before the sentinels promote the
// replica, the replica is labelled master right after the promotion, the two are never
// labelled master together, and the old master, continued, never regains the label.
func TestRoleLabelsFollowPausedMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: real sentinels take 30 s")
	}
	bin := redistest.Bin(t)
	needPodEmulation(t)
	kube := startRoleEnv(t)
	tg, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderBuiltin,
		Replicas: ptr.To[int32](1), Sentinels: ptr.To[int32](3)}}, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	c := (&realEnv{redisServer: bin}).startServers(t, tg, "")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	sentinels := []string{c.addr["run-g1-redis-sentinel-0"], c.addr["run-g1-redis-sentinel-1"], c.addr["run-g1-redis-sentinel-2"]}
	logFile := c.dir + "/run-g1-redis-sentinel-0/log"
	waitUntil(t, 30*time.Second, "the sentinel knows the replica and the 2 other sentinels", func() bool {
		got, err := resp.Do(ctx, sentinels[0], "", "SENTINEL", "MASTER", masterGroup)
		return err == nil && strings.Contains(got, "num-slaves\n1\n") && strings.Contains(got, "num-other-sentinels\n2\n")
	}, logFile)
	for _, pod := range []string{"run-g1-redis-master-0", "run-g1-redis-replica-0"} {
		f := &redisrole.Follower{Client: kube, Namespace: "ns", Pod: pod, Addr: c.addr[pod], Sentinels: sentinels,
			Group: masterGroup, Self: pod + ".run-g1-redis-hl.ns.svc", Logf: func(format string, args ...any) {
				t.Logf("%s: "+format, append([]any{pod}, args...)...)
			}}
		wg.Add(1)
		go func() { defer wg.Done(); _ = f.Run(ctx) }()
	}
	tl := &roleTimeline{start: time.Now()}
	wg.Add(1)
	go func() { defer wg.Done(); sampleRoles(ctx, kube, tl) }()
	pid := serverPID(t, c.addr["run-g1-redis-master-0"])
	at := func() time.Duration { return time.Since(tl.start) }

	// One slow reply: a 1 s stop, shorter than the sidecar's and the sentinels' limits.
	time.Sleep(2 * time.Second)
	shortFrom := at()
	stopFor(t, pid, time.Second)
	time.Sleep(3 * time.Second)
	if lost := tl.first(shortFrom, func(s roleSample) bool { return s.master != redisrole.Master }); lost >= 0 {
		t.Fatalf("the master lost its label at %v after a 1 s stop at %v", lost, shortFrom)
	}

	// A long stop: the sentinels fail over.
	stopAt := at()
	promotedc := make(chan time.Duration, 1)
	go func() {
		for ctx.Err() == nil {
			got, err := resp.Do(ctx, sentinels[0], "", "SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterGroup)
			if err == nil && strings.HasPrefix(got, "run-g1-redis-replica-0.") {
				promotedc <- at()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	stopFor(t, pid, 8*time.Second)
	var promoted time.Duration
	select {
	case promoted = <-promotedc:
	case <-time.After(10 * time.Second):
		t.Fatal("the sentinels did not promote the replica")
	}
	waitUntil(t, 20*time.Second, "the old master, continued, is a replica", func() bool {
		got, err := resp.Do(ctx, c.addr["run-g1-redis-master-0"], "", "ROLE")
		return err == nil && strings.HasPrefix(got, "slave\n")
	}, logFile)
	time.Sleep(2 * time.Second)
	end := at()
	checkFailoverLabels(t, tl, stopAt, promoted, end)
}

// checkFailoverLabels checks the timeline of the long stop and logs its times.
func checkFailoverLabels(t *testing.T, tl *roleTimeline, stopAt, promoted, end time.Duration) {
	t.Helper()
	dropped := tl.first(stopAt, func(s roleSample) bool { return s.master != redisrole.Master })
	labelled := tl.first(stopAt, func(s roleSample) bool { return s.replica == redisrole.Master })
	both := tl.first(stopAt, func(s roleSample) bool { return s.master == redisrole.Master && s.replica == redisrole.Master })
	regained := tl.first(dropped, func(s roleSample) bool { return s.master == redisrole.Master })
	demoted := tl.first(stopAt, func(s roleSample) bool { return s.master == redisrole.Replica })
	t.Logf("after the SIGSTOP: master label dropped at %v, sentinels promoted the replica at %v, replica labelled master at %v (%v after the promotion), old master labelled replica at %v",
		dropped-stopAt, promoted-stopAt, labelled-stopAt, labelled-promoted, demoted-stopAt)
	switch {
	case dropped < 0 || labelled < 0:
		t.Fatalf("dropped %v, labelled %v", dropped, labelled)
	case both >= 0:
		t.Errorf("both pods labelled master at %v", both-stopAt)
	case dropped-stopAt > redisrole.DefaultUnresponsive+2*redisrole.CheckTimeout:
		t.Errorf("the paused master kept its label %v", dropped-stopAt)
	case labelled-promoted > redisrole.DefaultInterval+redisrole.CheckTimeout+500*time.Millisecond:
		t.Errorf("the promoted replica was labelled %v after the promotion", labelled-promoted)
	case regained >= 0 && regained < end:
		t.Errorf("the old master regained the master label at %v", regained-stopAt)
	case demoted < 0:
		t.Error("the old master was never labelled replica")
	}
}

// sampleRoles appends both pods' labels to tl every 20 ms until ctx ends.
func sampleRoles(ctx context.Context, kube client.Client, tl *roleTimeline) {
	for ctx.Err() == nil {
		var m, r corev1.Pod
		if kube.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "run-g1-redis-master-0"}, &m) == nil &&
			kube.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "run-g1-redis-replica-0"}, &r) == nil {
			tl.mu.Lock()
			tl.samples = append(tl.samples, roleSample{at: time.Since(tl.start), master: m.Labels[redisrole.Label], replica: r.Labels[redisrole.Label]})
			tl.mu.Unlock()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serverPID is the process id a Redis server reports.
func serverPID(t *testing.T, addr string) int {
	t.Helper()
	info, err := resp.Do(context.Background(), addr, "", "INFO", "server")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			if pid, err := strconv.Atoi(v); err == nil && pid > 0 {
				return pid
			}
		}
	}
	t.Fatalf("no process_id in INFO server of %s", addr)
	return 0
}

// stopFor stops the process with SIGSTOP for d, then continues it.
func stopFor(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}
