package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/local"
	"github.com/benchrun/benchrun/internal/results"
)

// Binaries built once by TestMain.
var (
	repoRoot    string
	k6Bin       string
	benchrunBin string
	buildErr    error
	testTmp     string // TestMain's temporary directory, removed at the end
)

func TestMain(m *testing.M) {
	code := func() int {
		wd, _ := os.Getwd()
		repoRoot = filepath.Dir(filepath.Dir(wd))
		tmp, err := os.MkdirTemp("", "benchrun-cli-test-")
		if err != nil {
			_, _ = fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		testTmp = tmp
		benchrunBin = filepath.Join(tmp, "benchrun")
		if out, err := goBuild(benchrunBin, "./cmd/benchrun"); err != nil {
			buildErr = fmt.Errorf("building benchrun: %w\n%s", err, out)
		} else {
			k6Bin, buildErr = ensureK6()
		}
		return m.Run()
	}()
	os.Exit(code)
}

func goBuild(out, pkg string) ([]byte, error) {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}

// ensureK6 returns bin/k6, rebuilt when a k6 source is newer than it (the build goes to a
// temporary name and is renamed, so concurrent users never see half a binary).
func ensureK6() (string, error) {
	bin := filepath.Join(repoRoot, "bin", "k6")
	if st, err := os.Stat(bin); err == nil && !newerSource(st.ModTime()) {
		return bin, nil
	}
	_, _ = fmt.Fprintln(os.Stderr, "building bin/k6 (several minutes on a cold cache)")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", bin, os.Getpid())
	if out, err := goBuild(tmp, "./cmd/k6"); err != nil {
		return "", fmt.Errorf("building bin/k6: %w\n%s", err, out)
	}
	return bin, os.Rename(tmp, bin)
}

// newerSource reports whether a k6 source file changed after t.
func newerSource(t time.Time) bool {
	newer := false
	for _, f := range []string{"go.mod", "go.sum"} {
		if st, err := os.Stat(filepath.Join(repoRoot, f)); err == nil && st.ModTime().After(t) {
			return true
		}
	}
	for _, dir := range []string{"cmd/k6", "k6ext", "internal/results", "internal/livemetrics"} {
		_ = filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			if info, err := d.Info(); err == nil && info.ModTime().After(t) {
				newer = true
			}
			return nil
		})
	}
	return newer
}

func needBinaries(t *testing.T) {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

func needRedis(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
}

// syncBuffer is a bytes.Buffer safe to read while the process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cli is one benchrun process of a test.
type cli struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	marker         string
}

