// Package plan turns a BenchmarkRun into the k6 invocation of each runner: the entry script,
// arguments and environment. The operator (runner pods) and the local runner (processes)
// use the same plan, so a run.yaml loads a target the same way in both places.
//
// Every built-in scenario of a run executes in one k6 process through the generic entry
// script scripts/k6/benchrun.js, which reads the plan from the environment:
//
//	BENCHRUN_PLAN     JSON Spec: the scenarios in order, each with its duration, VUs and parameters
//	BENCHRUN_TARGET   JSON Target: where to connect (addresses only, no credentials)
//	BENCHRUN_RUNNER   the runner's name, written into its result document
//	BENCHRUN_RUNNER_INDEX, BENCHRUN_RUNNER_COUNT
//	                  the runner's 0-based index and the number of runners (YCSB inserts of
//	                  runner i of n take every n-th new key from i, so runners never collide)
//
// Credentials never appear in the plan: Invocation.SecretEnv names the environment variables
// that must be filled from Secrets (secretKeyRef in a pod, the run file's Secrets locally).
package plan

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/target"
	"github.com/benchrun/benchrun/internal/workload"
)

// ScriptDir is where the runner image keeps scripts/k6.
const ScriptDir = "/opt/benchrun/scripts/k6"

// EntryScript is the generic entry script (relative to the script directory).
const EntryScript = "benchrun.js"

// Grace is the graceful stop of each scenario and the gap before the next one starts
// (workload.Grace: the scenario windows faults are timed by count it the same way).
const Grace = workload.Grace

// Environment variables read by scripts/k6/benchrun.js.
const (
	// EnvPlan holds the JSON Spec.
	EnvPlan = "BENCHRUN_PLAN"
	// EnvTarget holds the JSON Target.
	EnvTarget = "BENCHRUN_TARGET"
	// EnvRunner holds the runner name.
	EnvRunner = "BENCHRUN_RUNNER"
	// EnvRunnerIndex holds the runner's 0-based index among the run's runners.
	EnvRunnerIndex = "BENCHRUN_RUNNER_INDEX"
	// EnvRunnerCount holds the number of runners of the run.
	EnvRunnerCount = "BENCHRUN_RUNNER_COUNT"
	// EnvRedisUsername is filled from a Secret: the Redis ACL user.
	EnvRedisUsername = target.EnvRedisUsername
	// EnvRedisPassword is filled from a Secret: the Redis password.
	EnvRedisPassword = target.EnvRedisPassword
	// EnvRedisTLSCA is filled from a Secret: the PEM CA bundle verifying a TLS Redis endpoint.
	EnvRedisTLSCA = target.EnvRedisTLSCA
	// EnvTLSCA is filled from a Secret: the PEM CA bundle verifying a TLS tcp or http endpoint.
	EnvTLSCA = target.EnvTLSCA
	// EnvHeTuAuthKey is filled from a Secret: the HeTu auth key for signed hellos.
	EnvHeTuAuthKey = target.EnvHeTuAuthKey
)

// Invocation is how one runner runs k6: `k6 run --out benchrun=FILE Args... Script` with Env
// added, plus SecretEnv resolved from Secrets.
type Invocation struct {
	// Script is the k6 entry script path.
	Script string `json:"script"`
	// Args are extra k6 run arguments.
	Args []string `json:"args,omitempty"`
	// Env are extra environment variables (no secrets).
	Env map[string]string `json:"env,omitempty"`
	// SecretEnv are environment variables whose values come from Secrets.
	SecretEnv []SecretEnv `json:"secretEnv,omitempty"`
	// VUs is the number of virtual users this runner runs in each scenario.
	VUs int `json:"vus"`
	// Duration is how long the runner's k6 run lasts, graceful stops included.
	Duration time.Duration `json:"duration"`
	// Files are generated scripts (relative path → source) the runner writes into a work
	// directory before starting k6; Script is then relative to it. Set for custom scripts.
	Files map[string]string `json:"files,omitempty"`
}

// Materialize writes inv.Files into dir and returns the path of the script to run.
// Without Files it returns inv.Script as is.
func (inv Invocation) Materialize(dir string) (string, error) {
	if len(inv.Files) == 0 {
		return inv.Script, nil
	}
	for name, src := range inv.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			return "", fmt.Errorf("plan: file %q escapes the work directory", name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, filepath.FromSlash(inv.Script)), nil
}

// Option adjusts how a plan is built.
type Option func(*options)

