// Command manager runs the benchrun operator: the BenchmarkRun controller.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	benchv1alpha1 "github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/controllers"
	"github.com/benchrun/benchrun/internal/livemetrics"
	"github.com/benchrun/benchrun/internal/target"
	"github.com/benchrun/benchrun/internal/usage"
)

// managerFlags are the manager's command-line options.
type managerFlags struct {
	metricsAddr   string
	metricsSecure bool
	probeAddr     string
	leaderElect   bool
	defaultImages controllers.Images
	redisRole     string
	kubelet       usage.KubeletOptions
	kubeletUsage  bool
	kubeletSA     string
	watch         string
	concurrency   int
	poolNamespace string
	historyRuns   int
	remoteWrite   string
	netpol        bool
	netpolCIDRs   string
	zap           zap.Options
}

// parseManagerFlags reads the command line.
func parseManagerFlags() *managerFlags {
	f := &managerFlags{}
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to (0 disables it)")
	flag.BoolVar(&f.metricsSecure, "metrics-secure", false,
		"serve metrics over HTTPS (self-signed certificate) to clients authenticated by TokenReview and authorized by SubjectAccessReview (get /metrics); RBAC: tokenreviews and subjectaccessreviews create")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address the health probe endpoint binds to")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "enable leader election so only one manager is active")
	flag.StringVar(&f.defaultImages.Runner, "runner-image", "benchrun.local/k6:dev", "default k6 runner image")
	flag.StringVar(&f.defaultImages.Redis, "redis-image", "benchrun.local/redis:dev", "default Redis image")
	flag.StringVar(&f.defaultImages.Valkey, "valkey-image", "benchrun.local/valkey:dev", "default Valkey image")
	flag.StringVar(&f.defaultImages.HeTu, "hetu-image", "benchrun.local/hetu-bench:dev", "default HeTu bench app image")
	flag.StringVar(&f.defaultImages.Proxy, "proxy-image", "benchrun.local/camellia-redis-proxy:dev", "default read/write-splitting proxy image")
	flag.StringVar(&f.redisRole, "redis-role-clusterrole", target.DefaultRedisRoleClusterRole,
		"ClusterRole (pods patch, narrowed by the redis-role admission policy) bound to the redis-role sidecars in a run's namespace; the manager needs bind on it")
	flag.BoolVar(&f.kubeletUsage, "kubelet-metrics", true,
		"without metrics.k8s.io, read target and runner pods' CPU/memory from the kubelets' /metrics/resource (RBAC nodes/metrics get, for the --kubelet-service-account)")
	flag.StringVar(&f.kubelet.CAFile, "kubelet-certificate-authority", "",
		"CA file verifying the kubelets' serving certificates (default: the cluster CA)")
	flag.BoolVar(&f.kubelet.InsecureSkipTLSVerify, "kubelet-insecure-tls", false,
		"do not verify the kubelets' serving certificates (kubelets with self-signed certificates). Risk: whoever answers at a Node's reported address gets the kubelet reader's token and can report false usage")
	flag.StringVar(&f.kubeletSA, "kubelet-service-account", "",
		"namespace/name of the ServiceAccount whose short-lived tokens (TokenRequest; RBAC serviceaccounts/token create on it) read the kubelets, so the manager's own token is never sent to them; empty: the manager's own credentials")
	flag.StringVar(&f.watch, "watch-namespaces", "",
		"comma-separated namespaces the manager watches and acts in (a namespaced install with Roles); empty: all")
	flag.IntVar(&f.concurrency, "max-concurrent-reconciles", 4, "BenchmarkRuns reconciled in parallel")
	flag.StringVar(&f.poolNamespace, "pool-namespace", "",
		"namespace holding the locks of load pools (spec.load.runners.pool), making pools cluster-wide across the watched namespaces; empty: a pool is per namespace")
	flag.IntVar(&f.historyRuns, "history-runs-per-namespace", controllers.DefaultHistoryRunsPerNamespace,
		"finished runs per namespace exported as benchrun_run_* metrics (older ones' series are dropped)")
	flag.StringVar(&f.remoteWrite, "prometheus-remote-write-url", "",
		"Prometheus remote-write URL runners stream live metrics to when a run sets no spec.collect.prometheusRemoteWriteURL (empty: none)")
	flag.BoolVar(&f.netpol, "network-policies", false,
		"create each run's NetworkPolicies: runners reach only the run's pods, DNS, the API server and the remote-write endpoint; target pods accept only the run's pods (needs a network plugin that enforces NetworkPolicy)")
	flag.StringVar(&f.netpolCIDRs, "network-policy-apiserver-cidrs", "",
		"comma-separated CIDRs of the API server's endpoints for --network-policies (empty: read from the kubernetes Service's EndpointSlices)")
	f.zap.BindFlags(flag.CommandLine)
	flag.Parse()
	return f
}

