// Command manager runs the benchrun operator: the BenchmarkRun controller.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	benchv1alpha1 "github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/controllers"
	"github.com/benchrun/benchrun/internal/target"
)

func main() {
	var (
		metricsAddr   string
		probeAddr     string
		leaderElect   bool
		defaultImages controllers.Images
		redisRole     string
		kubelet       controllers.KubeletOptions
		kubeletUsage  bool
		watch         string
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to (0 disables it)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probe endpoint binds to")
	flag.BoolVar(&leaderElect, "leader-elect", false, "enable leader election so only one manager is active")
	flag.StringVar(&defaultImages.Runner, "runner-image", "benchrun.local/k6:dev", "default k6 runner image")
	flag.StringVar(&defaultImages.Redis, "redis-image", "benchrun.local/redis:dev", "default Redis image")
	flag.StringVar(&defaultImages.Valkey, "valkey-image", "benchrun.local/valkey:dev", "default Valkey image")
	flag.StringVar(&defaultImages.HeTu, "hetu-image", "benchrun.local/hetu-bench:dev", "default HeTu bench app image")
	flag.StringVar(&defaultImages.Proxy, "proxy-image", "benchrun.local/camellia-redis-proxy:dev", "default read/write-splitting proxy image")
	flag.StringVar(&redisRole, "redis-role-clusterrole", target.DefaultRedisRoleClusterRole,
		"ClusterRole (pods get/patch) bound to the redis-role sidecars in a run's namespace; the manager needs bind on it")
	flag.BoolVar(&kubeletUsage, "kubelet-metrics", true,
		"without metrics.k8s.io, read target and runner pods' CPU/memory from the kubelets' /metrics/resource (RBAC nodes/metrics get)")
	flag.StringVar(&kubelet.CAFile, "kubelet-certificate-authority", "",
		"CA file verifying the kubelets' serving certificates (default: the cluster CA)")
	flag.BoolVar(&kubelet.InsecureSkipTLSVerify, "kubelet-insecure-tls", false,
		"do not verify the kubelets' serving certificates (kubelets with self-signed certificates)")
	flag.StringVar(&watch, "watch-namespaces", "",
		"comma-separated namespaces the manager watches and acts in (a namespaced install with Roles); empty: all")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	cacheOpts, err := cacheOptions(watch)
	if err != nil {
		log.Error(err, "flags")
		os.Exit(1)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(benchv1alpha1.AddToScheme(scheme))

	restConfig := ctrl.GetConfigOrDie()
	var kubeletMetrics *controllers.KubeletMetrics
	if kubeletUsage {
		if kubeletMetrics, err = controllers.NewKubeletMetrics(restConfig, kubelet); err != nil {
			log.Error(err, "kubelet metrics client")
			os.Exit(1)
		}
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "benchrun-manager.bench.benchrun.io",
		Cache:                  cacheOpts,
	})
	if err != nil {
		log.Error(err, "unable to create manager")
		os.Exit(1)
	}
	if err := (&controllers.BenchmarkRunReconciler{
		Client:               mgr.GetClient(),
		APIReader:            mgr.GetAPIReader(),
		Scheme:               mgr.GetScheme(),
		Recorder:             mgr.GetEventRecorderFor("benchrun"),
		Images:               defaultImages,
		RedisRoleClusterRole: redisRole,
		Kubelet:              kubeletMetrics,
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "unable to create controller", "controller", "BenchmarkRun")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		log.Error(err, "unable to set up ready check")
		os.Exit(1)
	}
	log.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped with an error")
		os.Exit(1)
	}
}
