package plan

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/workload"
)

func hetuRun() *v1alpha1.BenchmarkRun {
	ten := int32(10)
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "rpc"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{
				Instance: "bench", PacketLayers: v1alpha1.LayersMsgpackZlibCrypto,
				AuthKeySecretRef: &v1alpha1.SecretKeyRef{Name: "hetu", Key: "authKey"},
				Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{
					PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "redis", Key: "password"}}},
			}},
			Load: v1alpha1.LoadSpec{
				Workers: 64, TasksPerWorker: 3, Duration: metav1.Duration{Duration: time.Minute},
				Scenarios: []v1alpha1.Scenario{
					{Name: "get", Type: v1alpha1.ScenarioHeTuGet},
					{Name: "upsert", Type: v1alpha1.ScenarioRedisUpsert, Duration: &metav1.Duration{Duration: 30 * time.Second}, BodySize: &ten},
				},
			},
		},
	}
}

var hetuEndpoints = []v1alpha1.Endpoint{
	{Role: RoleHeTu, Address: "rpc-hetu:2466"},
	{Role: RoleMaster, Address: "rpc-redis-master:6379"},
	{Role: RoleReplica, Address: "rpc-redis-replica:6379"},
	{Role: "sentinel", Address: "rpc-sentinel:26379"},
}

func TestVUsSplitOverRunners(t *testing.T) {
	run := hetuRun() // 64 × 3 = 192 VUs
	total := 0
	for i := range 5 {
		inv, err := ForRunner(run, hetuEndpoints, i, 5)
		if err != nil {
			t.Fatal(err)
		}
		if inv.VUs != 38 && inv.VUs != 39 {
			t.Errorf("runner %d: %d VUs, want 38 or 39", i, inv.VUs)
		}
		// Every runner knows its slot (YCSB inserts of the runners take disjoint keys).
		if inv.Env[EnvRunnerIndex] != strconv.Itoa(i) || inv.Env[EnvRunnerCount] != "5" || inv.Env[EnvRunner] != "rpc-"+strconv.Itoa(i) {
			t.Errorf("runner %d: env index %q count %q name %q", i, inv.Env[EnvRunnerIndex], inv.Env[EnvRunnerCount], inv.Env[EnvRunner])
		}
		total += inv.VUs
	}
	if total != 192 {
		t.Errorf("VUs add up to %d, want 192", total)
	}
	if _, err := ForRunner(run, hetuEndpoints, 5, 5); err == nil {
		t.Error("index out of range accepted")
	}
	run.Spec.Load.Workers, run.Spec.Load.TasksPerWorker = 1, 2
	if _, err := ForRunner(run, hetuEndpoints, 2, 3); err == nil || !strings.Contains(err.Error(), "no virtual user") {
		t.Errorf("runner without VUs: %v", err)
	}
}

