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
	for _, k := range []string{"hetu", "redis", "external"} {
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
	const redisGet = `load: {scenarios: [{name: a, type: redis.get}]}`
	cases := []struct {
		name string
		spec string
		want []string // substrings of the error, all required
	}{
		{"no target", "target: {}\n" + redisGet,
			[]string{"spec.target", "set exactly one of spec.target.hetu, spec.target.redis or spec.target.external"}},
		{"two targets", "target: {redis: {}, external: {kind: redis, addresses: ['r:6379']}}\n" + redisGet,
			[]string{"set exactly one of spec.target.hetu"}},
		{"hetu without backend", "target: {hetu: {}}\nload: {scenarios: [{name: a, type: hetu.get}]}",
			[]string{"spec.target.hetu.backend", "Required value"}},
		{"hetu with two backends", "target: {hetu: {backend: {redis: {}, external: {kind: redis, addresses: ['r:6379']}}}}\nload: {scenarios: [{name: a, type: hetu.get}]}",
			[]string{"spec.target.hetu.backend", "set exactly one of backend.redis or backend.external"}},
		{"hetu backend of kind hetu", "target: {hetu: {backend: {external: {kind: hetu, addresses: ['h:2466']}}}}\nload: {scenarios: [{name: a, type: hetu.get}]}",
			[]string{"backend.external must have kind: redis"}},
		{"hetu scenario on redis target", "target: {redis: {}}\nload: {scenarios: [{name: a, type: hetu.hello_world}]}",
			[]string{"scenarios of type hetu.* need a HeTu target"}},
		{"redis scenario on external hetu", "target: {external: {kind: hetu, addresses: ['h:2466']}}\n" + redisGet,
			[]string{"scenarios of type redis.* and ycsb need a Redis endpoint"}},
		{"no scenarios", "target: {redis: {}}\nload: {scenarios: []}",
			[]string{"spec.load.scenarios", "at least 1 items"}},
		{"zero workers", "target: {redis: {}}\nload: {workers: 0, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load.workers", "greater than or equal to 1"}},
		{"negative tasks", "target: {redis: {}}\nload: {tasksPerWorker: -3, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load.tasksPerWorker", "greater than or equal to 1"}},
		{"duration in words", "target: {redis: {}}\nload: {duration: 10 minutes, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load.duration", "must be a duration such as 30s, 5m or 1h30m"}},
		{"zero duration", "target: {redis: {}}\nload: {duration: 0s, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load.duration", "must be between 1s and 168h"}},
		{"scenario duration too long", "target: {redis: {}}\nload: {scenarios: [{name: a, type: redis.get, duration: 200h}]}",
			[]string{"spec.load.scenarios[0].duration", "must be between 1s and 168h"}},
		{"unknown scenario type", "target: {redis: {}}\nload: {scenarios: [{name: a, type: redis.gett}]}",
			[]string{"spec.load.scenarios[0].type", `Unsupported value: "redis.gett"`}},
		{"duplicate scenario names", "target: {redis: {}}\nload: {scenarios: [{name: a, type: redis.get}, {name: a, type: redis.set}]}",
			[]string{"spec.load.scenarios[1]", "Duplicate value"}},
		{"upper-case scenario name", "target: {redis: {}}\nload: {scenarios: [{name: GetThenUpdate, type: redis.get}]}",
			[]string{"spec.load.scenarios[0].name", "scenario names use lower-case letters"}},
		{"more runners than users", "target: {redis: {}}\nload: {workers: 2, tasksPerWorker: 2, runners: {parallelism: 5}, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load", "runners.parallelism must not exceed workers × tasksPerWorker"}},
		{"replicas on single", "target: {redis: {mode: single, replicas: 2}}\n" + redisGet,
			[]string{"spec.target.redis", "replicas applies only to mode ha or proxy"}},
		{"sentinels on proxy", "target: {redis: {mode: proxy, sentinels: 3}}\n" + redisGet,
			[]string{"spec.target.redis", "sentinels applies only to mode ha"}},
		{"proxy settings on ha", "target: {redis: {mode: ha, proxy: {replicas: 2}}}\n" + redisGet,
			[]string{"spec.target.redis", "proxy settings apply only to mode proxy"}},
		{"unknown redis mode", "target: {redis: {mode: cluster}}\n" + redisGet,
			[]string{"spec.target.redis.mode", `Unsupported value: "cluster"`, `"single", "ha", "proxy"`}},
		{"unknown engine", "target: {redis: {engine: keydb}}\n" + redisGet,
			[]string{"spec.target.redis.engine", `Unsupported value: "keydb"`}},
		{"unknown provider", "target: {redis: {provider: bitnami}}\n" + redisGet,
			[]string{"spec.target.redis.provider", `Unsupported value: "bitnami"`}},
		{"password in config", "target: {redis: {config: {requirepass: hunter2}}}\n" + redisGet,
			[]string{"spec.target.redis.config", "do not put passwords in config: use passwordSecretRef"}},
		{"config key not a directive", "target: {redis: {config: {IO_THREADS: '8'}}}\n" + redisGet,
			[]string{"spec.target.redis.config", "config keys must be Redis directive names"}},
		{"secret ref without key", "target: {redis: {passwordSecretRef: {name: s}}}\n" + redisGet,
			[]string{"spec.target.redis.passwordSecretRef.key", "Required value"}},
		{"secret ref with empty name", "target: {redis: {passwordSecretRef: {name: '', key: k}}}\n" + redisGet,
			[]string{"spec.target.redis.passwordSecretRef.name", "at least 1 chars long"}},
		{"external without addresses", "target: {external: {kind: redis, addresses: []}}\n" + redisGet,
			[]string{"spec.target.external.addresses", "at least 1 items"}},
		{"external address without port", "target: {external: {kind: redis, addresses: ['r-bp1.redis.rds.aliyuncs.com']}}\n" + redisGet,
			[]string{"spec.target.external.addresses", "addresses must be host:port"}},
		{"external hetu fields on redis", "target: {external: {kind: redis, addresses: ['r:6379'], instance: bench}}\n" + redisGet,
			[]string{"spec.target.external", "instance, packetLayers and authKeySecretRef apply only to kind: hetu"}},
		{"read replicas on external hetu", "target: {external: {kind: hetu, addresses: ['h:2466'], readAddresses: ['r:6379']}}\nload: {scenarios: [{name: a, type: hetu.get}]}",
			[]string{"spec.target.external", "readAddresses and usernameSecretRef apply only to kind: redis"}},
		{"unknown external kind", "target: {external: {kind: mongo, addresses: ['m:27017']}}\n" + redisGet,
			[]string{"spec.target.external.kind", `Unsupported value: "mongo"`}},
		{"hetu port out of range", "target: {hetu: {port: 70000, backend: {redis: {}}}}\nload: {scenarios: [{name: a, type: hetu.get}]}",
			[]string{"spec.target.hetu.port", "less than or equal to 65535"}},
		{"unknown packet layers", "target: {hetu: {packetLayers: json, backend: {redis: {}}}}\nload: {scenarios: [{name: a, type: hetu.get}]}",
			[]string{"spec.target.hetu.packetLayers", `Unsupported value: "json"`}},
		{"hetu instance with spaces", "target: {hetu: {instance: 'my game', backend: {redis: {}}}}\nload: {scenarios: [{name: a, type: hetu.get}]}",
			[]string{"spec.target.hetu.instance", "instance names use letters, digits and '_'"}},
		{"ycsb proportions do not sum to 1", "target: {redis: {}}\nload: {scenarios: [{name: a, type: ycsb, ycsb: {readProportion: 0.5, updateProportion: 0.4}}]}",
			[]string{"spec.load.scenarios[0].ycsb", "readProportion + updateProportion + insertProportion must sum to 1"}},
		{"ycsb proportion above 1", "target: {redis: {}}\nload: {scenarios: [{name: a, type: ycsb, ycsb: {readProportion: 1.5, updateProportion: 0}}]}",
			[]string{"spec.load.scenarios[0].ycsb.readProportion", "less than or equal to 1"}},
		{"unknown key distribution", "target: {redis: {}}\nload: {scenarios: [{name: a, type: ycsb, ycsb: {requestDistribution: hotspot}}]}",
			[]string{"spec.load.scenarios[0].ycsb.requestDistribution", `Unsupported value: "hotspot"`}},
		{"ycsb block on a get scenario", "target: {redis: {}}\nload: {scenarios: [{name: a, type: redis.get, ycsb: {}}]}",
			[]string{"spec.load.scenarios[0]", "ycsb settings apply only to type: ycsb"}},
		{"script scenario without script", "target: {redis: {}}\nload: {scenarios: [{name: a, type: script}]}",
			[]string{"spec.load.scenarios[0]", "type: script needs script"}},
		{"body size on ping", "target: {redis: {}}\nload: {scenarios: [{name: a, type: redis.ping, bodySize: 128}]}",
			[]string{"spec.load.scenarios[0]", "bodySize applies only to redis.get, redis.set, ycsb and script scenarios"}},
		{"zero body size", "target: {redis: {}}\nload: {scenarios: [{name: a, type: redis.set, bodySize: 0}]}",
			[]string{"spec.load.scenarios[0].bodySize", "greater than or equal to 1"}},
		{"params key not an env name", "target: {redis: {}}\nload: {scenarios: [{name: a, type: redis.get, params: {key-prefix: x}}]}",
			[]string{"spec.load.scenarios[0].params", "params keys must be valid environment variable names"}},
		{"trim percent and warm-up", "target: {redis: {}}\nload: {trim: {dropPercent: 5, warmUp: 30s}, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load.trim", "use either dropPercent or warmUp/coolDown, not both"}},
		{"trim percent too large", "target: {redis: {}}\nload: {trim: {dropPercent: 60}, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load.trim.dropPercent", "less than or equal to 45"}},
		{"warm-up not a duration", "target: {redis: {}}\nload: {trim: {warmUp: half a minute}, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load.trim.warmUp", "must be a duration such as 30s"}},
		{"zero runners", "target: {redis: {}}\nload: {runners: {parallelism: 0}, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load.runners.parallelism", "greater than or equal to 1"}},
		{"unknown cleanup policy", "target: {redis: {}}\n" + redisGet + "\ncleanup: {policy: Sometimes}",
			[]string{"spec.cleanup.policy", `Unsupported value: "Sometimes"`, `"Always", "OnSuccess", "Never"`}},
		{"negative ttl", "target: {redis: {}}\n" + redisGet + "\ncleanup: {ttlSecondsAfterFinished: -1}",
			[]string{"spec.cleanup.ttlSecondsAfterFinished", "greater than or equal to 0"}},
		{"target timeout not a duration", "target: {redis: {}}\n" + redisGet + "\ntimeouts: {targetReady: soon}",
			[]string{"spec.timeouts.targetReady", "must be a duration such as 90s, 10m or 1h30m"}},
		{"remote write not http", "target: {redis: {}}\n" + redisGet + "\ncollect: {prometheusRemoteWriteURL: 'ftp://prom/write'}",
			[]string{"spec.collect.prometheusRemoteWriteURL", "must be an http:// or https:// URL"}},
		{"misspelt field", "target: {redis: {}}\nload: {wokers: 4, scenarios: [{name: a, type: redis.get}]}",
			[]string{`unknown field "spec.load.wokers"`}},
		{"workers as text", "target: {redis: {}}\nload: {workers: many, scenarios: [{name: a, type: redis.get}]}",
			[]string{"spec.load.workers", "must be of type integer"}},
	}
	if len(cases) < 30 {
		t.Fatalf("the suite promises at least 30 invalid specs, has %d", len(cases))
	}
	ns := createNamespace(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := apply(ns, runFromSpec(t, fmt.Sprintf("bad-%d", i), tc.spec))
			if err == nil {
				t.Fatalf("accepted, want rejection containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}
