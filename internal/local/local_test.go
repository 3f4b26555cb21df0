package local

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/resp"
)

func needRedis(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
}

// markedProcesses lists processes whose environment holds marker (processes we started
// inherit the test's environment).
func markedProcesses(t *testing.T, marker string) []string {
	t.Helper()
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	for _, d := range dirs {
		if filepath.Base(d) == strconv.Itoa(self) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !strings.Contains(string(env), marker) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		out = append(out, filepath.Base(d)+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// setMarker gives this test's child processes a unique environment marker.
func setMarker(t *testing.T) string {
	m := "BENCHRUN_LOCAL_TEST_MARKER=" + strings.ReplaceAll(t.Name(), "/", "_") + "-" + strconv.Itoa(os.Getpid())
	k, v, _ := strings.Cut(m, "=")
	t.Setenv(k, v)
	return m
}

func int32p(v int32) *int32 { return &v }

func TestRedisSingleConfigAndPassword(t *testing.T) {
	needRedis(t)
	marker := setMarker(t)
	secrets := Secrets{"auth": {"pw": "p@ss word"}}
	spec := &v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{
		Config:            map[string]v1alpha1.RedisConfigValue{"io-threads": "2", "maxmemory": "64mb"},
		PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "auth", Key: "pw"},
	}}
	tgt, err := New(spec, Options{Secrets: secrets, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := StartWithin(ctx, tgt, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	eps := tgt.Endpoints()
	if len(eps) != 1 || eps[0].Role != "redis" || !strings.HasPrefix(eps[0].Address, "127.0.0.1:") {
		t.Fatalf("endpoints %v", eps)
	}
	a := eps[0].Address
	if _, err := resp.Do(ctx, a, "", "PING"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("PING without password: %v, want NOAUTH", err)
	}
	for key, want := range map[string]string{"maxmemory": "67108864", "io-threads": "2", "bind": "127.0.0.1"} {
		got, err := resp.Do(ctx, a, "p@ss word", "CONFIG", "GET", key)
		if err != nil || !strings.HasPrefix(got, key+"\n"+want) {
			t.Errorf("CONFIG GET %s = %q, %v; want %s", key, got, err, want)
		}
	}
	dir := tgt.(*redisTarget).dir
	if err := tgt.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp dir %s left behind", dir)
	}
	if _, err := resp.Do(ctx, a, "p@ss word", "PING"); err == nil {
		t.Error("server still answers after Stop")
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

func TestRedisHA(t *testing.T) {
	needRedis(t)
	marker := setMarker(t)
	spec := &v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Replicas: int32p(2), Sentinels: int32p(3)}}
	tgt, err := New(spec, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	if err := StartWithin(ctx, tgt, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("HA ready in %s", time.Since(start).Round(time.Millisecond))
	defer func() { _ = tgt.Stop() }()
	roles := map[string][]string{}
	for _, e := range tgt.Endpoints() {
		roles[e.Role] = append(roles[e.Role], e.Address)
	}
	if len(roles["master"]) != 1 || len(roles["replica"]) != 2 || len(roles["sentinel"]) != 3 {
		t.Fatalf("endpoints by role: %v", roles)
	}
	if _, err := resp.Do(ctx, roles["master"][0], "", "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	for _, r := range roles["replica"] {
		info, err := resp.Do(ctx, r, "", "INFO", "replication")
		if err != nil || !strings.Contains(info, "role:slave") {
			t.Errorf("replica %s: %v %q", r, err, info)
		}
	}
	got, err := resp.Do(ctx, roles["sentinel"][0], "", "SENTINEL", "get-master-addr-by-name", sentinelMaster)
	if err != nil || strings.ReplaceAll(got, "\n", ":") != roles["master"][0] {
		t.Errorf("sentinel master = %q, %v", got, err)
	}
	if err := tgt.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestNeverReady starts a "redis-server" that never answers: Start fails after the timeout
// with a clear error and the process is gone.
func TestNeverReady(t *testing.T) {
	marker := setMarker(t)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "redis-server"), []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	tgt, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{}}, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = StartWithin(context.Background(), tgt, 1500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "target not ready within 1.5s") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

func TestExternalUnreachable(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	tgt, _ := New(&v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{Kind: "redis", Addresses: []string{addr(port)}}}, Options{})
	err = StartWithin(context.Background(), tgt, time.Second)
	if err == nil || !strings.Contains(err.Error(), "not ready within 1s") || !strings.Contains(err.Error(), addr(port)) {
		t.Fatalf("err = %v", err)
	}
}

func TestNotSupported(t *testing.T) {
	_, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Mode: v1alpha1.RedisProxy}}, Options{})
	if !errors.Is(err, ErrNotSupported) {
		t.Errorf("proxy: %v", err)
	}
	t.Run("valkey without the binary", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir()) // whether or not valkey-server is installed here
		_, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Engine: v1alpha1.EngineValkey}}, Options{})
		if err == nil || !strings.Contains(err.Error(), "valkey-server not found in PATH") {
			t.Errorf("valkey without the binary: %v", err)
		}
	})
	_, err = New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "nope", Key: "pw"}}}, Options{})
	if err == nil || !strings.Contains(err.Error(), `secret "nope" not found`) {
		t.Errorf("missing secret: %v", err)
	}
}