func main() {
	f := parseManagerFlags()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
	log := ctrl.Log.WithName("setup")
	if err := run(f); err != nil {
		log.Error(err, "manager")
		os.Exit(1)
	}
}

// run builds the manager and the BenchmarkRun controller and runs them until a signal.
func run(f *managerFlags) error {
	log := ctrl.Log.WithName("setup")
	cacheOpts, err := cacheOptions(f.watch)
	if err != nil {
		return fmt.Errorf("flags: %w", err)
	}
	if f.remoteWrite != "" {
		if err := livemetrics.CheckURL(f.remoteWrite); err != nil {
			return fmt.Errorf("flags: --prometheus-remote-write-url: %w", err)
		}
	}
	if errs := validation.IsDNS1123Label(f.poolNamespace); f.poolNamespace != "" && len(errs) > 0 {
		return fmt.Errorf("flags: --pool-namespace %q is not a namespace name: %s", f.poolNamespace, errs[0])
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(benchv1alpha1.AddToScheme(scheme))

	restConfig := ctrl.GetConfigOrDie()
	metricsOpts := metricsserver.Options{BindAddress: f.metricsAddr}
	if f.metricsSecure { // as the kubebuilder scaffold: HTTPS, TokenReview + SubjectAccessReview
		metricsOpts.SecureServing = true
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsOpts,
		HealthProbeBindAddress: f.probeAddr,
		LeaderElection:         f.leaderElect,
		LeaderElectionID:       "benchrun-manager.bench.benchrun.io",
		Cache:                  cacheOpts,
	})
	if err != nil {
		return fmt.Errorf("unable to create manager: %w", err)
	}
	var kubeletMetrics *usage.KubeletMetrics
	if f.kubeletUsage {
		if kubeletMetrics, err = newKubeletMetrics(restConfig, mgr.GetClient(), f); err != nil {
			return fmt.Errorf("kubelet metrics client: %w", err)
		}
	}
	netpol, err := f.networkPolicies()
	if err != nil {
		return err
	}
	if err := (&controllers.BenchmarkRunReconciler{
		Client:               mgr.GetClient(),
		APIReader:            mgr.GetAPIReader(),
		Scheme:               mgr.GetScheme(),
		Recorder:             mgr.GetEventRecorderFor("benchrun"),
		Images:               f.defaultImages,
		RedisRoleClusterRole: f.redisRole,
		Kubelet:              kubeletMetrics,
		MaxConcurrent:        f.concurrency,
		PoolNamespace:        f.poolNamespace,
		History:              controllers.NewHistory(ctrlmetrics.Registry, f.historyRuns),
		RemoteWriteURL:       f.remoteWrite,
		NetworkPolicies:      netpol,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("unable to create controller BenchmarkRun: %w", err)
	}
	if err := setupSuites(mgr, restConfig, cacheOpts); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("unable to set up health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("unable to set up ready check: %w", err)
	}
	log.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		return fmt.Errorf("manager stopped with an error: %w", err)
	}
	return nil
}

