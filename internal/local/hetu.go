package local

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/target"
)

// hetuTarget is the HeTu bench app (examples/hetu-bench) run from the cached HeTu runtime
// (hack/hetu-runtime.sh) in its own mount and PID namespaces, chrooted into the runtime's
// rootfs, with a local Redis back end (or an external one).
type hetuTarget struct {
	spec    *v1alpha1.HeTuTarget
	opts    Options
	rootfs  string
	backend *redisTarget // nil with an external back end
	authKey string
	extURL  string // external back end URL (with credentials; only written to a 0600 file)
	extRead []string

	mu      sync.Mutex
	ports   []int
	logDir  *ownedDir
	appDirs []*ownedDir // inside the rootfs
	userApp []byte      // spec.app's file from the run file's ConfigMap (nil: the bench app)
	procs   []*Process
	stopped bool
}

var instanceRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func newHeTu(spec *v1alpha1.HeTuTarget, opts Options) (*hetuTarget, error) {
	t := &hetuTarget{spec: spec, opts: opts}
	switch spec.PacketLayers {
	case "", v1alpha1.LayersMsgpackZlibCrypto, v1alpha1.LayersMsgpack:
	default:
		return nil, fmt.Errorf("hetu packetLayers %s: %w (the bench app's config has msgpack and msgpack+zlib+crypto)", spec.PacketLayers, ErrNotSupported)
	}
	if spec.Instance != "" && !instanceRe.MatchString(spec.Instance) {
		return nil, fmt.Errorf("hetu instance %q: must match [A-Za-z0-9_-]+", spec.Instance)
	}
	if len(spec.ExtraConfig) > 0 {
		return nil, fmt.Errorf("hetu extraConfig: %w (remove it to run locally)", ErrNotSupported)
	}
	key, err := opts.Secrets.optional(spec.AuthKeySecretRef)
	if err != nil {
		return nil, fmt.Errorf("hetu authKeySecretRef: %w", err)
	}
	if key != "" && spec.PacketLayers == v1alpha1.LayersMsgpack {
		return nil, fmt.Errorf("hetu: an auth key needs packetLayers msgpack+zlib+crypto")
	}
	t.authKey = key
	switch b := spec.Backend; {
	case b.Redis != nil:
		if t.backend, err = newRedis(b.Redis, opts); err != nil {
			return nil, fmt.Errorf("hetu backend: %w", err)
		}
	case b.External != nil:
		if b.External.TLS != nil && b.External.TLS.Enabled {
			return nil, fmt.Errorf("hetu external backend with TLS: %w", ErrNotSupported)
		}
		user, err := opts.Secrets.optional(b.External.UsernameSecretRef)
		if err != nil {
			return nil, fmt.Errorf("hetu backend usernameSecretRef: %w", err)
		}
		pw, err := opts.Secrets.optional(b.External.PasswordSecretRef)
		if err != nil {
			return nil, fmt.Errorf("hetu backend passwordSecretRef: %w", err)
		}
		t.extURL = redisURL(b.External.Addresses[0], user, pw)
		for _, a := range b.External.ReadAddresses {
			t.extRead = append(t.extRead, redisURL(a, user, pw))
		}
	default:
		return nil, fmt.Errorf("hetu: set backend.redis or backend.external")
	}
	t.rootfs = opts.HeTuRootfs
	if t.rootfs == "" {
		t.rootfs = DefaultHeTuRootfs()
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("a local HeTu target needs root (it runs in its own namespaces, chrooted into the cached runtime)")
	}
	if _, err := os.Stat(filepath.Join(t.rootfs, ".benchrun-venv")); err != nil {
		return nil, fmt.Errorf("HeTu runtime missing at %s: run hack/hetu-runtime.sh first", t.rootfs)
	}
	for _, f := range []string{"app.py", "config.yml"} {
		if _, err := os.Stat(filepath.Join(opts.HeTuApp, f)); err != nil {
			return nil, fmt.Errorf("HeTu bench app not found (%s): run from the benchrun repository", filepath.Join(opts.HeTuApp, f))
		}
	}
	if err := t.loadUserApp(); err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return nil, fmt.Errorf("unshare not found in PATH (Debian: apt-get install util-linux)")
	}
	return t, nil
}

