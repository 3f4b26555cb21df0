package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/resp"
	"github.com/benchrun/benchrun/internal/target"
)

// sentinelMaster is the master name the local sentinels monitor.
const sentinelMaster = "benchrun"

// stopGrace is how long a server may take to exit after SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// redisTarget is Redis or Valkey as local processes: one server (single) or a master,
// replicas and sentinels (ha).
type redisTarget struct {
	spec     *v1alpha1.RedisTarget
	opts     Options
	bin      string
	password string

	mu        sync.Mutex
	tmp       *ownedDir // the servers' configs, logs and data
	dir       string    // tmp.path
	procs     []*Process
	master    string
	replicas  []string
	sentinels []string
	stopped   bool
	follower  *masterFollower // Options.FollowMaster in mode ha
}

func newRedis(spec *v1alpha1.RedisTarget, opts Options) (*redisTarget, error) {
	switch spec.Mode {
	case "", v1alpha1.RedisSingle, v1alpha1.RedisHA:
	case v1alpha1.RedisProxy:
		return nil, fmt.Errorf("redis mode proxy: %w (use mode single or ha locally, or run it in a cluster)", ErrNotSupported)
	default:
		return nil, fmt.Errorf("redis mode %q: %w", spec.Mode, ErrNotSupported)
	}
	var bin string
	var err error
	if spec.Engine == v1alpha1.EngineValkey {
		bin, err = lookBinary("valkey-server", "install Valkey so that valkey-server is on PATH (Debian bookworm: apt-get install -t bookworm-backports valkey-server, as hack/install-valkey.sh does), or use engine: redis")
	} else {
		bin, err = lookBinary("redis-server", "install Redis (Debian/Ubuntu: apt-get install redis-server)")
	}
	if err != nil {
		return nil, err
	}
	pw, err := opts.Secrets.optional(spec.PasswordSecretRef)
	if err != nil {
		return nil, fmt.Errorf("redis passwordSecretRef: %w", err)
	}
	for k, v := range spec.Config {
		if strings.ContainsAny(k+string(v), "\r\n") || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("redis config %q: keys and values must be single-line, keys without spaces", k)
		}
	}
	return &redisTarget{spec: spec, opts: opts, bin: bin, password: pw}, nil
}

// engine is "redis" or "valkey" for logs.
func (t *redisTarget) engine() string {
	if t.spec.Engine == v1alpha1.EngineValkey {
		return "valkey"
	}
	return "redis"
}

// Start implements Target: it starts the processes and waits until they are ready.
func (t *redisTarget) Start(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.redact(t.startLocked(ctx))
}

// startLocked starts the servers, replicas and sentinels in order, waiting for each kind.
func (t *redisTarget) startLocked(ctx context.Context) error {
	if t.stopped {
		return fmt.Errorf("target stopped")
	}
	tmp, err := makeOwnedDir(t.opts.TempDir, "benchrun-"+t.engine()+"-")
	if err != nil {
		return err
	}
	t.tmp, t.dir = tmp, tmp.path
	master, p, err := t.startServer("master", "")
	if err != nil {
		return err
	}
	t.master = master
	if err := waitFor(ctx, t.engine()+" master "+master, p, func(ctx context.Context) error {
		return t.ping(ctx, master)
	}); err != nil {
		return err
	}
	if t.spec.Mode != v1alpha1.RedisHA {
		return nil
	}
	replicas, sentinels := int32(2), int32(3)
	if t.spec.Replicas != nil {
		replicas = *t.spec.Replicas
	}
	if t.spec.Sentinels != nil {
		sentinels = *t.spec.Sentinels
	}
	if err := t.startReplicas(ctx, int(replicas)); err != nil {
		return err
	}
	if err := t.startSentinels(ctx, int(sentinels)); err != nil {
		return err
	}
	if t.opts.FollowMaster && sentinels > 0 {
		t.follower, err = startFollower(t.currentMaster)
	}
	return err
}

