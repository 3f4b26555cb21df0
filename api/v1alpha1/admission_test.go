package v1alpha1_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	benchv1alpha1 "github.com/benchrun/benchrun/api/v1alpha1"
)

var (
	dyn      dynamic.Interface
	runsGVR  = benchv1alpha1.GroupVersion.WithResource("benchmarkruns")
	repoRoot = filepath.Join("..", "..")
)

// TestMain starts a real kube-apiserver + etcd (built from Go modules by `make envtest-assets`)
// with the generated CRD installed.
func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the tests with `make test` (it builds kube-apiserver and etcd)")
		os.Exit(1)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(repoRoot, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		os.Exit(1)
	}
	dyn = dynamic.NewForConfigOrDie(cfg)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

func createNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t-%d", nsCounter.next())
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
	_, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
		Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return name
}

type counter struct{ n int }

func (c *counter) next() int { c.n++; return c.n }

var nsCounter counter

// apply creates obj like `kubectl apply` would for a new object: strict field validation.
func apply(ns string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	var gvr schema.GroupVersionResource
	switch gvk.Kind {
	case "BenchmarkRun":
		gvr = runsGVR
	case "BenchmarkSuite":
		gvr = suitesGVR
	case "Secret":
		gvr = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	case "ConfigMap":
		gvr = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	default:
		return nil, fmt.Errorf("unexpected kind %s in a sample", gvk.Kind)
	}
	return dyn.Resource(gvr).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{FieldValidation: "Strict"})
}

func decodeDocs(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("decoding YAML: %v", err)
		}
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// TestSamplesAreAccepted applies every sample in config/samples and checks the defaults.
func TestSamplesAreAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found: %v", err)
	}
	kinds := map[string]bool{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ns := createNamespace(t)
			for _, obj := range decodeDocs(t, data) {
				created, err := apply(ns, obj)
				if err != nil {
					t.Fatalf("sample %s rejected: %v", f, err)
				}
				if obj.GetKind() != "BenchmarkRun" {
					continue
				}
				target, _, _ := unstructured.NestedMap(created.Object, "spec", "target")
				for k := range target {
					kinds[k] = true
				}
				// Defaults every controller relies on are filled in by the API server.
				for _, path := range [][]string{
					{"spec", "load", "workers"},
					{"spec", "load", "tasksPerWorker"},
					{"spec", "load", "duration"},
					{"spec", "load", "runners", "parallelism"},
					{"spec", "cleanup", "policy"},
					{"spec", "timeouts", "targetReady"},
					{"spec", "collect", "resourceUsage"},
				} {
					if _, found, _ := unstructured.NestedFieldNoCopy(created.Object, path...); !found {
						t.Errorf("%s: default for %s not applied", f, strings.Join(path, "."))
					}
				}
			}
		})
	}
	for _, k := range []string{"hetu", "redis", "external", "custom"} {
		if !kinds[k] {
			t.Errorf("no sample with a %s target in config/samples", k)
		}
	}
}

// TestDefaults checks the defaults of a minimal run.
func TestDefaults(t *testing.T) {
	ns := createNamespace(t)
	created, err := apply(ns, runFromSpec(t, "min", `
target: {hetu: {backend: {redis: {}}}}
load: {scenarios: [{name: hello, type: hetu.hello_world}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var run benchv1alpha1.BenchmarkRun
	data, _ := created.MarshalJSON()
	if err := yaml.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	h := run.Spec.Target.HeTu
	if h.Port != 2466 || h.Instance != "bench" || h.PacketLayers != benchv1alpha1.LayersMsgpackZlibCrypto || h.Replicas != 1 || h.Workers != 1 {
		t.Errorf("hetu defaults: %+v", h)
	}
	if b := h.Backend.Redis; b.Mode != benchv1alpha1.RedisSingle || b.Engine != benchv1alpha1.EngineRedis || b.Provider != benchv1alpha1.ProviderAuto {
		t.Errorf("backend redis defaults: %+v", b)
	}
	l := run.Spec.Load
	if l.Workers != 1 || l.TasksPerWorker != 1 || l.Duration.Duration.String() != "1m0s" || l.Runners.Parallelism != 1 {
		t.Errorf("load defaults: %+v", l)
	}
	if run.Spec.Cleanup.Policy != benchv1alpha1.CleanupOnSuccess || run.Spec.Timeouts.TargetReady.Duration.String() != "10m0s" {
		t.Errorf("cleanup/timeouts defaults: %+v %+v", run.Spec.Cleanup, run.Spec.Timeouts)
	}
	if run.Spec.Collect.ResourceUsage == nil || !*run.Spec.Collect.ResourceUsage {
		t.Errorf("collect.resourceUsage should default to true")
	}
}

func runFromSpec(t *testing.T, name, spec string) *unstructured.Unstructured {
	t.Helper()
	var s map[string]any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatalf("bad test spec YAML: %v", err)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": benchv1alpha1.GroupVersion.String(),
		"kind":       "BenchmarkRun",
		"metadata":   map[string]any{"name": name},
		"spec":       s,
	}}
}

// TestInvalidSpecsAreRejected checks that the API server rejects bad runs with a message a
// user understands, naming the field.
func TestInvalidSpecsAreRejected(t *testing.T) {
	cases := LoadInvalidRuns(t, filepath.Join("testdata", "invalid-runs.yaml"))
	if len(cases) < 30 {
		t.Fatalf("the suite promises at least 30 invalid specs, has %d", len(cases))
	}
	ns := createNamespace(t)
	for i, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			name := fmt.Sprintf("bad-%d", i)
			if tc.RunName != "" {
				name = tc.RunName
			}
			_, err := apply(ns, runFromSpec(t, name, tc.Spec))
			wantRefused(t, err, tc.Want)
		})
	}
}

// TestFaultDuringRampAccepted: the API server accepts a fault during a ramp past load.duration
// (inside the ramp's 8 s) and a timeouts.run equal to the ramp's length (issue 25: both were
// refused because the rules used load.duration).
func TestFaultDuringRampAccepted(t *testing.T) {
	ns := createNamespace(t)
	if _, err := apply(ns, runFromSpec(t, "ramp-fault", `
target: {redis: {}}
load: {duration: 4s, scenarios: [{name: ramp, type: redis.get, arrival: {stages: [{target: 100, duration: 4s}, {target: 200, duration: 4s}]}}]}
faults: [{scenario: ramp, offset: 6s, action: pause, duration: 1s, role: master}]
timeouts: {run: 8s}`)); err != nil {
		t.Fatal(err)
	}
}
