//go:build e2e

// Package e2e runs BenchmarkRuns on a real cluster: the operator installed with its Helm chart,
// real target pods (Redis, Valkey, the camellia proxy, HeTu), real k6 runner Jobs.
//
//	make test-e2e                      # local single-node cluster (hack/local-cluster), torn down after
//	E2E_KEEP=1 make test-e2e           # keep the cluster and the test namespaces
//	KUBECONFIG=... make test-e2e       # any cluster with the images available (e.g. kind in CI)
//
// Env: E2E_KEEP=1 (keep cluster + namespaces), E2E_SKIP_INSTALL=1 (the chart is already
// installed), E2E_BUILD=0 (do not rebuild the manager/runner images on the local cluster), KUBECTL (kubectl binary), E2E_RUN_TIMEOUT (per-run timeout, default 5m).
package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"testing"
)

var (
	repoRoot     string
	cacheDir     string
	kubectlBin   = "kubectl"
	localCluster bool // we brought the local cluster up (and tear it down)
	e2eStart     time.Time
	keep         = os.Getenv("E2E_KEEP") == "1"
	runTimeout   = 5 * time.Minute
)

const managerNamespace = "benchrun-system"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	e2eStart = time.Now()
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	cacheDir = os.Getenv("BENCHRUN_CACHE")
	if cacheDir == "" {
		cacheDir = filepath.Join(os.Getenv("HOME"), ".cache", "benchrun")
	}
	if d, err := time.ParseDuration(os.Getenv("E2E_RUN_TIMEOUT")); err == nil && d > 0 {
		runTimeout = d
	}
	switch {
	case os.Getenv("KUBECTL") != "":
		kubectlBin = os.Getenv("KUBECTL")
	default:
		if p := filepath.Join(cacheDir, "k8s-v1.34.4", "bin", "kubectl"); fileExists(p) {
			kubectlBin = p
		}
	}

	if os.Getenv("KUBECONFIG") == "" {
		localCluster = true
		if err := setupLocalCluster(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: local cluster: %v\n", err)
			teardown()
			return 1
		}
	}
	localKubeconfig := filepath.Join(cacheDir, "cluster", "kubeconfig", "admin.kubeconfig")
	if os.Getenv("KUBECONFIG") == localKubeconfig && os.Getenv("E2E_BUILD") != "0" {
		// The Go images keep their :dev tag: rebuild them from this tree (6-7 s when unchanged,
		// identical digest not imported again) so the test never runs a stale manager or runner;
		// build.sh imports them into the running cluster, make helm-install rolls the manager.
		t := time.Now()
		if out, err := sh(repoRoot, "hack/images/build.sh", "manager", "runner", "echo"); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: hack/images/build.sh manager runner echo: %v\n%s\n", err, out)
			teardown()
			return 1
		}
		metric("images-rebuild-go", "%.1fs", time.Since(t).Seconds())
	}
	if os.Getenv("E2E_SKIP_INSTALL") != "1" {
		t := time.Now()
		if out, err := sh(repoRoot, "make", "helm-install"); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: make helm-install: %v\n%s\n", err, out)
			teardown()
			return 1
		}
		metric("helm-install", "%.1fs", time.Since(t).Seconds())
	}
	code := m.Run()
	metric("e2e-tests-wall", "%.1fs", time.Since(e2eStart).Seconds())
	teardown()
	metric("e2e-total-wall", "%.1fs", time.Since(e2eStart).Seconds())
	return code
}

func setupLocalCluster() error {
	t := time.Now()
	// Images first: cluster.sh up imports whatever tarballs exist.
	var missing []string
	for _, img := range []string{"pause", "coredns", "kubectl", "manager", "runner", "redis", "valkey", "proxy", "hetu", "redis-operator", "echo", "prometheus"} {
		if !fileExists(filepath.Join(cacheDir, "images", img+".tar")) {
			missing = append(missing, img)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: building missing images %v (cold: see hack/local-cluster/TIMINGS.md)\n", missing)
		if out, err := sh(repoRoot, "hack/images/build.sh", missing...); err != nil {
			return fmt.Errorf("hack/images/build.sh: %w\n%s", err, out)
		}
		metric("images-build", "%.1fs", time.Since(t).Seconds())
	}
	t = time.Now()
	out, err := shStdout(repoRoot, "hack/local-cluster/cluster.sh", "up")
	if err != nil {
		return fmt.Errorf("cluster.sh up: %w\n%s", err, out)
	}
	kc := ""
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), ".kubeconfig") {
			kc = strings.TrimSpace(l)
		}
	}
	if kc == "" {
		kc = filepath.Join(cacheDir, "cluster", "kubeconfig", "admin.kubeconfig")
	}
	if err := os.Setenv("KUBECONFIG", kc); err != nil {
		return err
	}
	metric("cluster-up", "%.1fs", time.Since(t).Seconds())
	// A rebuilt image with the same tag is imported by cluster.sh load (up does it too).
	return nil
}

func teardown() {
	if !localCluster {
		return
	}
	if keep {
		fmt.Fprintln(os.Stderr, "e2e: E2E_KEEP=1, local cluster left running (hack/local-cluster/cluster.sh down)")
		return
	}
	t := time.Now()
	if out, err := sh(repoRoot, "hack/local-cluster/cluster.sh", "down"); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cluster.sh down: %v\n%s\n", err, out)
	}
	metric("cluster-down", "%.1fs", time.Since(t).Seconds())
}

func metric(name, format string, args ...any) {
	fmt.Printf("E2E-METRIC %s %s\n", name, fmt.Sprintf(format, args...))
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// sh runs a command in dir with stdout+stderr combined (and echoed to stderr).
func sh(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	return buf.String(), err
}

// shStdout returns stdout only (stderr goes to the test's stderr).
func shStdout(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	return string(out), err
}