func TestPlanScenariosAndTarget(t *testing.T) {
	inv, err := ForRunnerIn("/repo/scripts/k6", hetuRun(), hetuEndpoints, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Script != "/repo/scripts/k6/benchrun.js" {
		t.Errorf("script %q", inv.Script)
	}
	var spec Spec
	if err := json.Unmarshal([]byte(inv.Env[EnvPlan]), &spec); err != nil {
		t.Fatal(err)
	}
	if len(spec.Scenarios) != 2 {
		t.Fatalf("scenarios: %+v", spec.Scenarios)
	}
	get, up := spec.Scenarios[0], spec.Scenarios[1]
	if get.StartMs != 0 || get.DurationMs != 60000 || get.VUs != 96 || get.KeySpace != DefaultKeySpace {
		t.Errorf("get: %+v", get)
	}
	if up.StartMs != 62000 || up.DurationMs != 30000 || up.BodySize != 10 || up.Type != "redis.upsert" {
		t.Errorf("upsert: %+v", up)
	}
	if inv.Duration != 94*time.Second {
		t.Errorf("duration %v, want 94s (60s + 30s + 2 graces)", inv.Duration)
	}
	var target Target
	if err := json.Unmarshal([]byte(inv.Env[EnvTarget]), &target); err != nil {
		t.Fatal(err)
	}
	if target.HeTu == nil || target.HeTu.Addrs[0] != "rpc-hetu:2466" || target.HeTu.Layers != "msgpack+zlib+crypto" {
		t.Errorf("hetu target: %+v", target.HeTu)
	}
	if target.Redis == nil || target.Redis.Addrs[0] != "rpc-redis-master:6379" || target.Redis.ReadAddrs[0] != "rpc-redis-replica:6379" {
		t.Errorf("redis target: %+v", target.Redis)
	}
	want := map[string]string{EnvHeTuAuthKey: "hetu/authKey", EnvRedisPassword: "redis/password"}
	for _, s := range inv.SecretEnv {
		if want[s.Name] != s.Secret.Name+"/"+s.Secret.Key {
			t.Errorf("secret env %+v", s)
		}
		delete(want, s.Name)
	}
	if len(want) > 0 {
		t.Errorf("missing secret env: %v", want)
	}
}

func TestProxyAndExternalTargets(t *testing.T) {
	run := hetuRun()
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "g", Type: v1alpha1.ScenarioRedisGet}}
	run.Spec.Target = v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy}}
	inv, err := ForRunner(run, []v1alpha1.Endpoint{{Role: RoleProxy, Address: "p:6380"}, {Role: RoleMaster, Address: "m:6379"}}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(inv.Env[EnvTarget], `"addrs":["p:6380"]`) || strings.Contains(inv.Env[EnvTarget], "m:6379") {
		t.Errorf("proxy target should send everything through the proxy: %s", inv.Env[EnvTarget])
	}
	run.Spec.Target = v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{
		Kind: v1alpha1.ExternalRedis, Addresses: []string{"r-1.aliyuncs.com:6379"}, ReadAddresses: []string{"r-2.aliyuncs.com:6379"},
		TLS:               &v1alpha1.TLSSpec{Enabled: true, ServerName: "r-1"},
		PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "aliyun", Key: "password"},
	}}
	inv, err = ForRunner(run, nil, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(inv.Env[EnvTarget], `"tls":true`) || !strings.Contains(inv.Env[EnvTarget], "r-2.aliyuncs.com:6379") {
		t.Errorf("external target: %s", inv.Env[EnvTarget])
	}
	if len(inv.SecretEnv) != 1 || inv.SecretEnv[0].Name != EnvRedisPassword {
		t.Errorf("secret env: %+v", inv.SecretEnv)
	}
}

func TestMissingEndpointIsAnError(t *testing.T) {
	_, err := ForRunner(hetuRun(), nil, 0, 1)
	if err == nil || !strings.Contains(err.Error(), `scenario "get" needs a HeTu endpoint`) {
		t.Fatalf("got %v", err)
	}
}

func TestScriptScenarioEntry(t *testing.T) {
	run := hetuRun()
	run.Spec.Load.Scenarios = append(run.Spec.Load.Scenarios,
		v1alpha1.Scenario{Name: "mine", Type: v1alpha1.ScenarioScript, Params: map[string]v1alpha1.ParamValue{"K": "v"},
			Script: &v1alpha1.ScriptSource{ConfigMapName: "cm", Key: "s.js"}})
	_, err := ForRunner(run, hetuEndpoints, 0, 1)
	if err == nil || !strings.Contains(err.Error(), `scenario "mine": the source of its script (ConfigMap cm key s.js) was not provided`) {
		t.Fatalf("missing source: %v", err)
	}
	inv, err := ForRunner(run, hetuEndpoints, 0, 1, WithScripts(map[string]string{"mine": "export default function () {}"}))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Script != "entry.js" || inv.Files["custom/mine.js"] != "export default function () {}" {
		t.Fatalf("invocation: script %q files %v", inv.Script, inv.Files)
	}
	entry := inv.Files["entry.js"]
	for _, want := range []string{`export * from "/opt/benchrun/scripts/k6/benchrun.js";`, `import custom0 from "./custom/mine.js";`, "export function custom_0(data)"} {
		if !strings.Contains(entry, want) {
			t.Errorf("entry lacks %q:\n%s", want, entry)
		}
	}
	if !strings.Contains(inv.Env[EnvPlan], `"exec":"custom_0"`) {
		t.Errorf("plan does not name the exec function: %s", inv.Env[EnvPlan])
	}
	dir := t.TempDir()
	script, err := inv.Materialize(dir)
	if err != nil || script != dir+"/entry.js" {
		t.Fatalf("materialize: %q %v", script, err)
	}
	inv.Files["../escape.js"] = "x"
	if _, err := inv.Materialize(dir); err == nil {
		t.Error("a file outside the work directory was written")
	}
}

