package celgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/workload"
)

// TestGeneratedUpToDate: the generated blocks of api/v1alpha1 are what hack/workload-cel
// writes from the descriptors today (run `make manifests` when this fails), and every block
// is in one of the files.
func TestGeneratedUpToDate(t *testing.T) {
	blocks, err := Blocks(workload.All())
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, f := range Files {
		path := filepath.Join("..", "..", "..", "api", "v1alpha1", f)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Rewrite(src, blocks, used)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(src) {
			t.Errorf("%s: its generated CEL lines are stale: run make manifests (hack/workload-cel)", f)
		}
	}
	for name := range blocks {
		if !used[name] {
			t.Errorf("block %s is in none of %v", name, Files)
		}
	}
}

// TestNewTypeFoo: a made-up type foo with a custom-target port and an external kind foo on
// its own address (a new protocol), body size and the open model, appears in every list its
// descriptor puts it in (the external kinds' too), with no edit to the rules by hand.
func TestNewTypeFoo(t *testing.T) {
	foo := workload.Descriptor{Type: "foo", BodySize: true, OpenModel: true, Custom: true,
		External: []v1alpha1.ExternalKind{"foo"}, Server: "a foo server", Params: []string{"batch"}, Address: "foo"}
	blocks, err := Blocks(append(workload.All(), foo))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"enum":          ";grpc;foo",
		"bodySize":      "'grpc', 'foo'])\",message=\"bodySize applies only to redis.get, redis.set, ycsb, script, tcp.echo, http, grpc and foo scenarios\"",
		"suiteBodySize": "http, grpc and foo scenarios",
		"targets":       "message=\"scenarios of type foo need a foo server: set spec.target.custom, or spec.target.external with kind: foo\"",
		"params":        "k == 'batch' ||",
		// its external kind foo on its own (stream) address foo:
		"externalEnum":    "Enum=redis;hetu;tcp;http;grpc;foo",
		"externalKinds":   `{"redis", "hetu", "tcp", "http", "grpc", "foo"}`,
		"externalKindDoc": "Kind is the protocol: redis, hetu, tcp, http, grpc or foo.",
		"streamKinds":     "self.kind in ['tcp', 'http', 'grpc', 'foo']) || !has(self.passwordSecretRef)\",message=\"passwordSecretRef does not apply to kind tcp, http, grpc or foo\"",
	} {
		if got := strings.Join(blocks[name], "\n"); !strings.Contains(got, want) {
			t.Errorf("block %s: no %q in\n%s", name, want, got)
		}
	}
	if got := strings.Join(blocks["targets"], "\n"); !strings.Contains(got, "s.type in ['script', 'tcp.echo', 'http', 'grpc', 'foo']") {
		t.Errorf("the custom target rule does not admit foo:\n%s", got)
	}
	if got := strings.Join(blocks["targets"], "\n"); !strings.Contains(got, "an external target of kind hetu, tcp, http, grpc or foo has none") {
		t.Errorf("the Redis endpoint rule does not name the external kind foo:\n%s", got)
	}
	if _, err := Blocks(append(workload.All(), workload.Descriptor{Type: "bar"})); err == nil || !strings.Contains(err.Error(), "Closed") {
		t.Errorf("a type without the open model and without a Closed reason: %v", err)
	}
	if _, err := Blocks(append(workload.All(), workload.Descriptor{Type: "bar", OpenModel: true, External: []v1alpha1.ExternalKind{"bar"}})); err == nil || !strings.Contains(err.Error(), "Server") {
		t.Errorf("a type with an external kind of its own and no Server: %v", err)
	}
	redis2 := workload.Descriptor{Type: "ycsb2", OpenModel: true, Address: workload.AddressRedis}
	blocks, err = Blocks(append(workload.All(), redis2))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(blocks["targets"], "\n"); !strings.Contains(got, "!(s.type.startsWith('redis.') || s.type in ['ycsb', 'ycsb2'])") ||
		!strings.Contains(got, "scenarios of type redis.*, ycsb and ycsb2 need a Redis endpoint") {
		t.Errorf("a new type on the Redis address is not in the Redis endpoint rule:\n%s", got)
	}
}

// TestRewriteErrors: an unknown block and a block without its end line are errors.
func TestRewriteErrors(t *testing.T) {
	blocks := map[string][]string{"a": {"// x"}}
	for src, want := range map[string]string{
		"// +workloadcel:begin=b generated\n// +workloadcel:end\n": "unknown block b",
		"// +workloadcel:begin=a generated\n// old\n":              "no \"// +workloadcel:end\" line",
	} {
		if _, err := Rewrite([]byte(src), blocks, map[string]bool{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
	out, err := Rewrite([]byte("a\n// +workloadcel:begin=a generated\n// old\n// old2\n// +workloadcel:end\nb\n"), blocks, map[string]bool{})
	if err != nil || string(out) != "a\n// +workloadcel:begin=a generated\n// x\n// +workloadcel:end\nb\n" {
		t.Errorf("Rewrite: %q, %v", out, err)
	}
}
