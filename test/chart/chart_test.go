// Package chart tests charts/benchrun as users install it: helm lint --strict and helm
// template for several values sets, every rendered object (CRDs, hooks and the helm test pod
// included) validated by a server-side dry-run on a real kube-apiserver (envtest) with strict
// field validation in a namespace enforcing the restricted Pod Security Standard (warnings
// for workloads count as failures), and values.schema.json rejecting wrong values with
// messages that name the value.
package chart

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

var (
	repoRoot = filepath.Join("..", "..")
	chartDir = filepath.Join(repoRoot, "charts", "benchrun")
	k8s      client.Client
	restCfg  *rest.Config // the envtest API server, as system:masters
	warnings = &warningLog{}
)

// warningLog collects the API server's warnings (Pod Security "warn" mode among them).
type warningLog struct {
	mu   sync.Mutex
	msgs []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *warningLog) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

// take returns and clears the collected warnings.
func (w *warningLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.msgs
	w.msgs = nil
	return m
}

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the tests with `make test` (it builds kube-apiserver and etcd)")
		os.Exit(1)
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		os.Exit(1)
	}
	cfg = rest.CopyConfig(cfg)
	restCfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = warnings
	if k8s, err = client.New(cfg, client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// helm is bin/helm (make test builds it) or $HELM.
func helm(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("HELM"), filepath.Join(repoRoot, "bin", "helm")} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				return abs
			}
		}
	}
	t.Skip("no helm binary: `make test` builds bin/helm (or set HELM)")
	return ""
}

// render runs helm template of release rel with the values files and --set flags in args.
func render(t *testing.T, ns string, args ...string) ([]byte, error) {
	t.Helper()
	return renderRelease(t, "rel", ns, args...)
}

// renderRelease runs helm template of release name with the values files and flags in args.
func renderRelease(t *testing.T, name, ns string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(helm(t), append([]string{"template", name, chartDir, "-n", ns, "--include-crds"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	return out, nil
}

// objects splits rendered YAML into objects.
func objects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, doc)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

// valueSets are the values the chart is tested with: the defaults, the local cluster's, and
// every option that changes what is rendered.
var valueSets = map[string][]string{
	"defaults": nil,
	"local":    {"-f", filepath.Join(repoRoot, "hack", "local-cluster", "values-local.yaml")},
	"cluster-wide": {"--set", "rbac.namespaced=false", "--set", "rbac.clusterWide.allowWithoutPolicy=true",
		"--set", "rbac.clusterWide.protectedNamespaces={team-secrets}", "--set", "metrics.secure=true",
		"--set", "metrics.serviceMonitor.enabled=true"},
	"minimal": {"--set", "rbac.create=false", "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=mine",
		"--set", "metrics.enabled=false", "--set", "leaderElection=false", "--set", "crds.upgradeJob.enabled=false"},
	"tuned": {"--set", "replicaCount=2", "--set", "image.tag=1.2.3", "--set", "images.redis.tag=7.4",
		"--set", "nodeSelector.pool=ops", "--set", "tolerations[0].key=ops", "--set", "tolerations[0].operator=Exists",
		"--set", "podAnnotations.a=b", "--set", "extraArgs[0]=--zap-encoder=console", "--set", "priorityClassName=",
		"--set", "metrics.service.type=NodePort", "--set", "kubeletMetrics.insecureTLS=true", "--set", "logLevel=debug"},
	"namespaced": {"--set", "rbac.namespaced=true", "--set", "watchNamespaces={team-a,team-b}"},
	"netpol": {"--set", "networkPolicy.enabled=true", "--set", "networkPolicy.apiServerCIDRs={10.0.0.1/32}",
		"--set", "networkPolicy.extraEgress[0].ports[0].port=6380"},
	"namespaced-release": {"--set", "rbac.namespaced=true", "--set", "kubeletMetrics.enabled=false"},
	"dashboards":         {"--set", "dashboards.enabled=true", "--set", "dashboards.folder=Benchmarks"},
	"live-metrics": {"--set", "liveMetrics.remoteWriteURL=http://prometheus.monitoring:9090/api/v1/write",
		"--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true"},
}

// ensureNamespace creates ns (restricted Pod Security, warnings on) unless it exists.
func ensureNamespace(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}}}
	if err := k8s.Create(ctx, nsObj); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func TestLintStrict(t *testing.T) {
	for name, args := range valueSets {
		out, err := exec.Command(helm(t), append([]string{"lint", "--strict", chartDir}, args...)...).CombinedOutput()
		if err != nil {
			t.Errorf("%s: helm lint --strict: %v\n%s", name, err, out)
		}
	}
}

