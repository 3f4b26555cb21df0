package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LoadSpec is the load generated against the target: scenarios run one after another,
// each by workers × tasksPerWorker concurrent virtual users spread over the runners.
// +kubebuilder:validation:XValidation:rule="!has(self.trim) || (!has(self.trim.warmUp) && !has(self.trim.coolDown)) || !has(self.duration) || !self.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (has(self.trim.warmUp) && !self.trim.warmUp.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')) || (has(self.trim.coolDown) && !self.trim.coolDown.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')) || !self.scenarios.all(s, ((!has(s.duration) || s.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')) && (!has(s.arrival) || ((!has(s.arrival.stages) || s.arrival.stages.all(st, st.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))) && (!has(s.arrival.search) || s.arrival.search.stepDuration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')))))) || self.scenarios.all(s, has(s.requests) || (has(s.arrival) && has(s.arrival.search) ? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].filter(i, i <= (has(s.arrival.search.maxSteps) ? s.arrival.search.maxSteps : 8)).map(i, duration(s.arrival.search.stepDuration)).sum() : (has(s.arrival) && has(s.arrival.stages) && size(s.arrival.stages) > 0 ? s.arrival.stages.map(st, duration(st.duration)).sum() : (has(s.duration) ? duration(s.duration) : duration(self.duration)))) > (has(self.trim.warmUp) ? duration(self.trim.warmUp) : duration('0s')) + (has(self.trim.coolDown) ? duration(self.trim.coolDown) : duration('0s')))",message="load.trim.warmUp + load.trim.coolDown must be shorter than every scenario's length (its arrival.stages' total, or arrival.search maxSteps × stepDuration, else its duration, else load.duration), else no sample is left for CPS: for example warmUp 10s and coolDown 5s with 1m scenarios",fieldPath=".trim"
// +kubebuilder:validation:XValidation:rule="self.runners.parallelism <= self.workers * self.tasksPerWorker || self.scenarios.all(s, has(s.arrival))",message="runners.parallelism must not exceed workers × tasksPerWorker (every runner needs at least one virtual user)"
// +kubebuilder:validation:XValidation:rule="self.scenarios.all(s, !has(s.arrival) || ((!has(s.arrival.rate) || s.arrival.rate >= self.runners.parallelism) && (!has(s.arrival.search) || s.arrival.search.startRate >= self.runners.parallelism)))",message="an arrival rate (arrival.rate, arrival.search.startRate) must be at least runners.parallelism: it is split over the runners in whole calls per timeUnit, and every runner needs a share"
// +kubebuilder:validation:XValidation:rule="self.scenarios.all(s, !has(s.arrival) || !has(s.arrival.stages) || s.arrival.stages.all(st, st.target == 0 || st.target >= self.runners.parallelism))",message="an arrival.stages[].target above 0 must be at least runners.parallelism: it is split over the runners in whole calls per timeUnit, and a runner with a share of 0 makes no call (for 4 runners, such as target: 400)",fieldPath=".scenarios"
type LoadSpec struct {
	// Scenarios run one after another, in this order.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	Scenarios []Scenario `json:"scenarios"`

	// Workers is the number of load processes (the seeds' ya -p), spread over the runners.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +optional
	Workers int32 `json:"workers,omitempty"`

	// TasksPerWorker is the number of concurrent tasks (connections) per worker (the seeds' ya -n).
	// Total concurrency is workers × tasksPerWorker.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	TasksPerWorker int32 `json:"tasksPerWorker,omitempty"`

	// Duration is how long each scenario runs (the seeds' ya -t), unless the scenario sets its own.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('168h'))",message="must be between 1s and 168h"
	// +kubebuilder:default="1m"
	// +optional
	Duration metav1.Duration `json:"duration,omitempty"`

	// Trim says which samples count for the CPS figure (warm-up and cool-down trimming).
	// +kubebuilder:default={}
	// +optional
	Trim TrimSpec `json:"trim,omitempty"`

	// Runners says how many k6 runner pods generate the load and where they run.
	// +kubebuilder:default={}
	// +optional
	Runners RunnerSpec `json:"runners,omitempty"`
}

