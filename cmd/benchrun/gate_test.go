package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withThresholds adds spec.thresholds (YAML flow items) to the redisRun file.
func withThresholds(duration string, items ...string) string {
	return strings.Replace(redisRunWith(duration), "  load:\n", "  thresholds:\n  - "+strings.Join(items, "\n  - ")+"\n  load:\n", 1)
}

// withBaseline adds spec.baseline (a cluster run; locally --baseline DIR stands for it).
func withBaseline(file string) string {
	return strings.Replace(file, "  load:\n", "  baseline: {name: first}\n  load:\n", 1)
}

// redisRunWith is redisRun with a scenario duration.
func redisRunWith(duration string) string { return strings.Replace(redisRun, "%s", duration, 1) }

// TestRunGate: benchrun run as a CI gate on a real redis-server and real k6 — thresholds met
// exit 0 with the table; broken ones (here relative to --baseline, the first run's out dir)
// exit 3 with the table and the deltas; compare on the two dirs shows the deltas too.
func TestRunGate(t *testing.T) {
	needRedis(t)
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	c := newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", withThresholds("2s", "{expr: 'p99 < 60000'}", "{scenario: ping, expr: 'cps > 1'}")),
		"--output", "markdown", "--out-dir", first)
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit code %d\n%s", code, c.stderr.String())
	}
	for _, want := range []string{"| ping | p99 < 60000 |", "| ping | cps > 1 |", "| redis_upsert | p99 < 60000 |", "Verdict: Passed"} {
		if !strings.Contains(c.stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, c.stdout.String())
		}
	}

	second := filepath.Join(dir, "second")
	c = newCLI(t, nil, "run", "-f", writeFile(t, "run.yaml", withBaseline(withThresholds("2s", "{scenario: get_1k, expr: 'cps >= +100000%'}", "{expr: 'errorRate <= 0'}"))),
		"--output", "json", "--out-dir", second, "--baseline", first)
	if code := c.run(t); code != exitThresholds {
		t.Fatalf("exit code %d, want %d\n%s", code, exitThresholds, c.stderr.String())
	}
	for _, want := range []string{"| get_1k | cps >= +100000% |", "FAIL", "Verdict: Failed", "Against baseline first:", "| get_1k |"} {
		if !strings.Contains(c.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, c.stderr.String())
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(c.stdout.String()), "{") {
		t.Errorf("json stdout mixed with the table:\n%s", c.stdout.String())
	}
	if b, err := os.ReadFile(filepath.Join(second, "verdict.md")); err != nil || !strings.Contains(string(b), "Verdict: Failed") {
		t.Errorf("verdict.md: %v %s", err, b)
	}

	cmp := newCLI(t, nil, "compare", first, second)
	if code := cmp.run(t); code != exitOK || !strings.Contains(cmp.stdout.String(), "second against baseline first:") ||
		!strings.Contains(cmp.stdout.String(), "| ping |") {
		t.Errorf("compare: exit %d\n%s", code, cmp.stdout.String())
	}
}

// TestGateBadInput: a relative threshold without --baseline, and a missing baseline dir,
// are refused before anything starts.
func TestGateBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		contains   string
	}{
		{"relative without baseline", withBaseline(withThresholds("2s", "{expr: 'cps >= -5%'}")), nil, "give the baseline's out dir with --baseline DIR"},
		{"missing baseline", redisRunWith("2s"), []string{"--baseline", "/nonexistent/dir"}, "--baseline: "},
		{"unknown metric", withThresholds("2s", "{expr: 'p95 < 5'}"), nil, "unknown metric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-f", writeFile(t, "run.yaml", tc.file), "--out-dir", out}, tc.args...)
			c := newCLI(t, nil, args...)
			if code := c.run(t); code != exitFailed || !strings.Contains(c.stderr.String(), tc.contains) {
				t.Errorf("exit %d, stderr lacks %q:\n%s", code, tc.contains, c.stderr.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("out dir created for a bad input")
			}
		})
	}
}