// DefaultHeTuRootfs is where hack/hetu-runtime.sh caches the HeTu runtime.
func DefaultHeTuRootfs() string {
	cache := os.Getenv("BENCHRUN_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "benchrun")
	}
	return filepath.Join(cache, "hetu-runtime", "rootfs")
}

// redisURL is a redis:// URL for HeTu's back end.
func redisURL(address, user, password string) string {
	u := url.URL{Scheme: "redis", Host: address, Path: "/0"}
	if user != "" || password != "" {
		u.User = url.UserPassword(user, password)
	}
	return u.String()
}

// pyList is a Python list literal of strings (for HETU_REDIS_SERVANTS).
func pyList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Start implements Target: it starts the processes and waits until they are ready.
func (t *hetuTarget) Start(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	secrets := []string{t.authKey, t.extURL}
	secrets = append(secrets, t.extRead...)
	if t.backend != nil {
		secrets = append(secrets, t.backend.password, url.UserPassword("", t.backend.password).String())
	}
	return redactErr(t.startLocked(ctx), secrets...)
}

// startLocked starts the back end, then HeTu, and waits until HeTu answers HTTP.
func (t *hetuTarget) startLocked(ctx context.Context) error {
	if t.stopped {
		return fmt.Errorf("target stopped")
	}
	master, servants := t.extURL, t.extRead
	if t.backend != nil {
		if err := t.backend.Start(ctx); err != nil {
			return fmt.Errorf("hetu backend: %w", err)
		}
		master = redisURL(t.backend.master, "", t.backend.password)
		for _, r := range t.backend.replicas {
			servants = append(servants, redisURL(r, "", t.backend.password))
		}
	}
	var err error
	if t.logDir, err = makeOwnedDir(t.opts.TempDir, "benchrun-hetu-"); err != nil {
		return err
	}
	replicas := max(1, int(t.spec.Replicas))
	for i := range replicas {
		if err := t.startServer(i, master, servants); err != nil {
			return err
		}
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for i, p := range t.procs {
		a := addr(t.ports[i])
		err := waitFor(ctx, "HeTu on "+a, p, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a+"/", nil)
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			_ = resp.Body.Close()
			if resp.StatusCode >= 300 {
				return fmt.Errorf("GET / answered %s", resp.Status)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// startServer starts HeTu server i: the app copied into the rootfs with its environment file,
// run in its own mount and PID namespaces, chrooted into the rootfs.
func (t *hetuTarget) startServer(i int, master string, servants []string) error {
	if err := os.MkdirAll(filepath.Join(t.rootfs, "srv"), 0o755); err != nil {
		return err
	}
	app, err := makeOwnedDir(filepath.Join(t.rootfs, "srv"), "benchrun-hetu-")
	if err != nil {
		return err
	}
	t.appDirs = append(t.appDirs, app)
	appDir := app.path
	if err := os.Chmod(appDir, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"app.py", "config.yml"} {
		b, err := t.appFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(appDir, f), b, 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(appDir, "logs"), 0o755); err != nil {
		return err
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	layers := "full"
	if t.spec.PacketLayers == v1alpha1.LayersMsgpack {
		layers = "msgpack"
	}
	workers := t.spec.Workers
	if workers == 0 {
		workers = 2
	}
	env := []string{
		"HETU_LISTEN=" + shellQuote(addr(port)),
		"HETU_LAYERS=" + layers,
		"HETU_WORKERS=" + strconv.Itoa(int(workers)),
		"HETU_INSTANCE=" + shellQuote(t.instance()),
		"HETU_REDIS_URL=" + shellQuote(master),
		"HETU_REDIS_SERVANTS=" + shellQuote(pyList(servants)),
		"HETU_AUTH_KEY=" + shellQuote(t.authKey),
	}
	// The env file keeps credentials off command lines.
	if err := writeSecretFile(filepath.Join(appDir, "server.env"), strings.Join(env, "\n")+"\n"); err != nil {
		return err
	}
	inner := `set -e
mount -t proc proc "$ROOTFS/proc"
mount -t tmpfs -o mode=1777,size=256m shm "$ROOTFS/dev/shm"
exec chroot "$ROOTFS" /usr/bin/env -i PATH=/opt/hetu/bin:/usr/bin:/bin HOME=/root \
  LANG=C.UTF-8 PYTHONUNBUFFERED=1 APPDIR="$APPDIR_IN_ROOT" /bin/sh -c \
  'cd "$APPDIR" && set -a && . ./server.env && set +a && exec hetu start --config=config.yml'`
	cmd := exec.Command("unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private", "/bin/sh", "-c", inner)
	cmd.Env = append(os.Environ(), "ROOTFS="+t.rootfs, "APPDIR_IN_ROOT=/srv/"+filepath.Base(appDir))
	logf, err := os.Create(filepath.Join(t.logDir.path, fmt.Sprintf("hetu-%d.log", i)))
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }()
	cmd.Stdout, cmd.Stderr = logf, logf
	p, err := StartProcess("hetu on "+addr(port), cmd, t.opts.Log)
	if err != nil {
		return err
	}
	p.logs = []string{logf.Name()}
	t.procs, t.ports = append(t.procs, p), append(t.ports, port)
	return nil
}

func (t *hetuTarget) instance() string {
	if t.spec.Instance != "" {
		return t.spec.Instance
	}
	return "bench"
}

// Endpoints implements Target.
func (t *hetuTarget) Endpoints() []v1alpha1.Endpoint {
	t.mu.Lock()
	var eps []v1alpha1.Endpoint
	for _, p := range t.ports {
		eps = append(eps, v1alpha1.Endpoint{Role: target.RoleHeTu, Address: addr(p)})
	}
	t.mu.Unlock()
	if t.backend != nil {
		eps = append(eps, t.backend.Endpoints()...)
	}
	return eps
}

// Stop implements Target: it stops every process and removes the temporary data.
func (t *hetuTarget) Stop() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	for _, p := range t.procs {
		// Killing the namespace's first process takes every HeTu worker down with it.
		p.Stop(3 * time.Second)
		_, _ = fmt.Fprintf(t.opts.Log, "stopped %s\n", p.Name)
	}
	t.procs, t.ports = nil, nil
	var firstErr error
	if t.backend != nil {
		firstErr = t.backend.Stop()
	}
	for _, d := range append(t.appDirs, t.logDir) {
		if d != nil {
			if err := d.remove(); err != nil && firstErr == nil {
				firstErr = err
			}
		}
	}
	t.appDirs, t.logDir = nil, nil
	return firstErr
}

// loadUserApp reads spec.app's file from the run file's ConfigMaps.
func (t *hetuTarget) loadUserApp() error {
	a := t.spec.App
	if a == nil {
		return nil
	}
	var data map[string]string
	ok := false
	if t.opts.ConfigMaps != nil {
		data, ok = t.opts.ConfigMaps(a.ConfigMapName)
	}
	key := a.Key
	if key == "" {
		key = "app.py"
	}
	if !ok {
		return fmt.Errorf("hetu app: ConfigMap %s is not in the run file (add apiVersion: v1, kind: ConfigMap, data: {%s: ...})", a.ConfigMapName, key)
	}
	src, ok := data[key]
	if !ok || src == "" {
		return fmt.Errorf("hetu app: ConfigMap %s has no key %s", a.ConfigMapName, key)
	}
	t.userApp = []byte(src)
	return nil
}

// appFile is the content of the app directory's file f: the bench app's, or the user's app
// (spec.app) with config.yml serving its namespace.
func (t *hetuTarget) appFile(f string) ([]byte, error) {
	if t.userApp != nil && f == "app.py" {
		return t.userApp, nil
	}
	b, err := os.ReadFile(filepath.Join(t.opts.HeTuApp, f))
	if err != nil || t.userApp == nil || f != "config.yml" {
		return b, err
	}
	ns := t.spec.App.Namespace
	if ns == "" {
		ns = "bench"
	}
	return bytes.Replace(b, []byte("\nNAMESPACE: bench\n"), []byte("\nNAMESPACE: "+ns+"\n"), 1), nil
}