func TestSecretsFrom(t *testing.T) {
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "a"},
			"data":       map[string]any{"x": base64.StdEncoding.EncodeToString([]byte("from-data")), "y": base64.StdEncoding.EncodeToString([]byte("old"))},
			"stringData": map[string]any{"y": "from-stringData"}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b"}}},
	}
	s, err := SecretsFrom(objs)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"x": "from-data", "y": "from-stringData"} {
		if got, err := s.Get(v1alpha1.SecretKeyRef{Name: "a", Key: key}); err != nil || got != want {
			t.Errorf("%s = %q, %v", key, got, err)
		}
	}
	if _, err := s.Get(v1alpha1.SecretKeyRef{Name: "a", Key: "z"}); err == nil || !strings.Contains(err.Error(), `has no key "z"`) {
		t.Errorf("missing key: %v", err)
	}
	if _, err := s.Get(v1alpha1.SecretKeyRef{Name: "b", Key: "z"}); err == nil {
		t.Error("a ConfigMap is not a Secret")
	}
	bad := []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "c"}, "data": map[string]any{"x": "not base64!"}}}}
	if _, err := SecretsFrom(bad); err == nil || strings.Contains(err.Error(), "not base64!") {
		t.Errorf("bad base64: %v (must not quote the value)", err)
	}
}

func TestQuoteConfAndRedact(t *testing.T) {
	if got := quoteConf("a\"b\\c é\n"); got != `"a\"b\\c \xc3\xa9\x0a"` {
		t.Errorf("quoteConf = %s", got)
	}
	tgt := &redisTarget{password: `p"w`}
	err := tgt.redact(errors.New(`>>> 'requirepass "p\"w"' and p"w`))
	if strings.Contains(err.Error(), `p"w`) || strings.Contains(err.Error(), `p\"w`) {
		t.Errorf("not redacted: %v", err)
	}
}

// TestUnicodePassword: a password outside ASCII reaches redis-server intact.
func TestUnicodePassword(t *testing.T) {
	needRedis(t)
	pw := "pässwörd \"quoted\" \\ 密码"
	tgt, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}},
		Options{Secrets: Secrets{"s": {"k": pw}}, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := StartWithin(context.Background(), tgt, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tgt.Stop() }()
	if got, err := resp.Do(context.Background(), tgt.Endpoints()[0].Address, pw, "PING"); err != nil || got != "PONG" {
		t.Errorf("PING with the password: %q %v", got, err)
	}
}

// TestValkeyEngine: engine valkey runs valkey-server (here redis-server under that name).
func TestValkeyEngine(t *testing.T) {
	needRedis(t)
	bin := t.TempDir()
	real, _ := exec.LookPath("redis-server")
	if err := os.Symlink(real, filepath.Join(bin, "valkey-server")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	tgt, err := New(&v1alpha1.TargetSpec{Redis: &v1alpha1.RedisTarget{Engine: v1alpha1.EngineValkey}}, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := tgt.(*redisTarget).bin; got != filepath.Join(bin, "valkey-server") {
		t.Errorf("binary %s", got)
	}
	if err := StartWithin(context.Background(), tgt, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := tgt.Stop(); err != nil {
		t.Fatal(err)
	}
}

// A target's temporary directories are locked while their owner lives: RemoveStale keeps
// them, removes them once the lock is gone (the owner died), and keeps directories that are
// not a target's or have no owner file.
func TestRemoveStale(t *testing.T) {
	tmp, rootfs := t.TempDir(), t.TempDir()
	srv := filepath.Join(rootfs, "srv")
	live, err := makeOwnedDir(tmp, "benchrun-redis-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.remove() }()
	if b, err := os.ReadFile(filepath.Join(live.path, ownerFile)); err != nil || !strings.HasPrefix(string(b), strconv.Itoa(os.Getpid())+"\n") {
		t.Fatalf("owner file %q, %v", b, err)
	}
	if err := os.MkdirAll(srv, 0o755); err != nil {
		t.Fatal(err)
	}
	var dead []string
	for _, d := range []struct{ parent, prefix string }{{tmp, "benchrun-valkey-"}, {tmp, "benchrun-hetu-"}, {srv, "benchrun-hetu-"}} {
		o, err := makeOwnedDir(d.parent, d.prefix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(o.path, "master.log"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = o.lock.Close() // what the kernel does when the owner dies
		dead = append(dead, o.path)
	}
	keep := []string{live.path, filepath.Join(tmp, "benchrun-redis-nolock"), filepath.Join(tmp, "other-dir"), filepath.Join(srv, "hetu-bench-1")}
	for _, d := range keep[1:] {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveStale(Options{TempDir: tmp, HeTuRootfs: rootfs})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	slices.Sort(dead)
	if !slices.Equal(removed, dead) {
		t.Errorf("removed %v, want %v", removed, dead)
	}
	for _, d := range dead {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s still there (%v)", d, err)
		}
	}
	for _, d := range keep {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	if err := live.remove(); err != nil {
		t.Fatal(err)
	}
	if removed, err := RemoveStale(Options{TempDir: tmp, HeTuRootfs: rootfs}); err != nil || len(removed) != 0 {
		t.Errorf("second sweep: %v, %v", removed, err)
	}
}