type options struct {
	scripts        map[string]string
	remoteWriteURL string // default remote-write URL (WithRemoteWriteDefault)
}

// WithScripts gives the sources of the run's script scenarios, by scenario name (read from
// the ConfigMaps the scenarios name: by the operator in the cluster, from the run file locally).
func WithScripts(byScenario map[string]string) Option {
	return func(o *options) { o.scripts = byScenario }
}

// Spec is the scenario list given to benchrun.js (BENCHRUN_PLAN).
type Spec struct {
	// Scenarios run one after another.
	Scenarios []Scenario `json:"scenarios"`
	// GraceMs is each scenario's graceful stop and the gap before the next one, in ms.
	GraceMs int64 `json:"graceMs"`
}

// Scenario is one scenario as benchrun.js runs it.
type Scenario struct {
	// Name is the user's scenario name: the k6 scenario name and the name in the results.
	Name string `json:"name"`
	// Type is the scenario type (hetu.get, redis.upsert, ycsb...).
	Type string `json:"type"`
	// Address is the BENCHRUN_TARGET entry it connects to (workload.Descriptor.Address):
	// benchrun.js reads TARGET[address].
	Address string `json:"address,omitempty"`
	// StartMs is the offset of the scenario's start from the start of the k6 run.
	StartMs int64 `json:"startMs"`
	// DurationMs is how long the scenario's VUs run.
	DurationMs int64 `json:"durationMs"`
	// VUs is the number of virtual users (connections) of this runner.
	VUs int `json:"vus"`
	// KeySpace is the number of keys/rows drawn from.
	KeySpace int64 `json:"keySpace"`
	// BodySize is the value size in bytes (0: the scenario's default).
	BodySize int32 `json:"bodySize,omitempty"`
	// YCSB is the read/update/insert mix of a ycsb scenario.
	YCSB *YCSB `json:"ycsb,omitempty"`
	// Pipeline is the number of tcp.echo messages in flight per connection (0: 1).
	Pipeline int32 `json:"pipeline,omitempty"`
	// HTTP is the request of an http scenario.
	HTTP *HTTPRequest `json:"http,omitempty"`
	// GRPC is the call of a grpc scenario.
	GRPC *GRPCCall `json:"grpc,omitempty"`
	// HeTuCall is the RPC of a hetu.call scenario.
	HeTuCall *HeTuCall `json:"hetuCall,omitempty"`
	// Params are the user's extra parameters (environment variables of script scenarios).
	Params map[string]string `json:"params,omitempty"`
	// Exec is the entry module's function running a script scenario (custom_<i>).
	Exec string `json:"exec,omitempty"`
	// Requests, when set, is this runner's share of a fixed-count scenario's calls (the
	// run's requests split exactly over the runners); DurationMs is then its time limit.
	Requests *int64 `json:"requests,omitempty"`
	// TotalRequests is the fixed count over all runners (with Requests): runner 0's server-side
	// counts end the scenario's wait once the target served that many.
	TotalRequests *int64 `json:"totalRequests,omitempty"`
	// Command is a redis.command scenario's template, split into words.
	Command []string `json:"command,omitempty"`
	// DataSize is the size of each __data__ value of a redis.command scenario (0: default).
	DataSize int32 `json:"dataSize,omitempty"`
	// Arrival, when set, runs the scenario as an open model (arrival.go).
	Arrival *Arrival `json:"arrival,omitempty"`
	// Settings are the settings objects of a type without a typed field here, by their JSON
	// name (workload.Descriptor.Settings), as the API has them: entries of the scenario's
	// JSON of their own, after the typed fields (MarshalJSON).
	Settings map[string]json.RawMessage `json:"-"`
}

// HTTPRequest is an http scenario's request.
type HTTPRequest struct {
	// Method is the HTTP method.
	Method string `json:"method"`
	// Path is the request path (and query).
	Path string `json:"path"`
	// Headers are added to every request.
	Headers map[string]string `json:"headers,omitempty"`
	// KeepAlive reuses the VU's connection.
	KeepAlive bool `json:"keepAlive"`
	// Protocol is http1.1 or h2c.
	Protocol string `json:"protocol"`
}

