package workload

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// TestLengths: a ramp lasts its stages, a search maxSteps × stepDuration (default 8 steps), a
// constant rate and a closed scenario their duration or load.duration; windows follow one
// another with Grace between; TotalLength leaves requests scenarios out.
func TestLengths(t *testing.T) {
	sec := func(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Second} }
	own, rate, n := sec(7), int64(10), int64(100)
	spec := &v1alpha1.BenchmarkRunSpec{Load: v1alpha1.LoadSpec{Duration: sec(4), Scenarios: []v1alpha1.Scenario{
		{Name: "ramp", Arrival: &v1alpha1.ArrivalSpec{Stages: []v1alpha1.ArrivalStage{{Target: 1, Duration: sec(4)}, {Target: 2, Duration: sec(5)}}}},
		{Name: "search", Arrival: &v1alpha1.ArrivalSpec{Search: &v1alpha1.SearchSpec{StartRate: 1, StepDuration: sec(3)}}},
		{Name: "rate", Duration: &own, Arrival: &v1alpha1.ArrivalSpec{Rate: &rate}},
		{Name: "closed"},
		{Name: "count", Requests: &n},
	}}}
	want := []time.Duration{9 * time.Second, 24 * time.Second, 7 * time.Second, 4 * time.Second, 4 * time.Second}
	w := ScenarioWindows(spec)
	var start time.Duration
	for i, s := range spec.Load.Scenarios {
		if got := ScenarioLength(spec, i); got != want[i] {
			t.Errorf("%s: length %v, want %v", s.Name, got, want[i])
		}
		if w[s.Name] != (Window{Start: start, Duration: want[i]}) {
			t.Errorf("%s: window %+v, want start %v", s.Name, w[s.Name], start)
		}
		start += want[i] + Grace
	}
	if got := TotalLength(spec); got != 44*time.Second {
		t.Errorf("total %v, want 44s (requests scenario left out)", got)
	}
}

// TestDescriptors: every built-in type has one descriptor; script alone takes free params.
func TestDescriptors(t *testing.T) {
	seen := map[v1alpha1.ScenarioType]bool{}
	for _, d := range All() {
		if seen[d.Type] {
			t.Errorf("%s twice", d.Type)
		}
		seen[d.Type] = true
		if got, ok := For(d.Type); !ok || got.Type != d.Type {
			t.Errorf("For(%s) = %+v, %v", d.Type, got, ok)
		}
		if d.FreeParams != (d.Type == v1alpha1.ScenarioScript) || !d.ReadsParam("batch") && d.Type != v1alpha1.ScenarioScript {
			t.Errorf("%s: params %+v", d.Type, d)
		}
	}
	if len(seen) != 15 {
		t.Errorf("%d types, want 15", len(seen))
	}
	if _, ok := For("nope"); ok {
		t.Error("an unknown type has a descriptor")
	}
}

// TestDescriptorAddresses: every type names the address it connects to, and one that runs
// against external targets connects to the address of those kinds: redis and hetu, else the
// stream address named like the kind (target's wiring fills the entry of the kind's name);
// the stream addresses are tcp, http and grpc; report shapes are known.
func TestDescriptorAddresses(t *testing.T) {
	byExternal := map[v1alpha1.ExternalKind]Address{v1alpha1.ExternalRedis: AddressRedis, v1alpha1.ExternalHeTu: AddressHeTu}
	if got := Streams(); !slices.Equal(got, []Address{AddressTCP, AddressHTTP, AddressGRPC}) {
		t.Errorf("Streams() = %v", got)
	}
	if got := ExternalKinds(All()); !slices.Equal(got, v1alpha1.ExternalKinds()) {
		t.Errorf("ExternalKinds(All()) = %v, the API's %v", got, v1alpha1.ExternalKinds())
	}
	if got := StreamKinds(All()); !slices.Equal(got, []v1alpha1.ExternalKind{v1alpha1.ExternalTCP, v1alpha1.ExternalHTTP, v1alpha1.ExternalGRPC}) {
		t.Errorf("StreamKinds(All()) = %v", got)
	}
	for _, d := range All() {
		if d.Address == "" {
			t.Errorf("%s: no Address", d.Type)
		}
		for _, k := range d.External {
			want, ok := byExternal[k]
			if !ok {
				want = Address(k)
			}
			if want != d.Address || d.Address.IsStream() == ok {
				t.Errorf("%s: runs against external kind %s but connects to %s", d.Type, k, d.Address)
			}
		}
		if got, ok := Of(string(d.Type)); !ok || got.Type != d.Type {
			t.Errorf("Of(%q) = %+v, %v", d.Type, got, ok)
		}
		if d.Echo && d.Protocol != "" {
			t.Errorf("%s: both the echo shape and a packetd table", d.Type)
		}
	}
	if got := Shapes(); len(got) != 4 || got[0] != ShapeYa {
		t.Errorf("Shapes() = %v", got)
	}
}

// TestTables: every Protocol a descriptor names has its packetd table, each table has a
// protocol of its own and a CSV file name of its own, the Redis table alone a COMMAND column;
// Exec derives the driver's function from the type.
func TestTables(t *testing.T) {
	for _, d := range All() {
		if _, ok := TableOf(d.Protocol); d.Protocol != "" && !ok {
			t.Errorf("%s: protocol %q has no table", d.Type, d.Protocol)
		}
	}
	protocols, files := map[string]bool{}, map[string]bool{}
	for _, tb := range Tables() {
		if protocols[tb.Protocol] || files[tb.CSV] || !strings.HasSuffix(tb.CSV, "-protocol.csv") || tb.Note == "" {
			t.Errorf("table %+v: protocol or file twice, or no note", tb)
		}
		protocols[tb.Protocol], files[tb.CSV] = true, true
		if tb.Command != (tb.Protocol == ProtocolRedis) {
			t.Errorf("%s: COMMAND column %v", tb.Protocol, tb.Command)
		}
	}
	if _, ok := TableOf(""); ok {
		t.Error(`TableOf("") found a table`)
	}
	if d, _ := For(v1alpha1.ScenarioTCPEcho); d.Exec() != "tcp_echo" {
		t.Errorf("tcp.echo runs %q", d.Exec())
	}
	if AddressGRPC.Endpoint() != "a gRPC endpoint" || Address("thrift").Endpoint() != "a thrift endpoint" {
		t.Errorf("endpoints %q %q", AddressGRPC.Endpoint(), Address("thrift").Endpoint())
	}
}