// ScenarioType is what a scenario calls.
// +workloadcel:begin=enum generated by hack/workload-cel from internal/workload: do not edit
// +kubebuilder:validation:Enum=hetu.hello_world;hetu.get;hetu.get_then_update;hetu.get2_update2;hetu.call;redis.upsert;redis.get;redis.set;redis.ping;redis.command;ycsb;script;tcp.echo;http;grpc
// +workloadcel:end
type ScenarioType string

const (
	// ScenarioHeTuHelloWorld calls the HeTu RPC hello_world (no database access).
	ScenarioHeTuHelloWorld ScenarioType = "hetu.hello_world"
	// ScenarioHeTuGet calls the HeTu RPC just_get: one row read by id.
	ScenarioHeTuGet ScenarioType = "hetu.get"
	// ScenarioHeTuGetThenUpdate calls the HeTu RPC upsert: read by unique index, update, commit.
	ScenarioHeTuGetThenUpdate ScenarioType = "hetu.get_then_update"
	// ScenarioHeTuGet2Update2 calls the HeTu RPC exchange_data: two upserts in one commit.
	ScenarioHeTuGet2Update2 ScenarioType = "hetu.get2_update2"
	// ScenarioHeTuCall calls any HeTu RPC of the app (hetuCall: the RPC and argument templates).
	ScenarioHeTuCall ScenarioType = "hetu.call"
	// ScenarioRedisUpsert runs HeTu's backend upsert directly on Redis; returns the attempts.
	ScenarioRedisUpsert ScenarioType = "redis.upsert"
	// ScenarioRedisGet runs GET of bodySize-byte values.
	ScenarioRedisGet ScenarioType = "redis.get"
	// ScenarioRedisSet runs SET of bodySize-byte values.
	ScenarioRedisSet ScenarioType = "redis.set"
	// ScenarioRedisPing runs PING.
	ScenarioRedisPing ScenarioType = "redis.ping"
	// ScenarioRedisCommand runs any command template (redisCommand) with random keys and values.
	ScenarioRedisCommand ScenarioType = "redis.command"
	// ScenarioYCSB runs a YCSB-style read/update/insert mix.
	ScenarioYCSB ScenarioType = "ycsb"
	// ScenarioScript runs a custom k6 script from a ConfigMap.
	ScenarioScript ScenarioType = "script"
	// ScenarioTCPEcho sends bodySize-byte messages to a TCP echo server and reads them back.
	ScenarioTCPEcho ScenarioType = "tcp.echo"
	// ScenarioHTTP sends HTTP requests (method, path, headers, bodySize-byte body).
	ScenarioHTTP ScenarioType = "http"
	// ScenarioGRPC makes unary gRPC calls to one method (request from server reflection).
	ScenarioGRPC ScenarioType = "grpc"
)

