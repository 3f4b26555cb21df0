package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/local"
)

// backendsSuiteYAML is the shape of the users' Redis comparison (config/samples/
// suite-redis-compare.yaml, test/e2e TestSuiteBackends): builtin Redis (the reference), Redis
// with io-threads, Valkey, and an external endpoint whose password comes from a Secret in the
// same file. The thresholds are lenient, so the verdict passes on any working machine: on a
// loaded one two adjacent children's calls/s were seen 3.5 times apart (io2 at -72 %).
const backendsSuiteYAML = `apiVersion: v1
kind: Secret
metadata:
  name: ext-auth
stringData:
  password: ext-pw
---
apiVersion: bench.benchrun.io/v1alpha1
kind: BenchmarkSuite
metadata:
  name: cli-backends
spec:
  template:
    target:
      redis: {mode: single}
    load:
      workers: 1
      tasksPerWorker: 2
      duration: 1s
      scenarios:
      - {name: get, type: redis.get, keySpace: 100}
  variants:
  - name: redis
  - name: io2
    redis: {config: {io-threads: "2"}}
  - name: valkey
    redis: {engine: valkey}
  - name: ext
    target:
      external:
        kind: redis
        addresses: ["%s"]
        passwordSecretRef: {name: ext-auth, key: password}
  reference: redis
  thresholds:
  - {variant: io2, scenario: get, expr: "cps >= -99%%"}
  - {variant: valkey, scenario: get, expr: "p99 < 1000"}
`

// needValkey returns the path of valkey-server; without it the test fails (CI installs it:
// a Valkey variant that silently never runs would hide a broken engine: valkey).
func needValkey(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Fatalf("valkey-server is not on PATH: install it with hack/install-valkey.sh (root, Debian bookworm-backports; .ci/run does)")
	}
	return bin
}

// valkeyShim puts a valkey-server first on a PATH that records each start (its arguments and
// the real binary's --version) in the returned log, then execs the real valkey-server.
func valkeyShim(t *testing.T, real string) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "valkey-server.starts")
	script := fmt.Sprintf("#!/bin/sh\n{ echo \"argv: $*\"; %q --version; } >> %q\nexec %q \"$@\"\n", real, log, real)
	if err := os.WriteFile(filepath.Join(dir, "valkey-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + dir + ":" + os.Getenv("PATH"), log
}

// startExternalRedis starts a redis-server on a free port that wants password, and returns
// its address once it answers PING; it is killed when the test ends.
func startExternalRedis(t *testing.T, password string) string {
	t.Helper()
	port, err := local.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p := strconv.Itoa(port)
	srv := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", p, "--save", "", "--appendonly", "no", "--requirepass", password)
	srv.Dir = t.TempDir()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	for i := 0; ; i++ {
		out, _ := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", p, "--no-auth-warning", "-a", password, "PING").CombinedOutput()
		if strings.TrimSpace(string(out)) == "PONG" {
			return "127.0.0.1:" + p
		}
		if i > 50 {
			t.Fatalf("redis-server on port %s: %s", p, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRunSuiteBackends: the users' Redis comparison runs locally with real processes —
// redis-server, redis-server with io-threads, valkey-server (really Valkey: its start is
// recorded) and an external redis-server with a password from a Secret — and gives the
// combined table (one row per variant, CPS > 0, deltas against redis), the CPS chart and a
// passed verdict.
func TestRunSuiteBackends(t *testing.T) {
	needRedis(t)
	path, starts := valkeyShim(t, needValkey(t))
	addr := startExternalRedis(t, "ext-pw")
	out := filepath.Join(t.TempDir(), "out")
	c := newCLI(t, []string{path}, "run", "-f", writeFile(t, "suite.yaml", fmt.Sprintf(backendsSuiteYAML, addr)), "--out-dir", out, "--output", "markdown")
	start := time.Now()
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d, want %d; the report:\n%s", code, exitOK, c.stdout.String())
	}
	t.Logf("4 child runs of a 1 s scenario: %s", time.Since(start).Round(100*time.Millisecond))
	var s v1alpha1.BenchmarkSuite
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, SuiteDocument))), &s); err != nil {
		t.Fatal(err)
	}
	if s.Status.Phase != v1alpha1.SuiteSucceeded || s.Status.Verdict != v1alpha1.VerdictPassed || len(s.Status.Thresholds) != 2 || len(s.Status.Children) != 4 {
		t.Fatalf("status: phase %s, verdict %s on %d thresholds, %d children", s.Status.Phase, s.Status.Verdict, len(s.Status.Thresholds), len(s.Status.Children))
	}
	checkBackendsTable(t, s.Status.Table)
	md := c.stdout.String()
	for _, v := range []string{"redis", "io2", "valkey", "ext"} {
		if want := "| get | " + v + " |  | 1 | 0 |"; !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if file := mustRead(t, filepath.Join(out, "report.md")); file != md {
		t.Errorf("report.md differs from the printed report")
	}
	if svg, err := os.ReadFile(filepath.Join(out, "cps.svg")); err != nil || xml.Unmarshal(svg, new(struct{})) != nil || !strings.Contains(string(svg), "valkey") {
		t.Errorf("cps.svg: %v, or not SVG naming the variants", err)
	}
	// The valkey child started valkey-server once, and it was Valkey.
	if log := mustRead(t, starts); strings.Count(log, "argv: ") != 1 || !strings.Contains(log, "Valkey server v=") {
		t.Errorf("valkey-server starts:\n%s", log)
	}
	if log := mustRead(t, filepath.Join(out, "cli-backends-valkey-r1", "benchrun.log")); !strings.Contains(log, "started valkey master") {
		t.Errorf("the valkey child's benchrun.log does not start a valkey master:\n%s", log)
	}
	if leftovers := c.leftovers(t); len(leftovers) > 0 {
		t.Errorf("processes left: %v", leftovers)
	}
}

// checkBackendsTable: one get row per variant in order, one successful run each with CPS > 0,
// a CPS delta on every row but the reference's.
func checkBackendsTable(t *testing.T, rows []v1alpha1.SuiteRow) {
	t.Helper()
	variants := []string{"redis", "io2", "valkey", "ext"}
	if len(rows) != len(variants) {
		t.Fatalf("table: %+v", rows)
	}
	for i, r := range rows {
		if r.Variant != variants[i] || r.Scenario != "get" || r.Runs != 1 || r.Failed != 0 || r.CPS.Mean <= 0 {
			t.Errorf("row %d: %+v, want variant %s with CPS > 0", i, r, variants[i])
		}
		if (i == 0) != (r.CPSDeltaPercent == nil) {
			t.Errorf("%s: CPS delta %v, want one against the reference redis on every other row", r.Variant, r.CPSDeltaPercent)
		}
		t.Logf("%-6s CPS %.0f", r.Variant, r.CPS.Mean)
	}
}
