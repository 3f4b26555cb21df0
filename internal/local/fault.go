package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/resp"
)

// Faults (spec.faults) on local targets, for `benchrun run`: the process holding a role is
// killed (SIGKILL to its process group, then started again with the same command on the same
// port, as a pod's controller recreates a deleted pod), restarted (SIGTERM, at most its stop
// grace, then started again) or paused (SIGSTOP to its group for the fault's duration, then
// SIGCONT). Roles are those of the cluster (target.Faultable): master (in mode ha the master
// the sentinels report at that moment), replica, sentinel, hetu, custom.

// FaultResult is what applying a fault did.
type FaultResult struct {
	// Process names the process acted on (e.g. "redis master on 127.0.0.1:40001").
	Process string
	// Message says what was done.
	Message string
	// Paused is when a pause stopped the process (zero for kill and restart).
	Paused time.Time
	// Resumed receives when a pause continued the process (nil for kill and restart).
	Resumed <-chan time.Time
}

// faulter is implemented by local targets whose processes faults act on.
type faulter interface {
	// faultRoles are the roles a fault may name for this target.
	faultRoles() []v1alpha1.FaultRole
	// faultSlot locks the target and returns where the process holding role is kept (so a
	// restarted process replaces it) and the unlock function.
	faultSlot(ctx context.Context, role v1alpha1.FaultRole) (**Process, func(), error)
	// log is where process starts are logged.
	log() io.Writer
}

// ApplyFault applies a fault to the local target t now: action on the process holding role;
// d is a pause's duration.
func ApplyFault(ctx context.Context, t Target, action v1alpha1.FaultAction, role v1alpha1.FaultRole, d time.Duration) (FaultResult, error) {
	f, ok := t.(faulter)
	if !ok || !slices.Contains(f.faultRoles(), role) {
		return FaultResult{}, fmt.Errorf("this local target has no role %s", role)
	}
	slot, unlock, err := f.faultSlot(ctx, role)
	if err != nil {
		return FaultResult{}, err
	}
	defer unlock()
	p := *slot
	res := FaultResult{Process: p.Name}
	switch action {
	case v1alpha1.FaultPause:
		p.Signal(syscall.SIGSTOP)
		res.Paused = time.Now()
		resumed := make(chan time.Time, 1)
		res.Resumed, res.Message = resumed, fmt.Sprintf("%s stopped (SIGSTOP) for %s", p.Name, d)
		go func() {
			time.Sleep(d)
			p.Signal(syscall.SIGCONT)
			resumed <- time.Now()
		}()
		return res, nil
	case v1alpha1.FaultKill:
		p.Signal(syscall.SIGKILL)
		<-p.Done()
		res.Message = p.Name + " killed (SIGKILL) and started again"
	case v1alpha1.FaultRestart:
		p.Stop(stopGrace)
		res.Message = p.Name + " stopped (SIGTERM) and started again"
	default:
		return res, fmt.Errorf("fault action %q is not supported locally", action)
	}
	np, err := p.startAgain(f.log())
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Message, err)
	}
	*slot = np
	return res, nil
}

// startAgain starts the process' command again (same binary, arguments, directory and
// environment; output appended to the same file) and returns the new process.
func (p *Process) startAgain(log io.Writer) (*Process, error) {
	a := p.again
	cmd := exec.Command(a.path)
	cmd.Args, cmd.Env, cmd.Dir = a.args, a.env, a.dir
	if a.out != "" {
		f, err := os.OpenFile(a.out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		cmd.Stdout, cmd.Stderr = f, f
	}
	np, err := StartProcess(p.Name, cmd, log)
	if err != nil {
		return nil, err
	}
	np.logs, np.addr = p.logs, p.addr
	return np, nil
}

// faultRoles implements faulter: master; replica and sentinel in mode ha when there are any.
func (t *redisTarget) faultRoles() []v1alpha1.FaultRole {
	roles := []v1alpha1.FaultRole{v1alpha1.FaultRoleMaster}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.replicas) > 0 {
		roles = append(roles, v1alpha1.FaultRoleReplica)
	}
	if len(t.sentinels) > 0 {
		roles = append(roles, v1alpha1.FaultRoleSentinel)
	}
	return roles
}

