package main

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/echo"
	"github.com/benchrun/benchrun/internal/plan"
)

// echoRun is a run of one 2 s tcp.echo scenario against addr (an external tcp target).
func echoRun(addr string, vus int32, size, pipeline int32) *v1alpha1.BenchmarkRun {
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: v1alpha1.ExternalTCP, Addresses: []string{addr}}},
			Load: v1alpha1.LoadSpec{Workers: 1, TasksPerWorker: vus, Duration: metav1.Duration{Duration: 2 * time.Second},
				Scenarios: []v1alpha1.Scenario{{Name: "echo", Type: v1alpha1.ScenarioTCPEcho, BodySize: &size, Pipeline: &pipeline}}},
		},
	}
	return run
}

// TestTCPEchoMatchesServerCount runs our k6 (benchrun.js, the Go echo hot path) against our
// real echo server on loopback, with and without pipelining: every recorded call is one
// message the server echoed (its own byte counter), bytes sent and received are recorded,
// and no call failed.
func TestTCPEchoMatchesServerCount(t *testing.T) {
	for _, tc := range []struct {
		name           string
		vus            int32
		size, pipeline int32
	}{{"plain", 4, 1000, 1}, {"pipelined", 2, 100, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			_, ln, stop, err := echo.Listen("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			run := echoRun(ln.Addr().String(), tc.vus, tc.size, tc.pipeline)
			inv, err := plan.ForRunnerIn(filepath.Join(repoRoot, "scripts", "k6"), run, nil, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			cmd, out := k6Command(t, inv, inv.Script)
			b, err := cmd.CombinedOutput()
			st := stop()
			if err != nil {
				t.Fatalf("k6 run: %v\n%s", err, b)
			}
			doc := readDoc(t, out)
			if len(doc.Scenarios) != 1 {
				t.Fatalf("scenarios: %+v", doc.Scenarios)
			}
			s := doc.Scenarios[0]
			if s.Type != "tcp.echo" || s.Calls < 1000 || s.Errors != 0 {
				t.Fatalf("type %s, %d calls, %d errors (%v)", s.Type, s.Calls, s.Errors, s.ErrorKinds)
			}
			size := int64(tc.size)
			if st.Bytes != s.Calls*size {
				t.Errorf("the server echoed %d bytes = %.2f messages of %d bytes; benchrun recorded %d calls",
					st.Bytes, float64(st.Bytes)/float64(size), size, s.Calls)
			}
			if s.BytesSent != s.Calls*size || s.BytesReceived != s.Calls*size {
				t.Errorf("bytes sent %d received %d, want %d each", s.BytesSent, s.BytesReceived, s.Calls*size)
			}
			if st.Connections != int64(tc.vus) {
				t.Errorf("the server saw %d connections, want one per VU (%d)", st.Connections, tc.vus)
			}
			if s.ReturnValues[strconv.FormatInt(size, 10)] != s.Calls {
				t.Errorf("return values %v", s.ReturnValues)
			}
			t.Logf("%d calls, %.0f calls/s, server: %+v", s.Calls, float64(s.Calls)/s.LastEnd.Sub(s.FirstStart).Seconds(), st)
		})
	}
}