// newCLI prepares benchrun with args; its children inherit a marker to find leftovers.
func newCLI(t *testing.T, extraEnv []string, args ...string) *cli {
	t.Helper()
	needBinaries(t)
	c := &cli{marker: fmt.Sprintf("BRTEST_MARKER=%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())}
	c.cmd = exec.Command(benchrunBin, args...)
	c.cmd.Dir = repoRoot
	c.cmd.Env = append(append(os.Environ(), c.marker, "TMPDIR="+t.TempDir(), "BENCHRUN_K6="+k6Bin), extraEnv...)
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	return c
}

// run runs the CLI to its end and returns the exit code.
func (c *cli) run(t *testing.T) int {
	t.Helper()
	start := time.Now()
	err := c.cmd.Run()
	t.Logf("benchrun %s: %s\nstderr:\n%s", strings.Join(c.cmd.Args[1:], " "), time.Since(start).Round(time.Millisecond), c.stderr.String())
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		t.Fatal(err)
	}
	return 0
}

// startRunners starts the CLI in the background and returns once it has started its k6
// runners; done receives the CLI's exit. The CLI is killed when the test ends.
func (c *cli) startRunners(t *testing.T, timeout time.Duration) (done <-chan error) {
	t.Helper()
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	t.Cleanup(func() { _ = c.cmd.Process.Kill() }) // when the test fails before it stops the CLI
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for !strings.Contains(c.stderr.String(), "local k6 runner(s)") {
		select {
		case err := <-exited:
			t.Fatalf("benchrun ended early: %v\n%s", err, c.stderr.String())
		case <-ctx.Done():
			t.Fatalf("runners did not start:\n%s", c.stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return exited
}

// leftovers lists live processes started by the CLI (found by the environment marker, by
// HeTu's listen address, since HeTu starts with a clean environment, or by a Redis endpoint's
// address in the title of redis-server, which overwrites its environment with that title).
func (c *cli) leftovers(t *testing.T) []string {
	t.Helper()
	needles := []string{c.marker}
	for _, m := range regexp.MustCompile(`hetu (127\.0\.0\.1:\d+)`).FindAllStringSubmatch(c.stderr.String(), -1) {
		needles = append(needles, "HETU_LISTEN="+m[1])
	}
	var servers []string // "redis-server 127.0.0.1:PORT" titles of the target's servers
	for _, m := range regexp.MustCompile(`(?:redis|master|replica|sentinel) (127\.0\.0\.1:\d+)`).FindAllStringSubmatch(c.stderr.String(), -1) {
		servers = append(servers, "-server "+m[1])
	}
	self := strconv.Itoa(os.Getpid())
	var out []string
	var dirs []string
	// Processes take a moment to be reaped after SIGKILL.
	for try := 0; try < 20; try++ {
		out = out[:0]
		dirs, _ = filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			if filepath.Base(d) == strconv.Itoa(os.Getpid()) {
				continue
			}
			env, err := os.ReadFile(filepath.Join(d, "environ"))
			if err != nil {
				continue
			}
			cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
			stat, _ := os.ReadFile(filepath.Join(d, "stat"))
			if strings.Contains(string(stat), ") Z ") {
				continue // zombie: already dead
			}
			found := false
			for _, n := range needles {
				found = found || bytes.Contains(env, []byte(n))
			}
			// stat is "PID (COMM) STATE PPID ...": a server the test itself started (an external
			// target) is not the CLI's.
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			for _, s := range servers {
				found = found || (bytes.Contains(cmd, []byte(s)) && len(f) > 1 && f[1] != self)
			}
			if found {
				out = append(out, filepath.Base(d)+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
			}
		}
		if len(out) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return out
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readDoc decodes (and so validates) a result document.
func readDoc(t *testing.T, path string) *results.Document {
	t.Helper()
	doc, err := results.DecodeFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// completeDoc reads out/merged.json of a run that must be complete: not partial, the given
// number of scenarios, each with calls and no errors.
func completeDoc(t *testing.T, out string, scenarios int) *results.Document {
	t.Helper()
	doc := readDoc(t, filepath.Join(out, "merged.json"))
	if doc.Partial || len(doc.Scenarios) != scenarios {
		t.Fatalf("merged: partial=%v scenarios=%d, want %d", doc.Partial, len(doc.Scenarios), scenarios)
	}
	for _, s := range doc.Scenarios {
		if s.Calls == 0 || s.Errors != 0 {
			t.Errorf("scenario %s: %d calls, %d errors %v", s.Name, s.Calls, s.Errors, s.ErrorKinds)
		}
	}
	return doc
}

const redisRun = `apiVersion: v1
kind: Secret
metadata:
  name: redis-auth
stringData:
  password: "Sup3r-s3cret-pw"
---
apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-redis
spec:
  target:
    redis:
      mode: single
      config:
        io-threads: "2"
      passwordSecretRef: {name: redis-auth, key: password}
  load:
    workers: 2
    tasksPerWorker: 4
    duration: %s
    scenarios:
    - name: ping
      type: redis.ping
    - name: get_1k
      type: redis.get
      bodySize: 1024
      keySpace: 2000
    - name: redis_upsert
      type: redis.upsert
`

// TestRunRedis runs three scenarios against a real redis-server with two runners.
func TestRunRedis(t *testing.T) {
	needRedis(t)
	file := writeFile(t, "run.yaml", fmt.Sprintf(redisRun, "3s"))
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--output", "markdown", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	stdout := c.stdout.String()
	for _, want := range []string{"Average CPS (Calls Per Second) per Function:", "Function Execution Time Statistics:",
		"Return Value Distribution Statistics:", "| ping ", "PONG", "bulk(1024)", "| redis_upsert "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || string(report) != stdout {
		t.Errorf("report.md differs from stdout (%v)", err)
	}
	if doc := completeDoc(t, out, 3); len(doc.Runners) != 2 {
		t.Fatalf("merged: runners=%v", doc.Runners)
	}
	if _, err := os.Stat(filepath.Join(out, "results.json")); err != nil {
		t.Error(err)
	}
	// The password never shows up in output, logs or reports.
	_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("Sup3r-s3cret-pw")) {
				t.Errorf("%s holds the password", p)
			}
		}
		return nil
	})
	if strings.Contains(c.stderr.String()+stdout, "Sup3r-s3cret-pw") {
		t.Error("the password was printed")
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}

	// report and compare read the out dir and runner documents.
	r := newCLI(t, nil, "report", "--output", "csv", filepath.Join(out, "runner-0.json"), filepath.Join(out, "runner-1.json"))
	if code := r.run(t); code != 0 || !strings.Contains(r.stdout.String(), "get_1k,redis.get,") {
		t.Errorf("report: exit %d\n%s", code, r.stdout.String())
	}
	// --format forces one shape: ya's tables only; a shape these results lack is refused.
	r = newCLI(t, nil, "report", "--format", "ya", out)
	if code := r.run(t); code != 0 || !strings.Contains(r.stdout.String(), "Average CPS (Calls Per Second) per Function:") ||
		strings.Contains(r.stdout.String(), "protocol table") {
		t.Errorf("report --format ya: exit %d\n%s", code, r.stdout.String())
	}
	r = newCLI(t, nil, "report", "--format", "echo", out)
	if code := r.run(t); code != exitFailed || !strings.Contains(r.stderr.String(), "--format echo: these results have no echo rows (their shapes: ya") {
		t.Errorf("report --format echo: exit %d\n%s", code, r.stderr.String())
	}
	cmp := newCLI(t, nil, "compare", out, filepath.Join(out, "runner-0.json"))
	if code := cmp.run(t); code != 0 || !strings.Contains(cmp.stdout.String(), "| out ") || !strings.Contains(cmp.stdout.String(), "runner-0") {
		t.Errorf("compare: exit %d\n%s", code, cmp.stdout.String())
	}
}

// TestRunRedisHA runs reads (on the replicas) and a YCSB mix against master + replicas +
// sentinels with a password.
func TestRunRedisHA(t *testing.T) {
	needRedis(t)
	file := writeFile(t, "ha.yaml", `apiVersion: v1
kind: Secret
metadata:
  name: redis-auth
data:
  password: `+base64.StdEncoding.EncodeToString([]byte("ha-pw"))+`
---
apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-ha
spec:
  target:
    redis:
      mode: ha
      replicas: 2
      sentinels: 3
      passwordSecretRef: {name: redis-auth, key: password}
  load:
    workers: 2
    tasksPerWorker: 2
    duration: 2s
    trim:
      dropPercent: 5
    scenarios:
    - name: get
      type: redis.get
      keySpace: 1000
    - name: ycsb_a
      type: ycsb
      keySpace: 1000
      ycsb: {readProportion: 0.5, updateProportion: 0.4, insertProportion: 0.1, requestDistribution: uniform}
`)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--output", "json", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	for _, role := range []string{"master ", "replica ", "sentinel "} {
		if !strings.Contains(c.stderr.String(), role+"127.0.0.1:") {
			t.Errorf("no %sendpoint in the log", role)
		}
	}
	doc := completeDoc(t, out, 2)
	if get := doc.Scenarios[0]; get.ReturnValues["bulk(3)"] != get.Calls {
		t.Errorf("get: the prefilled keys are not read everywhere: %v", get.ReturnValues)
	}
	if y := doc.Scenarios[1]; y.ReturnValues["read"] == 0 || y.ReturnValues["update"] == 0 || y.ReturnValues["insert"] == 0 {
		t.Errorf("ycsb operations: %v", y.ReturnValues)
	}
	if !strings.HasPrefix(strings.TrimSpace(c.stdout.String()), "{") {
		t.Errorf("--output json printed:\n%s", c.stdout.String())
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestRunExternal runs against an existing Redis (started here) reached through the
// external target with an ACL user and password from Secrets.
func TestRunExternal(t *testing.T) {
	needRedis(t)
	port, err := local.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no")
	srv.Dir = t.TempDir()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for i := 0; ; i++ {
		out, _ := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "ACL", "SETUSER", "bench", "on", ">ext-pw", "~*", "+@all").CombinedOutput()
		if strings.TrimSpace(string(out)) == "OK" {
			break
		}
		if i > 50 {
			t.Fatalf("redis-server on %s: %s", addr, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	file := writeFile(t, "ext.yaml", `apiVersion: v1
kind: Secret
metadata:
  name: ext
stringData:
  user: bench
  password: ext-pw
---
apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-external
spec:
  target:
    external:
      kind: redis
      addresses: ["`+addr+`"]
      usernameSecretRef: {name: ext, key: user}
      passwordSecretRef: {name: ext, key: password}
  load:
    workers: 1
    tasksPerWorker: 4
    duration: 2s
    scenarios:
    - name: set_128
      type: redis.set
      bodySize: 128
`)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	doc := readDoc(t, filepath.Join(out, "merged.json"))
	if s := doc.Scenarios[0]; s.Calls == 0 || s.Errors != 0 || s.ReturnValues["OK"] != s.Calls {
		t.Errorf("set_128: %d calls, %d errors, %v", s.Calls, s.Errors, s.ReturnValues)
	}
}

// TestRunScript runs a custom script scenario from a ConfigMap of the run file next to a
// built-in one; its params reach it as environment variables.
func TestRunScript(t *testing.T) {
	needRedis(t)
	file := writeFile(t, "script.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: my-script}
data:
  script.js: |
    import benchrun from 'k6/x/benchrun';
    export default function () {
      benchrun.record(0.1, __ENV.GREETING || 'missing');
    }
---
apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-script
spec:
  target:
    redis: {mode: single}
  load:
    workers: 1
    tasksPerWorker: 2
    duration: 2s
    scenarios:
    - name: ping
      type: redis.ping
    - name: mine
      type: script
      script: {configMapName: my-script}
      params: {GREETING: hello}
`)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	doc := readDoc(t, filepath.Join(out, "merged.json"))
	if len(doc.Scenarios) != 2 {
		t.Fatalf("%d scenarios", len(doc.Scenarios))
	}
	if s := doc.Scenarios[1]; s.Name != "mine" || s.Calls == 0 || s.ReturnValues["hello"] != s.Calls {
		t.Errorf("script scenario %s: %d calls, %v", s.Name, s.Calls, s.ReturnValues)
	}

	missing := newCLI(t, nil, "run", "-f", writeFile(t, "bad.yaml", strings.Replace(mustRead(t, file), "name: my-script}", "name: other}", 1)),
		"--out-dir", filepath.Join(t.TempDir(), "out"))
	if code := missing.run(t); code != exitFailed || !strings.Contains(missing.stderr.String(), `ConfigMap "my-script" not found`) {
		t.Errorf("missing ConfigMap: exit %d\n%s", code, missing.stderr.String())
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// needHeTu skips t unless a local HeTu target can run here: as root, with the HeTu runtime
// built (hack/hetu-runtime.sh).
func needHeTu(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a local HeTu target needs root")
	}
	if _, err := os.Stat(filepath.Join(local.DefaultHeTuRootfs(), ".benchrun-venv")); err != nil {
		t.Skip("HeTu runtime not built (hack/hetu-runtime.sh)")
	}
}

// TestRunHeTu runs the four HeTu RPC scenarios against two servers of the real HeTu bench
// app (VUs spread over both) on one Redis back end.
func TestRunHeTu(t *testing.T) {
	needRedis(t)
	needHeTu(t)
	file := writeFile(t, "hetu.yaml", `apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: cli-hetu
spec:
  target:
    hetu:
      replicas: 2
      workers: 1
      backend:
        redis:
          mode: single
  load:
    workers: 2
    tasksPerWorker: 3
    duration: 2s
    scenarios:
    - name: get
      type: hetu.get
    - name: get2_update2
      type: hetu.get2_update2
    - name: get_then_update
      type: hetu.get_then_update
    - name: hello_world
      type: hetu.hello_world
`)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--out-dir", out)
	if code := c.run(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if n := len(regexp.MustCompile(`hetu 127\.0\.0\.1:\d+`).FindAllString(c.stderr.String(), -1)); n != 2 {
		t.Errorf("%d HeTu endpoints, want 2 (replicas: 2)", n)
	}
	doc := completeDoc(t, out, 4)
	for _, s := range doc.Scenarios {
		if s.Name == "hello_world" && s.ReturnValues["世界收到"] != s.Calls {
			t.Errorf("hello_world return values %v", s.ReturnValues)
		}
		if s.Name == "get" && s.ReturnValues["0"] != s.Calls {
			t.Errorf("get return values %v", s.ReturnValues)
		}
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestBadInput: bad flags and bad files fail at once with a clear message and start nothing.
func TestBadInput(t *testing.T) {
	valid := fmt.Sprintf(redisRun, "3s")
	cases := []struct {
		name     string
		file     string // run file content ("" = no file written)
		args     []string
		code     int
		contains string
	}{
		{"no file flag", "", []string{"run"}, exitUsage, "give the run file with -f"},
		{"missing file", "", []string{"run", "-f", "/nonexistent/run.yaml"}, exitFailed, "no such file"},
		{"bad output", valid, []string{"run", "--output", "xml"}, exitUsage, `--output "xml": must be one of`},
		{"unknown flag", valid, []string{"run", "--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{"not yaml", "a: [b\n", []string{"run"}, exitFailed, "not valid YAML or JSON"},
		{"no run", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", []string{"run"}, exitFailed, "no BenchmarkRun in the file"},
		{"cel rule", strings.Replace(valid, "type: redis.ping", "type: hetu.get", 1), []string{"run"}, exitFailed, "scenarios of type hetu.* need a HeTu target"},
		{"unknown field", strings.Replace(valid, "    workers: 2", "    workers: 2\n    wokers: 3", 1), []string{"run"}, exitFailed, `unknown field "spec.load.wokers"`},
		{"missing secret", strings.Replace(valid, "name: redis-auth, key", "name: other, key", 1), []string{"run"}, exitFailed, `secret "other" not found`},
		{"stock k6", valid, []string{"run", "--k6", "/bin/true"}, exitFailed, "--k6 /bin/true: not benchrun's k6"},
		{"too many runners", valid, []string{"run", "--runners", "9"}, exitFailed, "gets no virtual user"},
		{"proxy mode", strings.Replace(valid, "mode: single", "mode: proxy", 1), []string{"run"}, exitFailed, "redis mode proxy: not supported locally yet"},
		{"fault role", valid + "  faults: [{scenario: ping, offset: 1s, action: kill, role: replica}]\n", []string{"run"}, exitFailed, "spec.faults[].role must be a role the target has"},
		{"validate invalid", strings.Replace(valid, "type: redis.ping", "type: hetu.get", 1), []string{"validate"}, exitFailed, "need a HeTu target"},
		{"unknown command", "", []string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{"report nothing", "", []string{"report"}, exitUsage, "give one or more result files"},
		{"report bad doc", "{}", []string{"report"}, exitFailed, "benchrun report:"},
		{"report bad format", "{}", []string{"report", "--format", "pegasus"}, exitUsage, `--format "pegasus": must be one of all, ya, echo, packetd, ycsb`},
		{"report format with json", "{}", []string{"report", "--format", "ycsb", "--output", "json"}, exitUsage, "--format ycsb prints that shape's markdown tables"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				f := writeFile(t, "run.yaml", tc.file)
				if args[0] == "report" {
					args = append(args, f)
				} else if args[0] != "frobnicate" {
					args = append(args, "-f", f)
				}
			}
			out := filepath.Join(t.TempDir(), "out")
			if args[0] == "run" {
				args = append(args, "--out-dir", out)
			}
			c := newCLI(t, nil, args...)
			if code := c.run(t); code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			if !strings.Contains(c.stderr.String(), tc.contains) {
				t.Errorf("stderr lacks %q:\n%s", tc.contains, c.stderr.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("out dir created for a bad input")
			}
			if left := c.leftovers(t); len(left) > 0 {
				t.Errorf("processes started: %v", left)
			}
		})
	}
	c := newCLI(t, nil, "validate", "-f", writeFile(t, "run.yaml", valid))
	if code := c.run(t); code != 0 || !strings.Contains(c.stdout.String(), `BenchmarkRun "cli-redis" is valid`) {
		t.Errorf("validate valid: exit %d: %s", code, c.stdout.String())
	}
}

// TestTargetNeverReady: a redis-server that never answers fails the run after
// timeouts.targetReady, with nothing left running.
func TestTargetNeverReady(t *testing.T) {
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "redis-server"), []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "run.yaml", strings.Replace(fmt.Sprintf(redisRun, "3s"), "  load:", "  timeouts:\n    targetReady: 2s\n  load:", 1))
	c := newCLI(t, []string{"PATH=" + fake + ":" + os.Getenv("PATH")}, "run", "-f", file, "--out-dir", filepath.Join(t.TempDir(), "out"))
	start := time.Now()
	if code := c.run(t); code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s", d)
	}
	if !strings.Contains(c.stderr.String(), "target not ready within 2s (spec.timeouts.targetReady)") {
		t.Errorf("stderr:\n%s", c.stderr.String())
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestInterruptWhileStarting: Ctrl-C while the target is starting stops it at once.
func TestInterruptWhileStarting(t *testing.T) {
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "redis-server"), []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "run.yaml", fmt.Sprintf(redisRun, "3s"))
	c := newCLI(t, []string{"PATH=" + fake + ":" + os.Getenv("PATH")}, "run", "-f", file, "--out-dir", filepath.Join(t.TempDir(), "out"))
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(c.stderr.String(), "starting the redis/single target"); {
		if time.Now().After(deadline) {
			_ = c.cmd.Process.Kill()
			t.Fatalf("no \"starting the redis/single target\" line within 1 min; stderr:\n%s", c.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Errorf("exit: %v, want code %d", err, exitInterrupted)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("benchrun did not stop within 20s of SIGINT")
	}
	if !strings.Contains(c.stderr.String(), "interrupted while starting the target") {
		t.Errorf("stderr:\n%s", c.stderr.String())
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestRunnerFails: runners that fail without results fail the run clearly, target stopped.
func TestRunnerFails(t *testing.T) {
	needRedis(t)
	fakeK6 := filepath.Join(t.TempDir(), "k6")
	if err := os.WriteFile(fakeK6, []byte("#!/bin/sh\n[ \"$1\" = version ] && { echo 'k6 v2 with k6/x/benchrun'; exit 0; }\necho 'fake k6: script error' >&2\nexit 107\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "run.yaml", fmt.Sprintf(redisRun, "3s"))
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--k6", fakeK6, "--out-dir", filepath.Join(t.TempDir(), "out"))
	if code := c.run(t); code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	// Both runners fail; whichever fails first stops the other, and its log tail (the
	// cause) is printed.
	for _, want := range []string{"no runner wrote results", "no result document (k6 exit code 107", "fake k6: script error"} {
		if !strings.Contains(c.stderr.String(), want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}

	// One runner of two fails mid-run: the other is stopped at once, its results are
	// reported as partial and the run fails.
	wrapper := filepath.Join(t.TempDir(), "k6")
	script := "#!/bin/sh\ncase \"$BENCHRUN_RUNNER\" in *-1) sleep 3; echo 'runner 1 crashed' >&2; exit 3;; esac\nexec " + k6Bin + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	file = writeFile(t, "run.yaml", fmt.Sprintf(redisRun, "10s"))
	c = newCLI(t, nil, "run", "-f", file, "--runners", "2", "--k6", wrapper, "--out-dir", out)
	start := time.Now()
	if code := c.run(t); code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	if d := time.Since(start); d > 25*time.Second {
		t.Errorf("took %s: the other runner was not stopped", d)
	}
	if !strings.Contains(c.stderr.String(), "k6 runner 1 failed (exit code 3") || !strings.Contains(c.stdout.String(), "**PARTIAL RESULTS**") {
		t.Errorf("stderr:\n%s\nstdout:\n%s", c.stderr.String(), c.stdout.String())
	}
	doc := readDoc(t, filepath.Join(out, "merged.json"))
	if !doc.Partial || !strings.Contains(strings.Join(doc.PartialReasons, "\n"), "cli-redis-1: no result document (k6 exit code 3") {
		t.Errorf("merged: partial=%v reasons=%q", doc.Partial, doc.PartialReasons)
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestRunTimeout: spec.timeouts.run stops the runners, reports partial results and fails.
func TestRunTimeout(t *testing.T) {
	needRedis(t)
	// Admission refuses a timeouts.run below the scenarios' total duration, so the scenarios
	// are requests-bounded (at most load.duration each, not counted): 5s still cuts them.
	doc := strings.Replace(fmt.Sprintf(redisRun, "10s"), "  load:", "  timeouts:\n    run: 5s\n  load:", 1)
	for _, typ := range []string{"redis.ping", "redis.get", "redis.upsert"} {
		doc = strings.Replace(doc, "      type: "+typ+"\n", "      type: "+typ+"\n      requests: 1000000000\n", 1)
	}
	file := writeFile(t, "run.yaml", doc)
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--out-dir", out)
	start := time.Now()
	if code := c.run(t); code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s", d)
	}
	if !strings.Contains(c.stderr.String(), "run timeout (spec.timeouts.run) reached") || !strings.Contains(c.stdout.String(), "**PARTIAL RESULTS**") {
		t.Errorf("stderr:\n%s\nstdout:\n%s", c.stderr.String(), c.stdout.String())
	}
	if doc := readDoc(t, filepath.Join(out, "merged.json")); !doc.Partial {
		t.Error("merged.json is not marked partial")
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestInterrupt: Ctrl-C mid-run stops every process and reports partial results.
func TestInterrupt(t *testing.T) {
	needRedis(t)
	file := writeFile(t, "run.yaml", fmt.Sprintf(redisRun, "10s"))
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, nil, "run", "-f", file, "--runners", "2", "--out-dir", out)
	done := c.startRunners(t, 60*time.Second)
	// Interrupt a few seconds into the first scenario.
	time.Sleep(5 * time.Second)
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("benchrun did not stop within 60s of SIGINT")
	}
	t.Logf("stderr:\n%s", c.stderr.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit: %v, want code %d", err, exitInterrupted)
	}
	if !strings.Contains(c.stdout.String(), "**PARTIAL RESULTS**") || !strings.Contains(c.stdout.String(), "| ping ") {
		t.Errorf("stdout:\n%s", c.stdout.String())
	}
	doc := readDoc(t, filepath.Join(out, "merged.json"))
	if !doc.Partial || len(doc.PartialReasons) == 0 {
		t.Errorf("merged.json: partial=%v reasons=%v", doc.Partial, doc.PartialReasons)
	}
	if left := c.leftovers(t); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}
