package bench

import (
	"testing"

	"github.com/grafana/sobek"
)

// TestHotPathsRegistered: every workload client's file registers its JS function in its own
// init (no list in module.go), and a name registered twice is refused.
func TestHotPathsRegistered(t *testing.T) {
	for _, name := range []string{"redis", "echo", "http", "grpc"} {
		if hotPaths[name] == nil {
			t.Errorf("k6/x/benchrun: no hot path %s registered", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a hot path registered twice did not panic")
		}
	}()
	registerHotPath("grpc", func(*Module, sobek.FunctionCall) sobek.Value { return nil })
}
