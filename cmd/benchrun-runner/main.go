// Command benchrun-runner is the agent in each k6 runner pod: it waits at the run's start
// barrier, runs k6 and stores the result document in its result ConfigMap (internal/runner).
// `benchrun-runner redis-role` is the sidecar that keeps a builtin Redis pod's role label
// current (internal/redisrole). `benchrun-runner wait-redis ADDR...` is an init container
// that waits until every Redis server a proxy routes to answers PING. `benchrun-runner pause
// --container-id ID --for D` is the ephemeral container of a pause fault (internal/pause).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/internal/redisrole"
	"github.com/benchrun/benchrun/internal/resp"
	"github.com/benchrun/benchrun/internal/runner"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "redis-role" {
		redisRole()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "pause" {
		pauseContainer(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "wait-redis" {
		waitRedis(os.Args[2:])
		return
	}
	var a runner.Agent
	var statePrefix, resultPrefix string
	flag.StringVar(&a.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the BenchmarkRun's namespace")
	flag.StringVar(&statePrefix, "state-prefix", "", "state ConfigMap name prefix; the Job completion index follows")
	flag.StringVar(&resultPrefix, "result-prefix", "", "result ConfigMap name prefix; the Job completion index follows (empty: store the result in the state ConfigMap, as older operators expect)")
	flag.StringVar(&a.BarrierName, "barrier", "", "start barrier ConfigMap name")
	flag.StringVar(&a.ResultFile, "result-file", runner.ResultFile, "where k6 writes the result document")
	flag.StringVar(&a.K6, "k6", "k6", "k6 binary")
	flag.Parse()
	index := os.Getenv("JOB_COMPLETION_INDEX")
	if statePrefix == "" || a.BarrierName == "" || index == "" {
		fmt.Fprintln(os.Stderr, "benchrun-runner: --state-prefix, --barrier and JOB_COMPLETION_INDEX are required")
		os.Exit(2)
	}
	a.StateName = statePrefix + index
	if resultPrefix != "" {
		a.ResultName = resultPrefix + index
	}

	c := newClient()
	a.Client = c
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := a.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun-runner:", err)
		os.Exit(1)
	}
}

// newClient is a Kubernetes client (with watch, for the barrier) for ConfigMaps and Pods with
// the pod's ServiceAccount.
func newClient() client.WithWatch {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	c, err := client.NewWithWatch(ctrl.GetConfigOrDie(), client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun-runner:", err)
		os.Exit(1)
	}
	return c
}

// redisRole runs the role-label sidecar until SIGTERM.
func redisRole() {
	f := redisrole.Follower{Namespace: os.Getenv("POD_NAMESPACE"), Pod: os.Getenv("POD_NAME"),
		Password: os.Getenv("REDIS_PASSWORD"), Logf: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }}
	if f.Namespace == "" || f.Pod == "" {
		fmt.Fprintln(os.Stderr, "benchrun-runner redis-role: POD_NAMESPACE and POD_NAME are required")
		os.Exit(2)
	}
	// the sentinel Service, asked REDIS_SENTINEL_ASKS times per check (its pods, spread)
	if addr := os.Getenv("REDIS_SENTINEL"); addr != "" {
		asks, err := strconv.Atoi(os.Getenv("REDIS_SENTINEL_ASKS"))
		if err != nil || asks < 1 || asks > 9 {
			asks = 3
		}
		f.Sentinels = slices.Repeat([]string{addr}, asks)
		f.Group, f.Self = os.Getenv("REDIS_MASTER_GROUP"), os.Getenv("REDIS_SELF")
		if f.Group == "" || f.Self == "" {
			fmt.Fprintln(os.Stderr, "benchrun-runner redis-role: REDIS_SENTINEL needs REDIS_MASTER_GROUP and REDIS_SELF")
			os.Exit(2)
		}
	}
	f.Client = newClient()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	_ = f.Run(ctx)
}

// waitRedis returns once every address answers PING (password from REDIS_PASSWORD), so the
// container after it starts with its upstreams up; it waits until SIGTERM (the run's
// targetReady timeout bounds it).
func waitRedis(addrs []string) {
	if len(addrs) == 0 {
		fmt.Fprintln(os.Stderr, "benchrun-runner wait-redis: no address given")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "benchrun-runner wait-redis: "+format+"\n", args...)
	}
	if err := resp.WaitPing(ctx, addrs, os.Getenv("REDIS_PASSWORD"), time.Second, logf); err != nil {
		logf("%v", err)
		os.Exit(1)
	}
	logf("all %d server(s) answer", len(addrs))
}
