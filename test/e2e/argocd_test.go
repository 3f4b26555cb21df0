//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// argoNamespace is where the test's Argo CD keeps its settings and Applications.
const argoNamespace = "argocd"

// (l) GitOps with a real Argo CD (v3.2.11, application controller and repo server built from
// its Go module into bin/argocd, run on this host against the cluster, Redis as their cache):
// an Application syncs config/samples/gitops-waves.yaml from a local git repository (durations
// shortened). Argo CD applies the sync waves (Secret, then the reference run, then the
// candidate, each only once the previous wave is Healthy by config/argocd/health.lua) and
// reports the Application Progressing, then Healthy. A commit that gives the candidate a
// threshold it cannot meet re-runs it, and the Application turns Degraded with the verdict's
// message.
func TestArgoCDApplication(t *testing.T) {
	parallel(t)
	argocd := filepath.Join(repoRoot, "bin", "argocd")
	if !fileExists(argocd) {
		t.Fatalf("%s missing: make test-e2e builds it (make bin/argocd)", argocd)
	}
	ns := newNamespace(t, "gitops")
	repo := gitRepo(t, "runs/waves.yaml", wavesSample(t, ""))
	startArgoCD(t, argocd)

	app := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: bench-waves
  namespace: %s
spec:
  project: default
  source: {repoURL: "file://%s", targetRevision: HEAD, path: runs}
  destination: {server: "https://kubernetes.default.svc", namespace: %s}
  syncPolicy: {automated: {}}
`, argoNamespace, repo, ns)
	mustKubectl(t, app, "apply", "-f", "-")
	t.Cleanup(func() {
		_, _ = kubectl("", "-n", argoNamespace, "delete", "application", "bench-waves", "--wait=false")
	})

	start := time.Now()
	seen := waitAppHealth(t, "bench-waves", 3*runTimeout, "Healthy")
	metric("argocd_app_healthy_s", "%.1f", time.Since(start).Seconds())
	if !strings.Contains(seen, "Progressing") {
		t.Errorf("Application health went %s; want Progressing before Healthy", seen)
	}
	ref, cand := getRun(t, ns, "redis8-reference"), getRun(t, ns, "valkey-candidate")
	if ref.Status.Phase != v1alpha1.PhaseSucceeded || cand.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phases: reference %s, candidate %s", ref.Status.Phase, cand.Status.Phase)
	}
	// Sync waves: the candidate (wave 1) was created only once the reference (wave 0) was Healthy.
	if ref.Status.CompletionTime == nil || cand.CreationTimestamp.Before(ref.Status.CompletionTime) {
		t.Errorf("wave order: candidate created %s, reference completed %v", cand.CreationTimestamp, ref.Status.CompletionTime)
	}
	if b := cand.Status.Baseline; b == nil || b.Name != "redis8-reference" || len(b.Deltas) != 2 {
		t.Errorf("candidate baseline %+v", cand.Status.Baseline)
	}

	// A commit breaks a threshold: Argo CD syncs the edit, the run re-runs and fails its
	// verdict, and the Application turns Degraded with the run's message.
	commit(t, repo, "runs/waves.yaml", wavesSample(t, "  - {expr: \"cps > 1000000000\"}\n"), "candidate: impossible threshold")
	mustKubectl(t, "", "-n", argoNamespace, "annotate", "application", "bench-waves", "argocd.argoproj.io/refresh=normal", "--overwrite")
	start = time.Now()
	waitAppHealth(t, "bench-waves", 2*runTimeout, "Degraded")
	metric("argocd_app_degraded_s", "%.1f", time.Since(start).Seconds())
	cand = getRun(t, ns, "valkey-candidate")
	if cand.Status.Phase != v1alpha1.PhaseFailed || cand.Status.Verdict != v1alpha1.VerdictFailed || len(cand.Status.History) == 0 {
		t.Errorf("candidate after the commit: phase %s verdict %s history %d", cand.Status.Phase, cand.Status.Verdict, len(cand.Status.History))
	}
	msg := mustKubectl(t, "", "-n", argoNamespace, "get", "application", "bench-waves", "-o",
		`jsonpath={range .status.resources[?(@.kind=="BenchmarkRun")]}{.name}={.health.status}:{.health.message}{"\n"}{end}`)
	if !strings.Contains(msg, "valkey-candidate=Degraded") || !strings.Contains(msg, "cps > 1000000000") {
		t.Errorf("Argo CD resource health:\n%s", msg)
	}
}

// wavesSample is config/samples/gitops-waves.yaml made short for the test: 2 workers, the e2e
// scenario duration, thresholds any healthy run meets plus extra (appended to the candidate's).
func wavesSample(t *testing.T, extra string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "config", "samples", "gitops-waves.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for old, repl := range map[string]string{
		"workers: 16":       "workers: 2",
		"duration: 2m":      "duration: " + scenarioDuration.String(),
		`"cps >= -5%"`:      `"cps >= -95%"`,
		`"p99 <= +10%"`:     `"p99 <= +2000%"`,
		`"errorRate <= 0"}`: `"errorRate <= 0.01"}`,
	} {
		if !strings.Contains(s, old) {
			t.Fatalf("gitops-waves.yaml no longer contains %q: update the test", old)
		}
		s = strings.ReplaceAll(s, old, repl)
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s + extra
}

// gitRepo makes a git repository in a temporary directory with one file committed.
func gitRepo(t *testing.T, path, content string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	commit(t, dir, path, content, "benchmark runs")
	return dir
}

// commit writes path in the repository and commits it.
func commit(t *testing.T, dir, path, content, msg string) {
	t.Helper()
	p := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", path)
	git(t, dir, "-c", "user.name=e2e", "-c", "user.email=e2e@benchrun.invalid", "commit", "-q", "-m", msg)
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// startArgoCD installs Argo CD's CRDs (from the module bin/argocd was built from), its settings
// with our health check (config/argocd/argocd-cm.yaml) and the default project, then runs a
// Redis, the repo server and the application controller on loopback until the test ends.
func startArgoCD(t *testing.T, argocd string) {
	t.Helper()
	crds, err := sh(filepath.Join(repoRoot, "hack", "argocd"), "go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v3")
	if err != nil {
		t.Fatalf("locating Argo CD's module: %v: %s", err, crds)
	}
	dir := filepath.Join(strings.TrimSpace(crds), "manifests", "crds")
	for _, f := range []string{"application-crd.yaml", "appproject-crd.yaml"} {
		mustKubectl(t, "", "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(dir, f))
	}
	// Not kubectl wait: right after the create, a CRD has no status.conditions yet and kubectl
	// wait fails on that instead of waiting.
	for _, crd := range []string{"applications.argoproj.io", "appprojects.argoproj.io"} {
		deadline := time.Now().Add(time.Minute)
		for {
			out, _ := kubectl("", "get", "crd", crd, "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
			if out == "True" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("CRD %s not Established within 1m", crd)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if _, err := kubectl("", "create", "namespace", argoNamespace); err != nil && !strings.Contains(err.Error(), "AlreadyExists") {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !keep {
			_, _ = kubectl("", "delete", "namespace", argoNamespace, "--wait=false")
		}
	})
	cm, err := os.ReadFile(filepath.Join(repoRoot, "config", "argocd", "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Poll git and refresh apps often (defaults: 3 min), so the test reacts within seconds.
	settings := string(cm) + "  timeout.reconciliation: 10s\n"
	mustKubectl(t, settings, "apply", "-f", "-")
	key := make([]byte, 24)
	_, _ = rand.Read(key)
	mustKubectl(t, "", "-n", argoNamespace, "create", "secret", "generic", "argocd-secret",
		"--from-literal=server.secretkey="+hex.EncodeToString(key))
	mustKubectl(t, "", "-n", argoNamespace, "label", "secret", "argocd-secret", "app.kubernetes.io/part-of=argocd")
	mustKubectl(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: %s}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
  clusterResourceWhitelist: [{group: "*", kind: "*"}]
`, argoNamespace), "apply", "-f", "-")

	redisPort, repoPort := freeLoopbackPort(t), freeLoopbackPort(t)
	redis := fmt.Sprintf("127.0.0.1:%d", redisPort)
	daemon(t, "argocd-redis", "redis-server", "--port", fmt.Sprint(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	env := []string{"ARGOCD_FAKE_IN_CLUSTER=true", "ARGOCD_GPG_ENABLED=false", "KUBECONFIG=" + os.Getenv("KUBECONFIG")}
	daemon(t, "argocd-repo-server", argocd, "repo-server", "--disable-tls", "--redis", redis,
		"--port", fmt.Sprint(repoPort), "--metrics-port", fmt.Sprint(freeLoopbackPort(t)), "--loglevel", "warn")
	daemonEnv(t, env, "argocd-application-controller", argocd, "application-controller", "--namespace", argoNamespace,
		"--repo-server", fmt.Sprintf("127.0.0.1:%d", repoPort), "--repo-server-plaintext", "--redis", redis,
		"--metrics-port", fmt.Sprint(freeLoopbackPort(t)), "--app-resync", "10", "--loglevel", "warn",
		// Argo CD 3 keeps each resource's health out of the Application unless asked; the test
		// reads the run's health message from status.resources.
		"--persist-resource-health")
}

// daemon runs a process until the test ends; its output is logged when the test failed.
func daemon(t *testing.T, name, bin string, args ...string) {
	t.Helper()
	daemonEnv(t, []string{"ARGOCD_GPG_ENABLED=false"}, name, bin, args...)
}

func daemonEnv(t *testing.T, env []string, name, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output (last 4 KiB):\n%s", name, tail(out.String(), 4096))
		}
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// freeLoopbackPort returns a TCP port free on 127.0.0.1 right now.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// waitAppHealth polls the Application until its health is want and its sync Synced, and
// returns the health statuses it saw in order (e.g. "Missing→Progressing→Healthy").
func waitAppHealth(t *testing.T, name string, timeout time.Duration, want string) string {
	t.Helper()
	var seen []string
	deadline := time.Now().Add(timeout)
	for {
		out, err := kubectl("", "-n", argoNamespace, "get", "application", name, "-o",
			"jsonpath={.status.health.status} {.status.sync.status}")
		f := strings.Fields(out)
		if err == nil && len(f) > 0 && (len(seen) == 0 || seen[len(seen)-1] != f[0]) {
			seen = append(seen, f[0])
		}
		if err == nil && len(f) == 2 && f[0] == want && f[1] == "Synced" {
			return strings.Join(seen, "→")
		}
		if time.Now().After(deadline) {
			y, _ := kubectl("", "-n", argoNamespace, "get", "application", name, "-o", "yaml")
			t.Fatalf("Application %s: health went %s, not %s within %s:\n%s", name, strings.Join(seen, "→"), want, timeout, tail(y, 6000))
		}
		time.Sleep(time.Second)
	}
}