// Scenario is one load phase.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || (self.type == 'ycsb' || !has(self.ycsb))",message="ycsb settings apply only to type: ycsb"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || ((self.type == 'redis.command') == has(self.redisCommand))",message="type: redis.command needs redisCommand (the command template), and redisCommand applies only to type: redis.command"
// +kubebuilder:validation:XValidation:rule="!has(self.duration) || !has(self.requests)",message="set either duration or requests on a scenario, not both (a requests scenario stops after that many calls, at the latest after load.duration)"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || (!has(self.requests) || self.type != 'script')",message="requests applies to the built-in scenario types, not to type: script (a script makes its own calls)"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || ((self.type == 'script') == has(self.script))",message="type: script needs script (a ConfigMap key holding the k6 script), and script applies only to type: script"
// +workloadcel:begin=bodySize generated by hack/workload-cel from internal/workload: do not edit
// +kubebuilder:validation:XValidation:rule="!has(self.type) || (!has(self.bodySize) || self.type in ['redis.get', 'redis.set', 'ycsb', 'script', 'tcp.echo', 'http', 'grpc'])",message="bodySize applies only to redis.get, redis.set, ycsb, script, tcp.echo, http and grpc scenarios"
// +workloadcel:end
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'http' || !has(self.bodySize) || (has(self.http) && has(self.http.method) && self.http.method in ['POST', 'PUT', 'PATCH'])",message="bodySize of an http scenario needs a method that sends a body: set http.method to POST, PUT or PATCH (GET, HEAD and DELETE send none), such as http: {method: POST, path: /items}",fieldPath=".bodySize"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || (!has(self.pipeline) || self.type == 'tcp.echo')",message="pipeline applies only to tcp.echo scenarios"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || (!has(self.http) || self.type == 'http')",message="http settings apply only to type: http"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || ((self.type == 'grpc') == has(self.grpc))",message="type: grpc needs grpc (at least grpc.method, such as benchrun.echo.v1.Echo/Echo), and grpc settings apply only to type: grpc"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'grpc' || !has(self.bodySize) || self.bodySize <= 4128768",message="bodySize of a grpc scenario must be at most 4128768 (4 MiB less 64 KiB: gRPC servers refuse messages over 4 MiB by default)"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || ((self.type == 'hetu.call') == has(self.hetuCall))",message="type: hetu.call needs hetuCall (at least hetuCall.rpc, such as just_get), and hetuCall applies only to type: hetu.call"
// +kubebuilder:validation:XValidation:rule="!has(self.grpc) || !has(self.grpc.bodyField) || has(self.bodySize)",message="grpc.bodyField needs bodySize (the number of bytes put in that field)"
// +workloadcel:begin=params generated by hack/workload-cel from internal/workload: do not edit
// +kubebuilder:validation:XValidation:rule="!has(self.type) || (!has(self.params) || self.type == 'script' || self.params.all(k, k == 'batch' || (self.type.startsWith('hetu.') && k == 'seed') || (self.type in ['redis.upsert', 'redis.get'] && k == 'prefill') || ((self.type.startsWith('redis.') || self.type == 'ycsb') && k == 'serverCounts')))",message="params of a built-in scenario type take only the keys it reads: batch (every type), seed (hetu.*), prefill (redis.upsert, redis.get), serverCounts (redis.*, ycsb); use the scenario's own fields for the rest (ycsb, http, keySpace, bodySize...); free params are for type: script"
// +workloadcel:end
// +workloadcel:begin=arrival generated by hack/workload-cel from internal/workload: do not edit
// +kubebuilder:validation:XValidation:rule="!has(self.arrival) || !has(self.type) || !(self.type in ['redis.upsert', 'script'])",message="arrival (the open model) does not apply to type redis.upsert (a closed loop only) nor to script (a script's function times its own calls, so they cannot be corrected for coordinated omission)"
// +workloadcel:end
// +kubebuilder:validation:XValidation:rule="!has(self.arrival) || !has(self.pipeline)",message="pipeline does not apply with arrival: an open-model connection has one call in flight (raise arrival.maxVUs instead)"
// +kubebuilder:validation:XValidation:rule="!has(self.arrival) || !has(self.requests)",message="set either arrival or requests on a scenario, not both (an arrival-rate scenario makes as many calls as its rate and duration say)"
// +kubebuilder:validation:XValidation:rule="!has(self.arrival) || !has(self.duration) || has(self.arrival.rate)",message="a scenario with arrival.stages or arrival.search lasts as long as its stages or steps: do not set its duration"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type == 'script' || !has(self.params) || ['seed', 'prefill', 'serverCounts'].all(k, !(k in self.params) || self.params[k] in ['true', 'false', 'True', 'False', 'TRUE', 'FALSE'])",message="params seed, prefill and serverCounts are 'true' or 'false' (such as prefill: 'false'): any other value is silently read as the default",fieldPath=".params"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type == 'script' || !has(self.params) || !('batch' in self.params) || self.params['batch'].matches('^[1-9][0-9]{0,3}$|^10000$')",message="params batch is the number of calls per k6 iteration, a whole number from 1 to 10000 (such as batch: '100'): any other value is silently read as the type's default",fieldPath=".params"
// +kubebuilder:validation:XValidation:rule="!has(self.arrival) || !has(self.params) || !('batch' in self.params)",message="params batch does not apply with arrival: an open model starts every call at its due time (batch is the closed loop's calls per iteration, silently ignored here): remove batch, or remove arrival for a closed loop such as params: {batch: '100'}",fieldPath=".params"
type Scenario struct {
	// Name identifies the scenario in results and reports (e.g. get_then_update).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$')",message="scenario names use lower-case letters, digits, '_' and '-', such as get_then_update"
	Name string `json:"name"`

	// Type is what the scenario calls: hetu.hello_world, hetu.get, hetu.get_then_update,
	// hetu.get2_update2, hetu.call, redis.upsert, redis.get, redis.set, redis.ping, redis.command, ycsb, script,
	// tcp.echo, http or grpc.
	Type ScenarioType `json:"type"`

	// Duration overrides load.duration for this scenario.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('168h'))",message="must be between 1s and 168h"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// Requests fixes the number of calls instead of a duration (the packetd tables' REQUEST):
	// split exactly over the runners and shared by their virtual users; the scenario ends
	// when they are made, at the latest after load.duration. Not with duration.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000000
	// +optional
	Requests *int64 `json:"requests,omitempty"`

	// RedisCommand is the command of a redis.command scenario.
	// +optional
	RedisCommand *RedisCommandSpec `json:"redisCommand,omitempty"`

	// KeySpace is the number of distinct keys (rows) the scenario draws from (default 30000, as the seeds).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +optional
	KeySpace *int64 `json:"keySpace,omitempty"`

	// BodySize is the value size in bytes for redis.get, redis.set and ycsb records, and the
	// message size of tcp.echo (default 1000, the seeds' 0.98 KiB), and the request body size
	// of http (default: no body), and the bytes put in a grpc request's body field (default: none).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	BodySize *int32 `json:"bodySize,omitempty"`

	// YCSB configures a ycsb scenario.
	// +optional
	YCSB *YCSBSpec `json:"ycsb,omitempty"`

	// Pipeline is the number of tcp.echo messages each connection keeps in flight (default 1:
	// send, wait for the echo, send the next). Each message is still one recorded call.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	Pipeline *int32 `json:"pipeline,omitempty"`

	// HTTP configures an http scenario (default: GET / over HTTP/1.1 with keep-alive).
	// +optional
	HTTP *HTTPSpec `json:"http,omitempty"`

	// HeTuCall is the RPC of a hetu.call scenario.
	// +optional
	HeTuCall *HeTuCallSpec `json:"hetuCall,omitempty"`

	// GRPC configures a grpc scenario: the method and its request.
	// +optional
	GRPC *GRPCSpec `json:"grpc,omitempty"`

	// Script is the custom k6 script of a script scenario.
	// +optional
	Script *ScriptSource `json:"script,omitempty"`

	// Arrival runs the scenario as an open model (an arrival rate, a ramp or a saturation
	// search) instead of workers × tasksPerWorker closed loops; see ArrivalSpec.
	// +optional
	Arrival *ArrivalSpec `json:"arrival,omitempty"`

	// Params are extra parameters passed to the scenario script as environment variables.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]*$'))",message="params keys must be valid environment variable names, such as KEY_PREFIX"
	// +optional
	Params map[string]ParamValue `json:"params,omitempty"`
}