// startReplicas starts n replicas of the master and waits until each one's replication
// link is up.
func (t *redisTarget) startReplicas(ctx context.Context, n int) error {
	master := t.master
	start := func(i int) (string, *Process, error) { return t.startServer("replica-"+strconv.Itoa(i), master) }
	return t.startGroup(ctx, "replica", n, start, &t.replicas, func(ctx context.Context, addr string) error {
		info, err := resp.Do(ctx, addr, t.password, "INFO", "replication")
		if err != nil {
			return err
		}
		if !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("replication link to %s not up yet", master)
		}
		return nil
	})
}

// startSentinels starts n sentinels (quorum: a majority) and waits until each one reports
// the master.
func (t *redisTarget) startSentinels(ctx context.Context, n int) error {
	master := t.master
	start := func(i int) (string, *Process, error) { return t.startSentinel(i, master, n/2+1) }
	return t.startGroup(ctx, "sentinel", n, start, &t.sentinels, func(ctx context.Context, addr string) error {
		got, err := resp.Do(ctx, addr, "", "SENTINEL", "get-master-addr-by-name", sentinelMaster)
		if err != nil {
			return err
		}
		if strings.ReplaceAll(got, "\n", ":") != master {
			return fmt.Errorf("sentinel reports master %q", got)
		}
		return nil
	})
}

// startGroup starts n servers of one kind (all first, each address appended to addrs), then
// waits until each one passes ready.
func (t *redisTarget) startGroup(ctx context.Context, kind string, n int, start func(i int) (string, *Process, error),
	addrs *[]string, ready func(ctx context.Context, addr string) error) error {
	procs := make([]*Process, 0, n)
	first := len(*addrs)
	for i := range n {
		a, p, err := start(i)
		if err != nil {
			return err
		}
		procs = append(procs, p)
		*addrs = append(*addrs, a)
	}
	for i, p := range procs {
		addr := (*addrs)[first+i]
		if err := waitFor(ctx, t.engine()+" "+kind+" "+addr, p, func(ctx context.Context) error { return ready(ctx, addr) }); err != nil {
			return err
		}
	}
	return nil
}

// ping checks that the server answers PING (and AUTH) and has loaded its data.
func (t *redisTarget) ping(ctx context.Context, address string) error {
	got, err := resp.Do(ctx, address, t.password, "PING")
	if err != nil {
		return err
	}
	if got != "PONG" {
		return fmt.Errorf("PING answered %q", got)
	}
	return nil
}

// startServer writes the config of one data server and starts it; replicaOf makes it a replica.
func (t *redisTarget) startServer(name, replicaOf string) (string, *Process, error) {
	port, err := FreePort()
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	// Defaults the user's config may override: replicas sync at once instead of after 5 s.
	b.WriteString("repl-diskless-sync-delay 0\n")
	for _, k := range slices.Sorted(maps.Keys(t.spec.Config)) {
		_, _ = fmt.Fprintf(&b, "%s %s\n", k, t.spec.Config[k])
	}
	// The local runner's settings come last, so they win over the user's.
	_, _ = fmt.Fprintf(&b, "bind 127.0.0.1\nport %d\ndir %s\nlogfile %s\nsave \"\"\nappendonly no\ndaemonize no\n",
		port, t.dir, filepath.Join(t.dir, name+".log"))
	_, _ = fmt.Fprintf(&b, "dbfilename %s.rdb\n", name)
	if replicaOf != "" {
		host, p, _ := strings.Cut(replicaOf, ":")
		_, _ = fmt.Fprintf(&b, "replicaof %s %s\n", host, p)
	}
	if t.password != "" {
		_, _ = fmt.Fprintf(&b, "requirepass %s\nmasterauth %s\n", quoteConf(t.password), quoteConf(t.password))
	}
	conf := filepath.Join(t.dir, name+".conf")
	if err := writeSecretFile(conf, b.String()); err != nil {
		return "", nil, err
	}
	p, err := t.start(name, t.engine()+" "+name+" on "+addr(port), exec.Command(t.bin, conf))
	if p != nil {
		p.addr = addr(port)
	}
	return addr(port), p, err
}