// log implements faulter.
func (t *redisTarget) log() io.Writer { return t.opts.Log }

// faultSlot implements faulter: master is the master the sentinels report now (mode ha; the
// first master otherwise), replica the first other data server, sentinel the first sentinel.
func (t *redisTarget) faultSlot(ctx context.Context, role v1alpha1.FaultRole) (**Process, func(), error) {
	master := t.currentMaster(ctx)
	t.mu.Lock()
	var want string
	switch role {
	case v1alpha1.FaultRoleMaster:
		want = master
	case v1alpha1.FaultRoleReplica:
		for _, a := range append([]string{t.master}, t.replicas...) {
			if a != master {
				want = a
				break
			}
		}
	case v1alpha1.FaultRoleSentinel:
		if len(t.sentinels) > 0 {
			want = t.sentinels[0]
		}
	}
	for i, p := range t.procs {
		if want != "" && p.addr == want {
			return &t.procs[i], t.mu.Unlock, nil
		}
	}
	t.mu.Unlock()
	return nil, nil, fmt.Errorf("no process of this target holds role %s (address %q)", role, want)
}

// currentMaster is the master's address as the first answering sentinel reports it, else
// the first master's.
func (t *redisTarget) currentMaster(ctx context.Context) string {
	t.mu.Lock()
	master, sentinels := t.master, slices.Clone(t.sentinels)
	t.mu.Unlock()
	for _, s := range sentinels {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		got, err := resp.Do(cctx, s, "", "SENTINEL", "get-master-addr-by-name", sentinelMaster)
		cancel()
		if host, port, ok := strings.Cut(got, "\n"); err == nil && ok {
			return host + ":" + port
		}
	}
	return master
}

// faultRoles implements faulter: hetu, and the Redis back end's roles when started with it.
func (t *hetuTarget) faultRoles() []v1alpha1.FaultRole {
	roles := []v1alpha1.FaultRole{v1alpha1.FaultRoleHeTu}
	if t.backend != nil {
		roles = append(roles, t.backend.faultRoles()...)
	}
	return roles
}

// log implements faulter.
func (t *hetuTarget) log() io.Writer { return t.opts.Log }

// faultSlot implements faulter: hetu is the first HeTu server (its whole process group: the
// namespace's processes); the other roles are the back end's.
func (t *hetuTarget) faultSlot(ctx context.Context, role v1alpha1.FaultRole) (**Process, func(), error) {
	if role != v1alpha1.FaultRoleHeTu {
		if t.backend == nil {
			return nil, nil, fmt.Errorf("this HeTu target has no role %s", role)
		}
		return t.backend.faultSlot(ctx, role)
	}
	t.mu.Lock()
	if len(t.procs) == 0 {
		t.mu.Unlock()
		return nil, nil, fmt.Errorf("no HeTu server is running")
	}
	return &t.procs[0], t.mu.Unlock, nil
}

// faultRoles implements faulter.
func (t *customTarget) faultRoles() []v1alpha1.FaultRole {
	return []v1alpha1.FaultRole{v1alpha1.FaultRoleCustom}
}

// log implements faulter.
func (t *customTarget) log() io.Writer { return t.opts.Log }

// faultSlot implements faulter: the custom server.
func (t *customTarget) faultSlot(_ context.Context, _ v1alpha1.FaultRole) (**Process, func(), error) {
	t.mu.Lock()
	if t.proc == nil {
		t.mu.Unlock()
		return nil, nil, fmt.Errorf("the custom server is not running")
	}
	return &t.proc, t.mu.Unlock, nil
}