// ParamValue is one value of a scenario's params; its length is bounded so that admission's
// CEL rules on it (such as the batch rule) fit their cost budget.
// +kubebuilder:validation:MaxLength=1024
type ParamValue string

// ParamMap is s.Params as plain strings (nil when there are none).
func (s *Scenario) ParamMap() map[string]string {
	if len(s.Params) == 0 {
		return nil
	}
	out := make(map[string]string, len(s.Params))
	for k, v := range s.Params {
		out[k] = string(v)
	}
	return out
}

// KeyDistribution is how keys are drawn.
// +kubebuilder:validation:Enum=uniform;zipfian;latest
type KeyDistribution string

const (
	// DistributionUniform draws every key with equal probability.
	DistributionUniform KeyDistribution = "uniform"
	// DistributionZipfian draws keys with YCSB's zipfian skew (a few keys are hot).
	DistributionZipfian KeyDistribution = "zipfian"
	// DistributionLatest favours the most recently inserted keys.
	DistributionLatest KeyDistribution = "latest"
)

// YCSBSpec is a YCSB-style workload: proportions of reads, updates and inserts.
// +kubebuilder:validation:XValidation:rule="self.readProportion + self.updateProportion + self.insertProportion + (has(self.readModifyWriteProportion) ? self.readModifyWriteProportion : 0.0) > 0.999 && self.readProportion + self.updateProportion + self.insertProportion + (has(self.readModifyWriteProportion) ? self.readModifyWriteProportion : 0.0) < 1.001",message="readProportion + updateProportion + insertProportion must sum to 1 (with readModifyWriteProportion when set)"
type YCSBSpec struct {
	// ReadProportion is the fraction of operations that read a record (0 to 1).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +kubebuilder:default=0.5
	// +optional
	ReadProportion float64 `json:"readProportion"`
	// UpdateProportion is the fraction of operations that update a record (0 to 1).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +kubebuilder:default=0.5
	// +optional
	UpdateProportion float64 `json:"updateProportion"`
	// InsertProportion is the fraction of operations that insert a new record (0 to 1).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +kubebuilder:default=0
	// +optional
	InsertProportion float64 `json:"insertProportion"`
	// ReadModifyWriteProportion is the fraction of operations that read a record and then
	// write one of its fields (YCSB workload F; timed as one operation, a write in the YCSB table).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +optional
	ReadModifyWriteProportion *float64 `json:"readModifyWriteProportion,omitempty"`
	// RecordCount is the number of records loaded before the run (default keySpace or 30000).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +optional
	RecordCount *int64 `json:"recordCount,omitempty"`
	// RequestDistribution is how keys are drawn: uniform, zipfian (default) or latest.
	// +kubebuilder:default=zipfian
	// +optional
	RequestDistribution KeyDistribution `json:"requestDistribution,omitempty"`
}