// startSentinel writes a sentinel config (sentinels rewrite it) and starts the sentinel.
func (t *redisTarget) startSentinel(i int, master string, quorum int) (string, *Process, error) {
	port, err := FreePort()
	if err != nil {
		return "", nil, err
	}
	host, mport, _ := strings.Cut(master, ":")
	name := "sentinel-" + strconv.Itoa(i)
	var b strings.Builder
	_, _ = fmt.Fprintf(&b, "bind 127.0.0.1\nport %d\ndir %s\nlogfile %s\ndaemonize no\n", port, t.dir, filepath.Join(t.dir, name+".log"))
	_, _ = fmt.Fprintf(&b, "sentinel monitor %s %s %s %d\nsentinel down-after-milliseconds %s 5000\n",
		sentinelMaster, host, mport, quorum, sentinelMaster)
	if t.password != "" {
		_, _ = fmt.Fprintf(&b, "sentinel auth-pass %s %s\n", sentinelMaster, quoteConf(t.password))
	}
	conf := filepath.Join(t.dir, name+".conf")
	if err := writeSecretFile(conf, b.String()); err != nil {
		return "", nil, err
	}
	p, err := t.start(name, t.engine()+" "+name+" on "+addr(port), exec.Command(t.bin, conf, "--sentinel"))
	if p != nil {
		p.addr = addr(port)
	}
	return addr(port), p, err
}

// start starts one server process; its output goes to DIR/file.out, its log to DIR/file.log.
func (t *redisTarget) start(file, name string, cmd *exec.Cmd) (*Process, error) {
	cmd.Dir = t.dir
	out, err := os.Create(filepath.Join(t.dir, file+".out"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = out.Close() }()
	cmd.Stdout, cmd.Stderr = out, out
	p, err := StartProcess(name, cmd, t.opts.Log)
	if err != nil {
		return nil, err
	}
	p.logs = []string{out.Name(), filepath.Join(t.dir, file+".log")}
	t.procs = append(t.procs, p)
	return p, nil
}

// Endpoints implements Target.
func (t *redisTarget) Endpoints() []v1alpha1.Endpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.spec.Mode != v1alpha1.RedisHA {
		return []v1alpha1.Endpoint{{Role: target.RoleRedis, Address: t.master}}
	}
	eps := []v1alpha1.Endpoint{{Role: target.RoleMaster, Address: t.master}}
	if t.follower != nil {
		eps[0].Address = t.follower.addr()
	}
	for _, a := range t.replicas {
		eps = append(eps, v1alpha1.Endpoint{Role: target.RoleReplica, Address: a})
	}
	for _, a := range t.sentinels {
		eps = append(eps, v1alpha1.Endpoint{Role: target.RoleSentinel, Address: a})
	}
	return eps
}

// Stop implements Target: it stops every process and removes the temporary data.
func (t *redisTarget) Stop() error {
	t.mu.Lock()
	f := t.follower
	t.follower = nil
	t.mu.Unlock()
	if f != nil { // closed unlocked: a connection being forwarded asks currentMaster, which locks
		f.close()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	for i := len(t.procs) - 1; i >= 0; i-- { // sentinels, replicas, then the master
		t.procs[i].Stop(stopGrace)
		_, _ = fmt.Fprintf(t.opts.Log, "stopped %s\n", t.procs[i].Name)
	}
	t.procs = nil
	if t.tmp != nil {
		err := t.tmp.remove()
		t.tmp, t.dir = nil, ""
		return err
	}
	return nil
}

// quoteConf quotes a value for a Redis config file: bytes outside printable ASCII as \xHH.
func quoteConf(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// redact removes the password (raw and as quoted in config files) from an error, which may
// quote server output.
func (t *redisTarget) redact(err error) error {
	return redactErr(err, t.password, quoteConf(t.password))
}

// redactErr replaces every non-empty secret in err's message with ***.
func redactErr(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		if s != "" && s != `""` {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}
