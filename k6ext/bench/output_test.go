package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/results"
	"github.com/benchrun/benchrun/internal/results/resultstest"
	"github.com/benchrun/benchrun/internal/runner"
)

// TestWriteDocumentFits: the output writes a document over the stored budget fitted to it
// (2-figure histograms here), with every call kept; a small one is written unchanged.
func TestWriteDocumentFits(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		scenarios int
		wantSF    int
	}{{1, results.HistogramSigFigs}, {32, results.HistogramCoarseSigFigs}} {
		doc, err := resultstest.Document(resultstest.Spec{Runner: "r", Scenarios: c.scenarios, Duration: time.Hour,
			CallsPerMinute: 600_000, Samples: 200_000, Seed: 1, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		calls := doc.Scenarios[0].Calls
		path := filepath.Join(dir, "result.json")
		if err := writeDocument(path, doc); err != nil {
			t.Fatal(err)
		}
		back, err := results.DecodeFile(path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		gz, err := runner.EncodeResult(raw)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d scenarios × 1 h: %d KiB gzip written, sigFigs %d", c.scenarios, len(gz)>>10, back.Scenarios[0].Latency.SignificantFigures)
		if back.Scenarios[0].Calls != calls || back.Scenarios[0].Latency.SignificantFigures != c.wantSF || len(gz) > results.StoredBudget {
			t.Errorf("%d scenarios: %d calls (want %d), sigFigs %d (want %d), %d KiB gzip", c.scenarios, back.Scenarios[0].Calls, calls,
				back.Scenarios[0].Latency.SignificantFigures, c.wantSF, len(gz)>>10)
		}
	}
}