// RedisCommandSpec is a redis.command scenario's command template, as redis-benchmark's and
// memtier's custom commands: words separated by spaces; __rand_int__ becomes a random
// 12-digit key number below keySpace and __data__ dataSize random printable bytes, new for
// every call (e.g. "HSET key:__rand_int__ f __data__", or TairHash's "EXHSET k:__rand_int__ f __data__").
// +kubebuilder:validation:XValidation:rule="!has(self.dataSize) || self.command.contains('__data__')",message="redisCommand.dataSize sizes the __data__ placeholder, and the command has none: add it, such as command: SET key:__rand_int__ __data__",fieldPath=".dataSize"
// +kubebuilder:validation:XValidation:rule="!has(self.command) || !self.command.replace('__rand_int__', ' ').replace('__data__', ' ').matches('__[A-Za-z][A-Za-z0-9_]*__')",message="redisCommand.command: only the placeholders __rand_int__ and __data__ are filled in, any other __name__ would be sent literally: use them, such as SET key:__rand_int__ __data__",fieldPath=".command"
type RedisCommandSpec struct {
	// Command is the template.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self.matches('[^ ]')",message="redisCommand.command must name a command, such as HSET key:__rand_int__ f __data__"
	Command string `json:"command"`
	// DataSize is the size in bytes of each __data__ value (default 3, as redis-benchmark's -d).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	DataSize *int32 `json:"dataSize,omitempty"`
}

// ScriptSource names a k6 script stored in a ConfigMap.
type ScriptSource struct {
	// ConfigMapName is the ConfigMap holding the script.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="script.configMapName must be a ConfigMap name (lower-case letters, digits, '-' and '.'), such as my-script"
	ConfigMapName string `json:"configMapName"`
	// Key is the ConfigMap key with the script (default script.js).
	// +kubebuilder:default="script.js"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="script.key must be a ConfigMap key (letters, digits, '-', '_' and '.'), such as script.js"
	// +optional
	Key string `json:"key,omitempty"`
}