func TestExternalTLSCAFromSecret(t *testing.T) {
	run := hetuRun()
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "g", Type: v1alpha1.ScenarioRedisGet}}
	run.Spec.Target = v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{
		Kind: v1alpha1.ExternalRedis, Addresses: []string{"r-1.tair.aliyuncs.com:6380"},
		TLS: &v1alpha1.TLSSpec{Enabled: true, CASecretRef: &v1alpha1.SecretKeyRef{Name: "tair", Key: "ca.pem"}},
	}}
	inv, err := ForRunner(run, nil, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.SecretEnv) != 1 || inv.SecretEnv[0].Name != EnvRedisTLSCA || inv.SecretEnv[0].Secret.Key != "ca.pem" {
		t.Fatalf("secret env: %+v", inv.SecretEnv)
	}
	run.Spec.Target.External.TLS.Enabled = false
	if inv, _ = ForRunner(run, nil, 0, 1); len(inv.SecretEnv) != 0 {
		t.Fatalf("CA asked for with TLS off: %+v", inv.SecretEnv)
	}
}

// TestPlanScenarioAddress: each planned scenario carries the BENCHRUN_TARGET entry its type's
// descriptor names (benchrun.js reads TARGET[address]), every address but "any" is the JSON
// name of a Target entry (Target.Addrs finds it), and a missing one is refused naming what
// the scenario needs.
func TestPlanScenarioAddress(t *testing.T) {
	inv, err := ForRunnerIn("/repo/scripts/k6", hetuRun(), hetuEndpoints, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(inv.Env[EnvPlan], `"type":"hetu.get","address":"hetu"`) ||
		!strings.Contains(inv.Env[EnvPlan], `"type":"redis.upsert","address":"redis"`) {
		t.Errorf("plan: %s", inv.Env[EnvPlan])
	}
	full := Target{Redis: &RedisTarget{Addrs: []string{"r"}}, HeTu: &HeTuTarget{Addrs: []string{"h"}},
		Streams: map[string]*TCPTarget{"tcp": {Addrs: []string{"t"}}, "http": {Addrs: []string{"w"}}, "grpc": {Addrs: []string{"g"}}}}
	for _, d := range workload.All() {
		if d.Address == workload.AddressAny {
			continue
		}
		if len(full.Addrs(string(d.Address))) != 1 {
			t.Errorf("%s: address %q is no entry of BENCHRUN_TARGET", d.Type, d.Address)
		}
		spec := Spec{Scenarios: []Scenario{{Name: "s", Type: string(d.Type), GRPC: &GRPCCall{Method: "a/b"}, HeTuCall: &HeTuCall{RPC: "r"}}}}
		if err := checkTarget(spec, Target{}); err == nil || !strings.Contains(err.Error(), "needs "+d.Address.Endpoint()+" and the target has none") {
			t.Errorf("%s without its address: %v", d.Type, err)
		}
		if err := checkTarget(spec, full); err != nil {
			t.Errorf("%s: %v", d.Type, err)
		}
	}
	if err := checkTarget(Spec{Scenarios: []Scenario{{Name: "s", Type: "nope"}}}, full); err == nil || !strings.Contains(err.Error(), `unknown type "nope"`) {
		t.Errorf("unknown type: %v", err)
	}
}
