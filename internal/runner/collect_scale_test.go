package runner

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/results/resultstest"
)

// TestCollectScale measures the manager's collection of BENCHRUN_COLLECT_RUNNERS (1,024)
// synthetic runner documents of 2 scenarios × 24 h each (stored gzip'd as runners store
// them): decode, merge, summarize. BENCHRUN_COLLECT_MODE=stream is what collect does (one
// document at a time, lifecycle.MergeEach); =all is the baseline it replaced (every document
// decoded first, then merged). Each mode runs in its own process (make bench) so the peak RSS
// (VmHWM) is its own. Run by `make bench` (BENCHRUN_BENCH=1).
func TestCollectScale(t *testing.T) {
	if os.Getenv("BENCHRUN_BENCH") == "" {
		t.Skip("measurement: set BENCHRUN_BENCH=1 (make bench)")
	}
	mode := os.Getenv("BENCHRUN_COLLECT_MODE")
	n, _ := strconv.Atoi(os.Getenv("BENCHRUN_COLLECT_RUNNERS"))
	if n <= 0 {
		n = 1024
	}
	// Eight distinct stored documents stand for the runners' ConfigMaps (fetched one at a time).
	var stored [8][]byte
	for i := range stored {
		doc, err := resultstest.Document(resultstest.Spec{Runner: "r", Scenarios: 2, Duration: 24 * time.Hour,
			CallsPerMinute: 600_000, Samples: 50_000, Seed: uint64(i + 1), Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		raw, _, err := results.Fit(doc, results.StoredBudget)
		if err != nil {
			t.Fatal(err)
		}
		if stored[i], err = EncodeResult(raw); err != nil {
			t.Fatal(err)
		}
	}
	fetch := func(i int) lifecycle.Runner {
		cm := &corev1.ConfigMap{BinaryData: map[string][]byte{KeyResult: stored[i%len(stored)]}}
		cm.Name = fmt.Sprintf("run-runner-%d", i)
		doc, err := DecodeResult(cm)
		if err != nil {
			t.Fatal(err)
		}
		doc.Runners = []string{fmt.Sprintf("runner-%d", i)}
		return lifecycle.Runner{Name: doc.Runners[0], Doc: doc}
	}
	rssBefore := vmHWM(t)
	start := time.Now()
	var merged *results.Document
	var err error
	switch mode {
	case "all":
		rs := make([]lifecycle.Runner, n)
		for i := range rs {
			rs[i] = fetch(i)
		}
		merged, _, err = lifecycle.Merge(rs, false)
	default:
		mode = "stream"
		merged, _, err = lifecycle.MergeEach(n, fetch, false)
	}
	if err != nil {
		t.Fatal(err)
	}
	sum := results.Summarize(merged, results.DefaultOptions())
	elapsed := time.Since(start)
	if len(merged.Runners) != n || len(sum.Scenarios) != 2 {
		t.Fatalf("%d runners, %d scenarios merged", len(merged.Runners), len(sum.Scenarios))
	}
	fmt.Printf("collect %s: %d runner documents (%d KiB gzip each, 2 scenarios × 24 h): %.2f s, peak RSS %d MiB (%d MiB before collecting)\n",
		mode, n, len(stored[0])>>10, elapsed.Seconds(), vmHWM(t)>>20, rssBefore>>20)
}

// vmHWM is this process's peak resident set size in bytes (Linux /proc).
func vmHWM(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: ", err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := strings.CutPrefix(string(line), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb << 10
		}
	}
	return 0
}