// newKubeletMetrics is the kubelet client; with --kubelet-service-account it sends only that
// account's short-lived tokens, requested through c.
func newKubeletMetrics(cfg *rest.Config, c client.Client, f *managerFlags) (*usage.KubeletMetrics, error) {
	opts := f.kubelet
	if f.kubeletSA != "" {
		ns, name, ok := strings.Cut(f.kubeletSA, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return nil, fmt.Errorf("flags: --kubelet-service-account %q: want namespace/name, e.g. benchrun-system/benchrun-kubelet-reader", f.kubeletSA)
		}
		opts.Tokens = &usage.ServiceAccountTokens{Client: c, Namespace: ns, Name: name}
	} else {
		ctrl.Log.WithName("setup").Info("no --kubelet-service-account: the kubelets are read with the manager's own credentials")
	}
	return usage.NewKubeletMetrics(cfg, opts)
}

// networkPolicies is the per-run NetworkPolicy configuration (nil: off).
func (f *managerFlags) networkPolicies() (*controllers.NetworkPolicyConfig, error) {
	if !f.netpol {
		return nil, nil
	}
	var cidrs []string
	for _, c := range strings.Split(f.netpolCIDRs, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if _, _, err := net.ParseCIDR(c); err != nil {
			return nil, fmt.Errorf("--network-policy-apiserver-cidrs: %q is not a CIDR (e.g. 10.0.0.10/32): %w", c, err)
		}
		cidrs = append(cidrs, c)
	}
	return &controllers.NetworkPolicyConfig{APIServerCIDRs: cidrs}, nil
}

// setupSuites starts the BenchmarkSuite controller when the cluster serves its CRD and the
// manager may list and watch suites where it watches runs. A manager of this version under an
// older chart (no suite CRD, or RBAC without suites: the CRD outlives a helm uninstall) runs
// BenchmarkRuns and says that suites are off, instead of crash-looping on a cache it cannot
// fill; the manager restarted by `helm upgrade` picks them up.
func setupSuites(mgr ctrl.Manager, cfg *rest.Config, cacheOpts cache.Options) error {
	log := ctrl.Log.WithName("setup")
	gk := schema.GroupKind{Group: benchv1alpha1.GroupVersion.Group, Kind: "BenchmarkSuite"}
	if _, err := mgr.GetRESTMapper().RESTMapping(gk, benchv1alpha1.GroupVersion.Version); err != nil {
		if meta.IsNoMatchError(err) {
			log.Info("the BenchmarkSuite CRD is not installed: suites are off until the manager restarts with it (helm upgrade installs it)")
			return nil
		}
		return fmt.Errorf("looking up the BenchmarkSuite CRD: %w", err)
	}
	if denied, err := suitesDenied(cfg, cacheOpts); err != nil {
		return err
	} else if denied != "" {
		log.Info("the manager may not " + denied + " BenchmarkSuites (RBAC of an older chart?): suites are off until the manager restarts with the rights (helm upgrade grants them)")
		return nil
	}
	if err := (&controllers.BenchmarkSuiteReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorderFor("benchrun-suite"),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("unable to create controller BenchmarkSuite: %w", err)
	}
	return nil
}

// suitesDenied asks the API server (SelfSubjectAccessReview) whether the manager may list and
// watch BenchmarkSuites in every namespace it watches (all namespaces without
// --watch-namespaces); it returns the first verb and namespace refused ("" when none).
func suitesDenied(cfg *rest.Config, cacheOpts cache.Options) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	namespaces := []string{""}
	if len(cacheOpts.DefaultNamespaces) > 0 {
		namespaces = slices.Sorted(maps.Keys(cacheOpts.DefaultNamespaces))
	}
	for _, ns := range namespaces {
		for _, verb := range []string{"list", "watch"} {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb,
					Group: benchv1alpha1.GroupVersion.Group, Resource: "benchmarksuites"}}}
			got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(), review, metav1.CreateOptions{})
			if err != nil {
				return "", fmt.Errorf("checking the manager's rights on BenchmarkSuites: %w", err)
			}
			if !got.Status.Allowed {
				return fmt.Sprintf("%s (namespace %q)", verb, ns), nil
			}
		}
	}
	return "", nil
}
