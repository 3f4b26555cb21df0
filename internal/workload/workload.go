// Package workload is the one home of what benchrun knows about each scenario type (workload):
// what it supports (body size, the open model, custom targets, external target kinds, params
// keys) and how long a scenario lasts. The plan (runner schedule), lifecycle (run timeout,
// fault due times), `benchrun run` and the validator's tests read it, so a rule cannot drift
// from the code that runs the scenario. The CRD's CEL rules cannot call Go: they repeat these
// facts: hack/workload-cel generates their lists of types from the descriptors (package
// celgen), and internal/validation's tests check what admission then accepts.
package workload

import (
	"slices"
	"strings"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// Grace is the graceful stop of each scenario and the gap before the next one starts (the
// runners' schedule, scripts/k6/benchrun.js, counts it the same way).
const Grace = 2 * time.Second

// Descriptor is what one scenario type supports.
type Descriptor struct {
	// Type is the scenario type, such as redis.get.
	Type v1alpha1.ScenarioType
	// BodySize tells whether bodySize applies.
	BodySize bool
	// OpenModel tells whether arrival (the open model) applies.
	OpenModel bool
	// Closed is why arrival does not apply (a type without OpenModel), in the CRD's message.
	Closed string
	// Custom tells whether it runs against a custom target.
	Custom bool
	// External are the external target kinds it runs against (nil: any).
	External []v1alpha1.ExternalKind
	// Server is what its scenarios connect to, in the CRD's message when the target has none
	// (a type outside the hetu.* and redis.* target rules): "a gRPC server".
	Server string
	// Params are the params keys it reads (nil with FreeParams).
	Params []string
	// FreeParams: any params key is passed on (type script).
	FreeParams bool
	// Address is which of the target's addresses (plan.Target) its scenarios connect to.
	Address Address
	// Protocol is its packetd protocol table (ProtocolRedis, ProtocolHTTP, ProtocolGRPC;
	// "" for none): the report shape packetd has one row per scenario of it.
	Protocol string
	// Echo tells whether its scenarios are reported in the echo shape (the echo-server
	// comparison of seed 002) instead of the ya tables' comparison.
	Echo bool
	// Iterations tells whether its live progress counts k6 iterations (its calls are recorded
	// by the user's script, which k6 does not see).
	Iterations bool
	// Settings is the JSON name of its settings object in the API's Scenario (foo for
	// spec.load.scenarios[].foo) when internal/plan has no typed field of that name: the plan
	// passes the object as the API has it, under the same name, in BENCHRUN_PLAN ("": none;
	// the built-in http, grpc, hetuCall and ycsb settings have typed plan fields).
	Settings string
}

// Address is which address of the target a scenario type connects to: the entries of the
// load scripts' BENCHRUN_TARGET (plan.Target), which each target kind wires. Every address
// but Redis, HeTu and Any is a stream address (Streams): a new protocol names a new one in
// its descriptor and needs no constant here.
type Address string

// Target addresses.
const (
	// AddressRedis is the Redis endpoint (a proxy, or the master with its read replicas).
	AddressRedis Address = "redis"
	// AddressHeTu is the HeTu endpoint.
	AddressHeTu Address = "hetu"
	// AddressTCP is a plain TCP (or TLS) endpoint.
	AddressTCP Address = "tcp"
	// AddressHTTP is an HTTP endpoint.
	AddressHTTP Address = "http"
	// AddressGRPC is a gRPC endpoint.
	AddressGRPC Address = "grpc"
	// AddressAny is whatever the target has (a script reads BENCHRUN_TARGET itself).
	AddressAny Address = "any"
)

// endpoints are what a scenario on each address needs, in error messages.
var endpoints = map[Address]string{AddressRedis: "a Redis endpoint", AddressHeTu: "a HeTu endpoint",
	AddressTCP: "a TCP endpoint", AddressHTTP: "an HTTP endpoint", AddressGRPC: "a gRPC endpoint"}

// Endpoint is what a scenario connecting to a needs, for error messages: "a gRPC endpoint".
func (a Address) Endpoint() string {
	if e, ok := endpoints[a]; ok {
		return e
	}
	return "a " + string(a) + " endpoint"
}

// IsStream tells whether a is a stream address: a plain TCP (or TLS) endpoint (Streams).
func (a Address) IsStream() bool {
	return a != "" && a != AddressRedis && a != AddressHeTu && a != AddressAny
}

// Streams are the stream addresses of the descriptors (tcp, http, grpc), in their order: the
// protocols spoken over a plain TCP (or TLS) connection. Each is a BENCHRUN_TARGET entry of
// its own name with the same fields (target.StreamAddresses), which a custom target fills
// with its port named like it (else its first port) and an external target of the kind
// named like it with its addresses.
func Streams() []Address {
	var out []Address
	for _, d := range descriptors {
		if d.Address.IsStream() && !slices.Contains(out, d.Address) {
			out = append(out, d.Address)
		}
	}
	return out
}

// ExternalKinds are the external target kinds of ds: those of the Redis and HeTu addresses
// first (the targets benchrun also deploys), then the others in the descriptors' order. With
// All() it is the ExternalKind Enum (hack/workload-cel generates it).
func ExternalKinds(ds []Descriptor) []v1alpha1.ExternalKind {
	var out []v1alpha1.ExternalKind
	out = kindsWhere(out, ds, func(d Descriptor) bool { return d.Address == AddressRedis })
	out = kindsWhere(out, ds, func(d Descriptor) bool { return d.Address == AddressHeTu })
	return kindsWhere(out, ds, func(Descriptor) bool { return true })
}

// StreamKinds are the external kinds of ds's types on stream addresses (tcp, http, grpc):
// endpoints without Redis credentials or HeTu settings.
func StreamKinds(ds []Descriptor) []v1alpha1.ExternalKind {
	return kindsWhere(nil, ds, func(d Descriptor) bool { return d.Address.IsStream() })
}

// kindsWhere appends to out the external kinds of the descriptors of ds that keep accepts,
// in order, each kind once.
func kindsWhere(out []v1alpha1.ExternalKind, ds []Descriptor, keep func(Descriptor) bool) []v1alpha1.ExternalKind {
	for _, d := range ds {
		if !keep(d) {
			continue
		}
		for _, k := range d.External {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// Exec is the function of scripts/k6/benchrun.js running its scenarios (the k6 exec): the
// type with dots as underscores (tcp.echo: tcp_echo), as benchrun.js derives it.
func (d Descriptor) Exec() string { return strings.ReplaceAll(string(d.Type), ".", "_") }

// The packetd protocol tables (report shape packetd: "### Redis", "### HTTP", "### Grpc").
const (
	// ProtocolRedis is the Redis protocol table (scenarios that name their command).
	ProtocolRedis = "Redis"
	// ProtocolHTTP is the HTTP protocol table.
	ProtocolHTTP = "HTTP"
	// ProtocolGRPC is the Grpc protocol table.
	ProtocolGRPC = "Grpc"
)

// Table is a packetd protocol table (report shape packetd): one row per scenario whose
// type's descriptor names its Protocol, in report.md, `benchrun report --format packetd` and
// its own CSV report file. internal/results and internal/lifecycle loop over Tables, so a new
// protocol adds its Table here and nothing in those packages.
type Table struct {
	// Protocol is its name: the PROTO cells and the caption's first word.
	Protocol string
	// Command tells whether it has a COMMAND column (after WORKERS) and rows only for the
	// scenarios that name their command; report.md writes such a table with the Redis shapes,
	// before the open-model tables, the others after them.
	Command bool
	// Note is the caption's explanation, before its list of rows.
	Note string
	// CSV is the report file holding it, written when it has rows.
	CSV string
}

// tables are the packetd protocol tables in the order reports print them.
var tables = []Table{
	{Protocol: ProtocolRedis, Command: true, Note: "PROTO/METRICS: the target's INFO commandstats", CSV: "redis-protocol.csv"},
	{Protocol: ProtocolGRPC, Note: "REQUEST: calls made; status codes in the return value and error kind tables", CSV: "grpc-protocol.csv"},
	{Protocol: ProtocolHTTP, Note: "REQUEST: requests made; status codes in the return value and error kind tables", CSV: "http-protocol.csv"},
}

// Tables are the packetd protocol tables in the order reports print them.
func Tables() []Table { return slices.Clone(tables) }

// TableOf is the packetd protocol table named protocol; false for none.
func TableOf(protocol string) (Table, bool) {
	for _, t := range tables {
		if t.Protocol == protocol {
			return t, true
		}
	}
	return Table{}, false
}

// Report table shapes (`benchrun report --format`), named after where the seeds' tables come
// from: ya (seeds 000/001, every scenario), echo (002), packetd (003), ycsb (004, Pegasus).
const (
	// ShapeYa is the ya runner's tables: CPS, execution time, return values (every scenario).
	ShapeYa = "ya"
	// ShapeEcho is the echo-server comparison (types with Echo).
	ShapeEcho = "echo"
	// ShapePacketd is the packetd protocol tables (types with a Protocol).
	ShapePacketd = "packetd"
	// ShapeYCSB is the Pegasus per-operation table (ycsb scenarios).
	ShapeYCSB = "ycsb"
)

// Shapes are the report shapes in the order reports print them.
func Shapes() []string { return []string{ShapeYa, ShapeEcho, ShapePacketd, ShapeYCSB} }

// redisKinds are the external kinds with a Redis endpoint.
var redisKinds = []v1alpha1.ExternalKind{v1alpha1.ExternalRedis}

// descriptors are every built-in scenario type, in the API's order.
var descriptors = []Descriptor{
	hetu(v1alpha1.ScenarioHeTuHelloWorld), hetu(v1alpha1.ScenarioHeTuGet), hetu(v1alpha1.ScenarioHeTuGetThenUpdate),
	hetu(v1alpha1.ScenarioHeTuGet2Update2), hetu(v1alpha1.ScenarioHeTuCall),
	redis(v1alpha1.ScenarioRedisUpsert, false, false, "batch", "prefill", "serverCounts").closed("a closed loop only"),
	redis(v1alpha1.ScenarioRedisGet, true, true, "batch", "prefill", "serverCounts"),
	redis(v1alpha1.ScenarioRedisSet, true, true, "batch", "serverCounts"),
	redis(v1alpha1.ScenarioRedisPing, false, true, "batch", "serverCounts"),
	redis(v1alpha1.ScenarioRedisCommand, false, true, "batch", "serverCounts"),
	redis(v1alpha1.ScenarioYCSB, true, true, "batch", "serverCounts"),
	{Type: v1alpha1.ScenarioScript, BodySize: true, Custom: true, FreeParams: true, Address: AddressAny, Iterations: true,
		Closed: "a script's function times its own calls, so they cannot be corrected for coordinated omission"},
	{Type: v1alpha1.ScenarioTCPEcho, BodySize: true, OpenModel: true, Custom: true, External: []v1alpha1.ExternalKind{v1alpha1.ExternalTCP},
		Server: "a TCP echo server", Params: []string{"batch"}, Address: AddressTCP, Echo: true},
	{Type: v1alpha1.ScenarioHTTP, BodySize: true, OpenModel: true, Custom: true, External: []v1alpha1.ExternalKind{v1alpha1.ExternalHTTP},
		Server: "an HTTP server", Params: []string{"batch"}, Address: AddressHTTP, Protocol: ProtocolHTTP},
	{Type: v1alpha1.ScenarioGRPC, BodySize: true, OpenModel: true, Custom: true, External: []v1alpha1.ExternalKind{v1alpha1.ExternalGRPC},
		Server: "a gRPC server", Params: []string{"batch"}, Address: AddressGRPC, Protocol: ProtocolGRPC},
}

// hetu is the descriptor of a hetu.* type.
func hetu(t v1alpha1.ScenarioType) Descriptor {
	return Descriptor{Type: t, OpenModel: true, External: []v1alpha1.ExternalKind{v1alpha1.ExternalHeTu}, Params: []string{"batch", "seed"},
		Address: AddressHeTu}
}

// redis is the descriptor of a Redis type (redis.* and ycsb): the Redis protocol table.
func redis(t v1alpha1.ScenarioType, bodySize, open bool, params ...string) Descriptor {
	return Descriptor{Type: t, BodySize: bodySize, OpenModel: open, External: redisKinds, Params: params,
		Address: AddressRedis, Protocol: ProtocolRedis}
}

// closed is d with arrival not applying, for reason why.
func (d Descriptor) closed(why string) Descriptor {
	d.OpenModel, d.Closed = false, why
	return d
}

// All are the descriptors of every built-in scenario type.
func All() []Descriptor { return slices.Clone(descriptors) }

// Register adds d (a type made up by a test, such as foo) to the descriptors until remove is
// called: tests show that a type flows through the plan and the target wiring with nothing
// but its descriptor. Only for tests that do not run in parallel with others reading them.
func Register(d Descriptor) (remove func()) {
	saved := descriptors
	descriptors = append(slices.Clone(descriptors), d)
	return func() { descriptors = saved }
}

// For is the descriptor of type t; false for an unknown type.
func For(t v1alpha1.ScenarioType) (Descriptor, bool) {
	for _, d := range descriptors {
		if d.Type == t {
			return d, true
		}
	}
	return Descriptor{}, false
}

// Of is the descriptor of a scenario type given as a string (result documents, plans); false
// for an unknown type.
func Of(t string) (Descriptor, bool) { return For(v1alpha1.ScenarioType(t)) }

// IsHeTu tells whether t is a hetu.* type.
func IsHeTu(t v1alpha1.ScenarioType) bool { return strings.HasPrefix(string(t), "hetu.") }

// ReadsParam tells whether scenarios of this type read params key k.
func (d Descriptor) ReadsParam(k string) bool { return d.FreeParams || slices.Contains(d.Params, k) }

// ScenarioLength is how long scenario i of spec runs: its arrival's stages (their total) or
// search (maxSteps × stepDuration), else its duration, else load.duration. A requests
// scenario's length is its bound (load.duration): it may end sooner.
func ScenarioLength(spec *v1alpha1.BenchmarkRunSpec, i int) time.Duration {
	return Length(&spec.Load, spec.Load.Scenarios[i])
}

// Length is ScenarioLength for scenario s of load.
func Length(load *v1alpha1.LoadSpec, s v1alpha1.Scenario) time.Duration {
	if d, ok := s.Arrival.Length(); ok {
		return d
	}
	if s.Duration != nil {
		return s.Duration.Duration
	}
	return load.Duration.Duration
}

// Window is when a scenario runs, relative to the load start.
type Window struct {
	// Start is the scenario's offset from the load start.
	Start time.Duration
	// Duration is how long its virtual users run (ScenarioLength).
	Duration time.Duration
}

// ScenarioWindows are the scenarios' windows by name, as the runners schedule them: one after
// another, each followed by Grace.
func ScenarioWindows(spec *v1alpha1.BenchmarkRunSpec) map[string]Window {
	out := make(map[string]Window, len(spec.Load.Scenarios))
	var offset time.Duration
	for i, s := range spec.Load.Scenarios {
		d := ScenarioLength(spec, i)
		out[s.Name] = Window{Start: offset, Duration: d}
		offset += d + Grace
	}
	return out
}

// TotalLength is the sum of every scenario's length (no grace between them): what
// timeouts.run must at least be. Requests scenarios are not counted (they may end at once).
func TotalLength(spec *v1alpha1.BenchmarkRunSpec) time.Duration {
	var total time.Duration
	for i, s := range spec.Load.Scenarios {
		if s.Requests != nil {
			continue
		}
		total += ScenarioLength(spec, i)
	}
	return total
}
