package local

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a child process in its own process group, killed with the group.
type Process struct {
	// Name is a short label for logs ("redis master", "k6 runner 0").
	Name string
	// logs are files whose tail explains a failed start (server output and log file).
	logs []string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	once sync.Once
	// again is how to start the same command again (faults: kill or restart, fault.go).
	again respawn
	// addr is the address a server process listens on ("" when not recorded).
	addr string
}

// respawn is what starting a process again needs: its command, directory, environment and
// the file its output went to (appended to).
type respawn struct {
	path      string
	args, env []string
	dir, out  string
}

// StartProcess starts cmd in a new process group (that dies with this process on Linux:
// SIGKILL on parent death) and logs the start to log.
func StartProcess(name string, cmd *exec.Cmd, log io.Writer) (*Process, error) {
	cmd.SysProcAttr = sysProcAttr()
	again := respawn{path: cmd.Path, args: cmd.Args, env: cmd.Env, dir: cmd.Dir}
	if f, ok := cmd.Stdout.(*os.File); ok {
		again.out = f.Name()
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, cmd: cmd, done: make(chan struct{}), again: again}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	_, _ = fmt.Fprintf(log, "started %s (pid %d)\n", name, cmd.Process.Pid)
	return p, nil
}

// Pid is the process id (also its process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the process' exit error once it has exited (nil for exit code 0).
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// ExitCode is the exit code once the process has exited (-1 when killed by a signal).
func (p *Process) ExitCode() int {
	<-p.done
	return p.cmd.ProcessState.ExitCode()
}

// Signal sends sig to the process group.
func (p *Process) Signal(sig syscall.Signal) {
	if !p.Exited() {
		_ = syscall.Kill(-p.Pid(), sig)
	}
}

// Stop sends SIGTERM to the process group, waits up to grace, then SIGKILLs the group. The
// group is killed even when the leader already exited, so no child is left behind.
func (p *Process) Stop(grace time.Duration) {
	p.once.Do(func() {
		p.Signal(syscall.SIGTERM)
		p.Signal(syscall.SIGCONT) // a process paused by a fault handles the SIGTERM now
		select {
		case <-p.done:
		case <-time.After(grace):
		}
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.done
	})
}

// logTail returns the last lines of the process' log files, for an error message.
func (p *Process) logTail() string {
	var b strings.Builder
	for _, f := range p.logs {
		data, err := os.ReadFile(f)
		text := strings.TrimSpace(string(data))
		if err != nil || text == "" {
			continue
		}
		lines := strings.Split(text, "\n")
		if len(lines) > 8 {
			lines = lines[len(lines)-8:]
		}
		fmt.Fprintf(&b, "\n%s:\n  %s", filepath.Base(f), strings.Join(lines, "\n  "))
	}
	return b.String()
}

// FreePort returns a TCP port free on 127.0.0.1 right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// addr is 127.0.0.1:port.
func addr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// lookBinary finds a server binary on PATH with a clear error.
func lookBinary(name, hint string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("%s not found in PATH: %s", name, hint)
		}
		return "", err
	}
	return p, nil
}

// writeSecretFile writes a file readable by the owner only.
func writeSecretFile(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o600)
}
