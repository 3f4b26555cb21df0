package local

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/echo"
)

// buildEchoServer builds cmd/echo-server into a temporary directory.
func buildEchoServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "echo-server")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/echo-server")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build echo-server: %v\n%s", err, b)
	}
	return bin
}

// echoOnce sends msg to addr and reads it back.
func echoOnce(t *testing.T, addr, msg string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != msg {
		t.Fatalf("echo %q: %q %v", msg, got, err)
	}
}

// The real echo server as a custom target, once per probe kind: it listens on the port
// passed as BENCHRUN_PORT_ECHO, $(VAR) in args are expanded, a Secret reaches its env, the
// probe gates Start, and Stop terminates it (it then writes its counters).
func TestCustomEchoServer(t *testing.T) {
	bin := buildEchoServer(t)
	dir := t.TempDir()
	probes := map[string]*v1alpha1.CustomProbe{
		"tcp":  {TCPSocket: &v1alpha1.ProbePort{}},
		"http": {HTTPGet: &v1alpha1.HTTPGetProbe{ProbePort: v1alpha1.ProbePort{Port: "stats"}, Path: "/stats"}},
		"exec": {Exec: &v1alpha1.ExecProbe{Command: []string{"sh", "-c", `[ "$TOKEN" = s3cret ] && python3 -c ` +
			`"import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" $(BENCHRUN_PORT_ECHO)`}}},
	}
	for name, probe := range probes {
		t.Run(name, func(t *testing.T) {
			statsFile := filepath.Join(dir, name+".json")
			spec := &v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{
				Image: "benchrun.local/echo:dev", Command: []string{bin},
				Args: []string{"-listen", "127.0.0.1:$(BENCHRUN_PORT_ECHO)", "-http", "127.0.0.1:$(BENCHRUN_PORT_STATS)",
					"-stats-file", statsFile},
				Env:            []v1alpha1.CustomEnvVar{{Name: "TOKEN", SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "token"}}},
				Ports:          []v1alpha1.CustomPort{{Name: "echo", Port: 7007}, {Name: "stats", Port: 8080}},
				ReadinessProbe: probe,
			}}
			var log bytes.Buffer
			tgt, err := New(spec, Options{Secrets: Secrets{"s": {"token": "s3cret"}}, TempDir: t.TempDir(), Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			if err := StartWithin(context.Background(), tgt, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			eps := tgt.Endpoints()
			if len(eps) != 2 || eps[0].Role != "custom" || eps[1].Role != "custom-stats" {
				t.Fatalf("endpoints %v", eps)
			}
			echoOnce(t, eps[0].Address, "hello")
			if err := tgt.Stop(); err != nil {
				t.Fatal(err)
			}
			var st echo.Stats
			if b, err := os.ReadFile(statsFile); err != nil || json.Unmarshal(b, &st) != nil || st.Bytes != 5 {
				t.Errorf("stats after stop: %s %v (log: %s)", b, err, log.String())
			}
			if strings.Contains(log.String(), "s3cret") {
				t.Error("the secret is in the log")
			}
		})
	}
}

// A custom target without command is refused locally with a message naming the field; a
// server that never becomes ready fails Start with its output.
func TestCustomRefusedAndNeverReady(t *testing.T) {
	_, err := New(&v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{Image: "x", Ports: []v1alpha1.CustomPort{{Name: "a", Port: 1}},
		ReadinessProbe: &v1alpha1.CustomProbe{TCPSocket: &v1alpha1.ProbePort{}}}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "spec.target.custom.command is required") {
		t.Errorf("no command: %v", err)
	}
	tgt, err := New(&v1alpha1.TargetSpec{Custom: &v1alpha1.CustomTarget{Image: "x", Command: []string{"sh", "-c", "echo not listening; sleep 30"},
		Ports: []v1alpha1.CustomPort{{Name: "a", Port: 1}}, ReadinessProbe: &v1alpha1.CustomProbe{TCPSocket: &v1alpha1.ProbePort{}}}},
		Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	err = StartWithin(context.Background(), tgt, time.Second)
	if err == nil || !strings.Contains(err.Error(), "not listening") || !strings.Contains(err.Error(), "spec.timeouts.targetReady") {
		t.Errorf("never ready: %v", err)
	}
}

func TestExpandAll(t *testing.T) {
	got := expandAll([]string{"-p=$(P)", "$$(P)", "$(NOPE)", "$(P", "a$"}, map[string]string{"P": "7"})
	want := []string{"-p=7", "$(P)", "$(NOPE)", "$(P", "a$"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q want %q", got, want)
	}
}