// TrimSpec says which samples count for CPS. By default the first and last 10 % of samples
// (ordered by start time) are dropped, as the seeds do; alternatively fixed warm-up and
// cool-down periods. Latency statistics always use every sample, like the seeds.
// +kubebuilder:validation:XValidation:rule="!has(self.dropPercent) || (!has(self.warmUp) && !has(self.coolDown))",message="use either dropPercent or warmUp/coolDown, not both"
type TrimSpec struct {
	// DropPercent is the percentage of samples dropped at each end (default 10).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=45
	// +optional
	DropPercent *int32 `json:"dropPercent,omitempty"`
	// WarmUp is a period at the start of each scenario excluded from CPS.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h30m"
	// +optional
	WarmUp *metav1.Duration `json:"warmUp,omitempty"`
	// CoolDown is a period at the end of each scenario excluded from CPS.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h30m"
	// +optional
	CoolDown *metav1.Duration `json:"coolDown,omitempty"`
}

// RunnerSpec says how many k6 runner pods generate the load and where they run.
type RunnerSpec struct {
	// Parallelism is the number of runner pods; the virtual users are split evenly between them.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	Parallelism int32 `json:"parallelism,omitempty"`

	// OnePerNode places at most one runner per node (required pod anti-affinity), as dedicated load nodes.
	// +optional
	OnePerNode bool `json:"onePerNode,omitempty"`

	// Image is the runner image with benchrun's k6 build (default: the operator's configured runner image).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// Pool is the load pool the runners need (a DNS-1123 label, at most 49 characters): runs
	// naming the same pool never overlap; they wait in phase Queued and start one after
	// another (spec.priority first, then oldest first). Unset: the run never waits.
	// +kubebuilder:validation:MaxLength=49
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="runners.pool must be a DNS-1123 label (lowercase letters, digits and '-', such as load-a)"
	// +optional
	Pool string `json:"pool,omitempty"`

	// PriorityClassName is given to the runner pods.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// Affinity is added to the runner pods (combined with the one-per-node rule).
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Placement of the runner pods: resources (the seeds used 64-core nodes), nodeSelector, tolerations.
	// +optional
	Placement `json:",inline"`
}

// HTTPProtocol is the HTTP version an http scenario speaks.
// +kubebuilder:validation:Enum=http1.1;h2c
type HTTPProtocol string

const (
	// HTTP11 is HTTP/1.1.
	HTTP11 HTTPProtocol = "http1.1"
	// HTTP2 is HTTP/2: cleartext (h2c, prior knowledge), or h2 when the target uses TLS.
	HTTP2 HTTPProtocol = "h2c"
)

// HTTPSpec is the request an http scenario sends; each response is one call, its status code
// the return value (4xx and 5xx count as errors, their code as the error kind).
type HTTPSpec struct {
	// Method is GET (default), HEAD, POST, PUT, PATCH or DELETE.
	// +kubebuilder:validation:Enum=GET;HEAD;POST;PUT;PATCH;DELETE
	// +kubebuilder:default=GET
	// +optional
	Method string `json:"method,omitempty"`
	// Path is the request path with an optional query (default /).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/') && !self.contains(' ')",message="http.path must start with '/' and hold no spaces, such as /api/v1/items?id=1"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[?&](?i)(access_token|token|api_key|apikey|password|passwd|secret|auth|signature|sig)=')",message="http.path must not hold credentials in its query (such as ?token=...): they show in the spec and the runner pods; use a path such as /api/v1/items?id=1"
	// +optional
	Path string `json:"path,omitempty"`
	// Headers are added to every request (values are not secret: they show in the spec).
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z0-9-]{1,64}$') && !(k.lowerAscii() in ['content-length', 'transfer-encoding', 'connection']))",message="http.headers names are letters, digits and '-' (Content-Length, Transfer-Encoding and Connection are set by benchrun)"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k.lowerAscii() in ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-auth-token', 'api-key']))",message="http.headers must not hold credentials (Authorization, Proxy-Authorization, Cookie, X-Api-Key, X-Auth-Token, Api-Key): header values show in the spec and the runner pods; keep such headers out, such as headers: {Accept: application/json}"
	// +optional
	Headers map[string]string `json:"headers,omitempty"`
	// KeepAlive reuses each virtual user's connection (default true); false opens one per request.
	// +optional
	KeepAlive *bool `json:"keepAlive,omitempty"`
	// Protocol is http1.1 (default) or h2c (HTTP/2; h2 over TLS).
	// +kubebuilder:default="http1.1"
	// +optional
	Protocol HTTPProtocol `json:"protocol,omitempty"`
}