// GRPCCall is a grpc scenario's unary call.
type GRPCCall struct {
	// Method is package.Service/Method.
	Method string `json:"method"`
	// Request is the request message in protobuf JSON ("": empty).
	Request string `json:"request,omitempty"`
	// BodyField is the field getting bodySize bytes ("": the first bytes or string field).
	BodyField string `json:"bodyField,omitempty"`
	// Metadata are sent with every call.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// HeTuCall is a hetu.call scenario's RPC.
type HeTuCall struct {
	// RPC is the endpoint or system name.
	RPC string `json:"rpc"`
	// Args are the argument templates (benchrun.js expands them for every call).
	Args []string `json:"args"`
}

// YCSB is a ycsb scenario's workload.
type YCSB struct {
	// Read is the read proportion.
	Read float64 `json:"read"`
	// Update is the update proportion.
	Update float64 `json:"update"`
	// Insert is the insert proportion.
	Insert float64 `json:"insert"`
	// ReadModifyWrite is the read-modify-write proportion.
	ReadModifyWrite float64 `json:"readModifyWrite,omitempty"`
	// RecordCount is the number of records loaded before the run.
	RecordCount int64 `json:"recordCount"`
	// Distribution is uniform, zipfian or latest.
	Distribution string `json:"distribution"`
}

// DefaultKeySpace is the number of keys/rows drawn from when a scenario does not say (the seeds' 30000).
const DefaultKeySpace = 30000

// ForRunner is the invocation of runner index (0-based) of count: its share of the virtual
// users, the target endpoints and the scenario list, with scripts under ScriptDir.
func ForRunner(run *v1alpha1.BenchmarkRun, endpoints []v1alpha1.Endpoint, index, count int, opts ...Option) (Invocation, error) {
	return ForRunnerIn(ScriptDir, run, endpoints, index, count, opts...)
}

// ForRunnerIn is ForRunner with scripts in scriptDir (the local runner uses the repository's
// scripts/k6; it must be an absolute path when the run has script scenarios).
func ForRunnerIn(scriptDir string, run *v1alpha1.BenchmarkRun, endpoints []v1alpha1.Endpoint, index, count int, opts ...Option) (Invocation, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if count < 1 || index < 0 || index >= count {
		return Invocation{}, fmt.Errorf("plan: runner %d of %d", index, count)
	}
	load := run.Spec.Load
	total := int(load.Workers) * int(load.TasksPerWorker)
	vus := share(total, index, count)
	if vus < 1 && !allOpen(load.Scenarios) { // open-model scenarios use arrival.maxVUs instead
		return Invocation{}, fmt.Errorf("plan: runner %d of %d gets no virtual user (workers × tasksPerWorker = %d)", index, count, total)
	}
	spec := Spec{GraceMs: Grace.Milliseconds()}
	var offset time.Duration
	var custom []string // script scenario names, in order
	for _, s := range load.Scenarios {
		d := workload.Length(&load, s)
		sc, err := scenarioFor(s, offset, d, vus)
		if err != nil {
			return Invocation{}, err
		}
		fixedCount(&sc, s, index, count)
		sc.Arrival = arrivalFor(s.Arrival, d, index, count)
		if s.Type == v1alpha1.ScenarioScript {
			if _, ok := o.scripts[s.Name]; !ok {
				return Invocation{}, fmt.Errorf("plan: scenario %q: the source of its script (ConfigMap %s) was not provided", s.Name, scriptRef(s.Script))
			}
			sc.Exec = fmt.Sprintf("custom_%d", len(custom))
			custom = append(custom, s.Name)
		}
		spec.Scenarios = append(spec.Scenarios, sc)
		offset += d + Grace
	}
	target, secrets := targetFor(&run.Spec.Target, endpoints)
	if err := checkTarget(spec, target); err != nil {
		return Invocation{}, err
	}
	planJSON, err := json.Marshal(spec)
	if err != nil {
		return Invocation{}, err
	}
	targetJSON, err := json.Marshal(target)
	if err != nil {
		return Invocation{}, err
	}
	inv := Invocation{
		Script: path.Join(scriptDir, EntryScript),
		Args:   []string{"--quiet", "--summary-mode", "disabled"},
		Env: map[string]string{
			EnvPlan:        string(planJSON),
			EnvTarget:      string(targetJSON),
			EnvRunner:      fmt.Sprintf("%s-%d", run.Name, index),
			EnvRunnerIndex: strconv.Itoa(index),
			EnvRunnerCount: strconv.Itoa(count),
		},
		SecretEnv: secrets,
		VUs:       vus,
		Duration:  offset,
	}
	addRemoteWrite(&inv, run, o.remoteWriteURL)
	addFaultWindows(&inv, run)
	if len(custom) > 0 {
		inv.Files = entryFiles(inv.Script, custom, o.scripts)
		inv.Script = customEntry
	}
	return inv, nil
}

// scenarioFor is a scenario's plan: it starts at offset, its VUs run for d. The settings of a
// type without a typed field here are its descriptor's Settings, passed as they are.
func scenarioFor(s v1alpha1.Scenario, offset, d time.Duration, vus int) (Scenario, error) {
	sc := Scenario{
		Name: s.Name, Type: string(s.Type), StartMs: offset.Milliseconds(), DurationMs: d.Milliseconds(),
		VUs: vus, KeySpace: DefaultKeySpace, Params: s.ParamMap(),
	}
	if d, ok := workload.For(s.Type); ok {
		sc.Address = string(d.Address)
		if d.Settings != "" {
			var err error
			if sc.Settings, err = settingsOf(s, d.Settings); err != nil {
				return Scenario{}, err
			}
		}
	}
	if s.KeySpace != nil {
		sc.KeySpace = *s.KeySpace
	}
	if s.BodySize != nil {
		sc.BodySize = *s.BodySize
	}
	if s.Pipeline != nil {
		sc.Pipeline = *s.Pipeline
	}
	if s.Type == v1alpha1.ScenarioHTTP {
		sc.HTTP = httpRequest(s.HTTP)
	}
	if c := s.HeTuCall; c != nil && s.Type == v1alpha1.ScenarioHeTuCall {
		sc.HeTuCall = &HeTuCall{RPC: c.RPC, Args: append([]string{}, c.Args...)}
	}
	if g := s.GRPC; g != nil && s.Type == v1alpha1.ScenarioGRPC {
		sc.GRPC = &GRPCCall{Method: g.Method, Request: g.Request, BodyField: g.BodyField, Metadata: g.Metadata}
	}
	if y := s.YCSB; y != nil {
		sc.YCSB = ycsbOf(y, sc.KeySpace)
	}
	return sc, nil
}

// ycsbOf is a ycsb scenario's workload, defaults filled in (recordCount: keySpace).
func ycsbOf(y *v1alpha1.YCSBSpec, keySpace int64) *YCSB {
	w := &YCSB{Read: y.ReadProportion, Update: y.UpdateProportion, Insert: y.InsertProportion,
		RecordCount: keySpace, Distribution: string(y.RequestDistribution)}
	if y.RecordCount != nil {
		w.RecordCount = *y.RecordCount
	}
	if y.ReadModifyWriteProportion != nil {
		w.ReadModifyWrite = *y.ReadModifyWriteProportion
	}
	if w.Distribution == "" {
		w.Distribution = string(v1alpha1.DistributionZipfian)
	}
	return w
}

// httpRequest is the request of an http scenario, defaults filled in.
func httpRequest(h *v1alpha1.HTTPSpec) *HTTPRequest {
	r := &HTTPRequest{Method: "GET", Path: "/", KeepAlive: true, Protocol: string(v1alpha1.HTTP11)}
	if h == nil {
		return r
	}
	r.Method, r.Path, r.Protocol = orDefault(h.Method, r.Method), orDefault(h.Path, r.Path), orDefault(string(h.Protocol), r.Protocol)
	r.Headers = h.Headers
	if h.KeepAlive != nil {
		r.KeepAlive = *h.KeepAlive
	}
	return r
}

// customEntry is the generated entry module of a run with script scenarios.
const customEntry = "entry.js"

// entryFiles generates the entry module of a run with script scenarios: everything of
// benchrun.js (options, setup, the built-in scenario functions) plus custom_<i>, which runs
// the default export of scenario i's script, kept next to it as custom/<name>.js.
func entryFiles(builtin string, names []string, sources map[string]string) map[string]string {
	files := map[string]string{}
	var b strings.Builder
	b.WriteString("// Generated by benchrun: the built-in entry script plus the run's custom script scenarios.\n")
	fmt.Fprintf(&b, "export * from %q;\n", builtin)
	for i, name := range names {
		rel := "custom/" + name + ".js"
		files[rel] = sources[name]
		fmt.Fprintf(&b, "import custom%d from %q;\n", i, "./"+rel)
		fmt.Fprintf(&b, "export function custom_%d(data) { return custom%d(data); }\n", i, i)
	}
	files[customEntry] = b.String()
	return files
}

// scriptRef names a script source for messages.
func scriptRef(s *v1alpha1.ScriptSource) string {
	if s == nil {
		return "(none)"
	}
	return s.ConfigMapName + " key " + s.Key
}

// SecretEnv is an environment variable filled from a Secret key (target.SecretEnv).
type SecretEnv = target.SecretEnv

// Target is where the scripts connect (BENCHRUN_TARGET): target.Addresses, wired by the
// target kind's registry entry (target.KindOf).
type Target = target.Addresses

// TCPTarget is a plain TCP (or TLS) endpoint.
type TCPTarget = target.StreamAddresses

// RedisTarget is a Redis endpoint.
type RedisTarget = target.RedisAddresses

// HeTuTarget is a HeTu endpoint.
type HeTuTarget = target.HeTuAddresses

// Endpoint roles the plan understands (declared with the target kinds that set them).
const (
	// RoleHeTu is a HeTu server.
	RoleHeTu = target.RoleHeTu
	// RoleRedis is a single Redis server.
	RoleRedis = target.RoleRedis
	// RoleMaster is the master of a Redis with replicas.
	RoleMaster = target.RoleMaster
	// RoleReplica is a Redis read replica.
	RoleReplica = target.RoleReplica
	// RoleProxy is the read/write-splitting proxy.
	RoleProxy = target.RoleProxy
	// RoleCustom is a custom target's first port.
	RoleCustom = target.RoleCustom
)

// targetFor maps the target spec and its endpoints to script addresses and secret env vars:
// the kind's own wiring (target.KindOf).
func targetFor(t *v1alpha1.TargetSpec, endpoints []v1alpha1.Endpoint) (Target, []SecretEnv) {
	k, err := target.KindOf(t)
	if err != nil {
		return Target{}, nil // checkTarget reports that no scenario has an address
	}
	return k.Wire(t, endpoints)
}

// checkTarget fails early when a scenario has nowhere to connect (e.g. endpoints not known
// yet): the address its type's descriptor names (workload.Descriptor.Address).
func checkTarget(spec Spec, t Target) error {
	for _, s := range spec.Scenarios {
		d, ok := workload.Of(s.Type)
		if !ok {
			return fmt.Errorf("plan: scenario %q has the unknown type %q", s.Name, s.Type)
		}
		if s.Type == string(v1alpha1.ScenarioHeTuCall) && s.HeTuCall == nil {
			return fmt.Errorf("plan: scenario %q (hetu.call) needs hetuCall.rpc", s.Name)
		}
		if d.Address == workload.AddressAny {
			continue // a custom script connects wherever it wants (BENCHRUN_TARGET tells it what exists)
		}
		if d.Address == workload.AddressGRPC && s.GRPC == nil {
			return fmt.Errorf("plan: scenario %q needs a gRPC endpoint and a method (grpc.method)", s.Name)
		}
		if len(t.Addrs(string(d.Address))) == 0 {
			return fmt.Errorf("plan: scenario %q needs %s and the target has none", s.Name, d.Address.Endpoint())
		}
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// share is runner index's part of n split over count runners (the first ones get the remainder).
func share(n, index, count int) int {
	s := n / count
	if index < n%count {
		s++
	}
	return s
}

// SummaryOptions are the seeds' statistics rules (internal/results) adjusted by the run's
// spec.load.trim: the operator's status and the local runner's tables use the same.
func SummaryOptions(run *v1alpha1.BenchmarkRun) results.Options {
	opts := results.DefaultOptions()
	trim := run.Spec.Load.Trim
	if trim.DropPercent != nil {
		opts.TrimFraction = float64(*trim.DropPercent) / 100
	}
	if trim.WarmUp != nil {
		opts.WarmUp = trim.WarmUp.Duration
	}
	if trim.CoolDown != nil {
		opts.CoolDown = trim.CoolDown.Duration
	}
	opts.Search, opts.Ramps = searchRules(run), rampScenarios(run)
	return opts
}

// fixedCount adds a scenario's fixed request count (runner index's exact share of it) and
// its redis.command template to its plan.
func fixedCount(sc *Scenario, s v1alpha1.Scenario, index, count int) {
	if s.Requests != nil {
		n, total := share64(*s.Requests, index, count), *s.Requests
		sc.Requests, sc.TotalRequests = &n, &total
	}
	if c := s.RedisCommand; c != nil {
		sc.Command = strings.Fields(c.Command)
		if c.DataSize != nil {
			sc.DataSize = *c.DataSize
		}
	}
}

// share64 is share for int64 counts: runner index's part of n over count runners, the
// first n % count runners one more, so the parts add up to n.
func share64(n int64, index, count int) int64 {
	s := n / int64(count)
	if int64(index) < n%int64(count) {
		s++
	}
	return s
}