// TestRenderedObjectsDryRun renders each values set and creates every object with a
// server-side dry-run (strict field validation) in a restricted namespace.
func TestRenderedObjectsDryRun(t *testing.T) {
	ctx := context.Background()
	for name, args := range valueSets {
		t.Run(name, func(t *testing.T) {
			ns := "chart-" + name
			ensureNamespace(ctx, t, ns)
			out, err := render(t, ns, args...)
			if err != nil {
				t.Fatal(err)
			}
			objs := objects(t, out)
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
				if o.GetKind() == "CustomResourceDefinition" {
					// real, so the dry-runs of later objects can rely on it (idempotent)
					if err := k8s.Create(ctx, o.DeepCopy()); err != nil && !strings.Contains(err.Error(), "already exists") {
						t.Fatalf("CRD %s: %v", o.GetName(), err)
					}
					continue
				}
				if o.GetNamespace() != "" {
					ensureNamespace(ctx, t, o.GetNamespace())
				}
				warnings.take()
				if err := k8s.Create(ctx, o, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
					t.Errorf("%s %s: server-side dry-run: %v", o.GetKind(), o.GetName(), err)
				}
				if w := warnings.take(); len(w) > 0 {
					t.Errorf("%s %s: API server warnings: %v", o.GetKind(), o.GetName(), w)
				}
			}
			if kinds["Deployment"] != 1 || kinds["CustomResourceDefinition"] != 2 {
				t.Errorf("rendered kinds %v: want one Deployment and the two CRDs (BenchmarkRun, BenchmarkSuite)", kinds)
			}
			t.Logf("%s: %d objects dry-run created: %v", name, len(objs), kinds)
		})
	}
}

// TestSchemaRejects: wrong values fail helm template with a message naming the value.
func TestSchemaRejects(t *testing.T) {
	for _, c := range []struct {
		set  string
		want []string
	}{
		{"image.repository=", []string{"/image/repository", "minLength"}},
		{"images.redis=redis:8", []string{"/images/redis", "got string, want object"}},
		{"images.runner.tag=a:b", []string{"/images/runner/tag", "does not match pattern"}},
		{"logLevel=verbose", []string{"/logLevel", "'debug', 'info', 'error'"}},
		{"imagez.x=1", []string{"additional properties 'imagez' not allowed"}},
		{"replicaCount=-1", []string{"/replicaCount", "minimum"}},
		{"extraArgs[0]=zap", []string{"/extraArgs/0", "does not match pattern"}},
		{"metrics.port=70000", []string{"/metrics/port", "maximum"}},
		{"image.pullPolicy=Sometimes", []string{"/image/pullPolicy", "value must be one of"}},
		{"crds.upgradeJob.image=kubectl:1", []string{"/crds/upgradeJob/image", "got string, want object"}},
		{"networkPolicy.apiServerCIDRs={10.0.0.1}", []string{"/networkPolicy/apiServerCIDRs/0", "does not match pattern"}},
		{"watchNamespaces={Team_A}", []string{"/watchNamespaces/0", "does not match pattern"}},
		{"liveMetrics.remoteWriteURL=http://admin:pw@prom/api/v1/write", []string{"/liveMetrics/remoteWriteURL", "does not match pattern"}},
		{"metrics.prometheusRule.regressionPercent=100", []string{"/metrics/prometheusRule/regressionPercent", "maximum"}},
		{"rbac.clusterWide.protectedNamespaces={Kube_System}", []string{"/rbac/clusterWide/protectedNamespaces/0", "does not match pattern"}},
		{"rbac.clusterWide.allowWithoutPolicy=yes", []string{"/rbac/clusterWide/allowWithoutPolicy", "got string, want boolean"}},
	} {
		_, err := render(t, "x", "--set", c.set)
		if err == nil {
			t.Errorf("--set %s: rendered, want a schema error", c.set)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("--set %s: error lacks %q:\n%v", c.set, w, err)
			}
		}
	}
	// a chart-level rule (not expressible in the schema) fails with its own message
	if _, err := render(t, "x", "--set", "replicaCount=2", "--set", "leaderElection=false"); err == nil ||
		!strings.Contains(err.Error(), "replicaCount > 1 needs leaderElection: true") {
		t.Errorf("replicaCount=2 without leader election: %v", err)
	}
	// cluster-wide where ValidatingAdmissionPolicy is not served: refused unless opted in
	if _, err := render(t, "x", "--set", "rbac.namespaced=false"); err == nil ||
		!strings.Contains(err.Error(), "rbac.namespaced=false (cluster-wide install) needs the manager-scope ValidatingAdmissionPolicy") ||
		!strings.Contains(err.Error(), "rbac.clusterWide.allowWithoutPolicy=true") {
		t.Errorf("cluster-wide without ValidatingAdmissionPolicy: %v", err)
	}
}