// GRPCSpec is the unary call a grpc scenario makes. The request message type comes from the
// server's reflection service (grpc.reflection.v1 or v1alpha), so the server must register
// it. Each call is one recorded call: status OK is the return value "OK", any other status
// an error of its code's kind (Unavailable, DeadlineExceeded...).
type GRPCSpec struct {
	// Method is the full method name: package.Service/Method (e.g. benchrun.echo.v1.Echo/Echo).
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^/?[A-Za-z_][A-Za-z0-9_.]*/[A-Za-z_][A-Za-z0-9_]*$')",message="grpc.method must be package.Service/Method, such as benchrun.echo.v1.Echo/Echo"
	Method string `json:"method"`
	// Request is the request message in protobuf JSON (default: the empty message), e.g.
	// {"text": "hi"}. Field names are checked against the method's request type at start.
	// +kubebuilder:validation:MaxLength=65536
	// +kubebuilder:validation:XValidation:rule="self.matches('^\\\\s*\\\\{')",message="grpc.request must be a JSON object: the request message in protobuf JSON"
	// +optional
	Request string `json:"request,omitempty"`
	// BodyField is the request's top-level bytes or string field that gets bodySize bytes
	// (default: its first bytes or string field). Only with bodySize.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*$')",message="grpc.bodyField must be a field name, such as payload"
	// +optional
	BodyField string `json:"bodyField,omitempty"`
	// Metadata are headers sent with every call (values are not secret: they show in the spec).
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z0-9][a-z0-9_.-]{0,63}$') && !k.startsWith('grpc-') && !(k in ['content-type', 'te', 'user-agent']))",message="grpc.metadata keys are lower-case letters, digits, '_', '.' and '-' (grpc-*, content-type, te and user-agent are set by gRPC)"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k in ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-auth-token', 'api-key']))",message="grpc.metadata must not hold credentials (authorization, cookie, x-api-key, x-auth-token, api-key): metadata values show in the spec and the runner pods; keep them out, such as metadata: {x-tenant: bench}"
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
}

// HeTuCallSpec is the RPC a hetu.call scenario calls on the HeTu app (the server's
// examples/hetu-bench app, or the user's own image). Each call is one recorded call of type
// hetu.<rpc>, its return value recorded as for the built-in hetu.* scenarios.
// +kubebuilder:validation:XValidation:rule="!has(self.args) || self.args.all(a, !a.replace('__rand_int__', ' ').replace('__rand_str3__', ' ').replace('__rand_str__', ' ').matches('__[A-Za-z][A-Za-z0-9_]*__'))",message="hetuCall.args: only the placeholders __rand_int__, __rand_str__ and __rand_str3__ are filled in, any other __name__ would be sent literally: use them, such as args: [__rand_int__, __rand_str__]",fieldPath=".args"
type HeTuCallSpec struct {
	// RPC is the endpoint or system name, such as just_get.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*$')",message="hetuCall.rpc must be a Python identifier, such as just_get"
	RPC string `json:"rpc"`
	// Args are the call's arguments as templates, new for every call: __rand_int__ becomes a
	// random integer in [1, keySpace] and __rand_str__ 8 random letters and digits. An argument
	// that is then a decimal integer is sent as a number, any other as a string; one in single
	// quotes ('42') is always a string (without the quotes).
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=1024
	// +optional
	Args []string `json:"args,omitempty"`
}
