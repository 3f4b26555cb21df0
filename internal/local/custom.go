package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/target"
)

// customTarget is the user's own server as one local process: command + args (the image is
// not used locally) on 127.0.0.1, each port a free port passed as BENCHRUN_PORT_<NAME>, and
// $(VAR) in command and args expanded from the server's environment as the kubelet does.
// Replicas and placement apply in a cluster only: locally one process serves.
type customTarget struct {
	spec *v1alpha1.CustomTarget
	opts Options
	env  []string // the user's env (secrets resolved), then the ports

	mu      sync.Mutex
	tmp     *ownedDir
	proc    *Process
	ports   []int
	stopped bool
}

// errCustomNoCommand explains why a custom target without command cannot run locally.
var errCustomNoCommand = errors.New("spec.target.custom.command is required to run a custom target locally: " +
	"benchrun run starts command + args as a process on this machine (the image is used in a cluster only)")

func newCustom(spec *v1alpha1.CustomTarget, opts Options) (*customTarget, error) {
	if len(spec.Command) == 0 {
		return nil, errCustomNoCommand
	}
	if len(spec.Ports) == 0 || spec.ReadinessProbe == nil {
		return nil, errors.New("spec.target.custom needs at least one port and a readinessProbe")
	}
	t := &customTarget{spec: spec, opts: opts}
	for _, e := range spec.Env {
		v := e.Value
		if e.SecretKeyRef != nil {
			s, err := opts.Secrets.Get(*e.SecretKeyRef)
			if err != nil {
				return nil, fmt.Errorf("custom env %s: %w", e.Name, err)
			}
			v = s
		}
		t.env = append(t.env, e.Name+"="+v)
	}
	return t, nil
}

// Start implements Target: it picks the ports, starts the process and waits for the probe.
func (t *customTarget) Start(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return errors.New("target stopped")
	}
	tmp, err := makeOwnedDir(t.opts.TempDir, "benchrun-custom-")
	if err != nil {
		return err
	}
	t.tmp = tmp
	vars := map[string]string{"TMPDIR": tmp.path}
	env := append(os.Environ(), "TMPDIR="+tmp.path)
	for _, p := range t.spec.Ports {
		port, err := FreePort()
		if err != nil {
			return err
		}
		t.ports = append(t.ports, port)
		name := target.PortEnv(p.Name)
		vars[name] = strconv.Itoa(port)
		env = append(env, name+"="+vars[name])
	}
	for _, kv := range t.env { // the user's variables win over the ports', as in the pod
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
		env = append(env, kv)
	}
	argv := expandAll(append(append([]string{}, t.spec.Command...), t.spec.Args...), vars)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out, err := os.Create(filepath.Join(tmp.path, "server.log"))
	if err != nil {
		return err
	}
	defer func() { _ = out.Close() }()
	cmd.Stdout, cmd.Stderr = out, out
	p, err := StartProcess("custom server "+filepath.Base(argv[0])+" on "+addr(t.ports[0]), cmd, t.opts.Log)
	if err != nil {
		return err
	}
	p.logs = []string{out.Name()}
	t.proc = p
	return waitFor(ctx, "custom server "+argv[0], p, func(ctx context.Context) error { return t.probe(ctx, env, vars) })
}

// probe runs the readiness probe once.
func (t *customTarget) probe(ctx context.Context, env []string, vars map[string]string) error {
	rp := t.spec.ReadinessProbe
	port := func(name string) int {
		for i, p := range t.spec.Ports {
			if p.Name == name {
				return t.ports[i]
			}
		}
		return t.ports[0]
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	switch {
	case rp.TCPSocket != nil:
		c, err := (&net.Dialer{}).DialContext(cctx, "tcp", addr(port(rp.TCPSocket.Port)))
		if err != nil {
			return err
		}
		return c.Close()
	case rp.HTTPGet != nil:
		path := rp.HTTPGet.Path
		if path == "" {
			path = "/"
		}
		req, err := http.NewRequestWithContext(cctx, http.MethodGet, "http://"+addr(port(rp.HTTPGet.Port))+path, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 399 {
			return fmt.Errorf("readiness probe GET %s: %s", path, resp.Status)
		}
		return nil
	case rp.Exec != nil:
		argv := expandAll(rp.Exec.Command, vars)
		cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("readiness probe %s: %w: %s", argv[0], err, strings.TrimSpace(string(b)))
		}
		return nil
	}
	return errors.New("readinessProbe has no handler")
}

// expandAll expands $(VAR) references to vars in each string, as the kubelet does for
// command and args: $$ is a literal $, and unknown references stay as they are.
func expandAll(in []string, vars map[string]string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		var b strings.Builder
		for j := 0; j < len(s); j++ {
			switch {
			case strings.HasPrefix(s[j:], "$$"):
				b.WriteByte('$')
				j++
			case strings.HasPrefix(s[j:], "$("):
				if end := strings.IndexByte(s[j:], ')'); end > 0 {
					if v, ok := vars[s[j+2:j+end]]; ok {
						b.WriteString(v)
						j += end
						continue
					}
				}
				b.WriteByte('$')
			default:
				b.WriteByte(s[j])
			}
		}
		out[i] = b.String()
	}
	return out
}

// Endpoints implements Target: the first port with role custom, the others custom-<name>.
func (t *customTarget) Endpoints() []v1alpha1.Endpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	var eps []v1alpha1.Endpoint
	for i, p := range t.ports {
		role := target.RoleCustom
		if i > 0 {
			role += "-" + t.spec.Ports[i].Name
		}
		eps = append(eps, v1alpha1.Endpoint{Role: role, Address: addr(p)})
	}
	return eps
}

// Stop implements Target: SIGTERM (then SIGKILL after the grace), and the temporary
// directory removed.
func (t *customTarget) Stop() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	if t.proc != nil {
		t.proc.Stop(stopGrace)
		_, _ = fmt.Fprintf(t.opts.Log, "stopped %s\n", t.proc.Name)
		t.proc = nil
	}
	if t.tmp != nil {
		err := t.tmp.remove()
		t.tmp = nil
		return err
	}
	return nil
}
