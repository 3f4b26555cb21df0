package runner

import (
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results/resultstest"
)

// peakDecodeMerge decodes a stored result document and merges it with an honest one as the
// manager's collection does (lifecycle.MergeEach), and returns the bytes allocated (TotalAlloc:
// at least the peak heap growth), the peak heap in use sampled after the decode, and the
// merge's partial reasons.
func peakDecodeMerge(t *testing.T, stored, honest []byte) (alloc, heap uint64, reasons []string) {
	t.Helper()
	cm := func(name string, data []byte) *corev1.ConfigMap {
		c := &corev1.ConfigMap{BinaryData: map[string][]byte{KeyResult: data}}
		c.Name = name
		return c
	}
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	docs := []*corev1.ConfigMap{cm("run-result-0", stored), cm("run-result-1", honest)}
	merged, _, err := lifecycle.MergeEach(len(docs), func(i int) lifecycle.Runner {
		r := lifecycle.Runner{Name: docs[i].Name}
		doc, err := DecodeResult(docs[i])
		if i == 0 {
			runtime.ReadMemStats(&b)
			heap = b.HeapAlloc - min(b.HeapAlloc, a.HeapAlloc)
		}
		if err != nil {
			r.Missing = "unreadable result: " + err.Error()
		}
		r.Doc = doc
		return r
	}, false)
	runtime.ReadMemStats(&b)
	if err != nil {
		t.Fatalf("the honest runner's result was lost: %v", err)
	}
	if len(merged.Scenarios) == 0 {
		t.Fatal("no scenario of the honest runner kept")
	}
	return b.TotalAlloc - a.TotalAlloc, heap, merged.PartialReasons
}

// TestHostileManyScenarios: a ~16 KiB gzip result document that expands to ~5.6 million
// empty scenarios (under the 16 MiB decompressed cap) is refused while it is read, with
// bounded memory, as that runner's missing result; the other runner's results are merged.
// On main before the structure check, decoding it allocated over 12 GiB (heap 9.4 GiB).
// BENCHRUN_BENCH=1 logs the figures hack/bench.sh prints, against an honest document of
// the same compressed size.
func TestHostileManyScenarios(t *testing.T) {
	hostile := resultstest.ManyScenarios(MaxResultBytes - 1024)
	honest, err := resultstest.Normal(len(hostile))
	if err != nil {
		t.Fatal(err)
	}
	alloc, heap, reasons := peakDecodeMerge(t, hostile, honest)
	t.Logf("hostile %d KiB gzip (16 MiB of empty scenarios): allocated %d MiB, heap %d MiB after decoding; reasons %q",
		len(hostile)>>10, alloc>>20, heap>>20, reasons)
	if alloc > 64<<20 {
		t.Errorf("refusing the hostile document allocated %d MiB, want under 64 MiB", alloc>>20)
	}
	if len(reasons) != 1 || !strings.Contains(reasons[0], "run-result-0: unreadable result") ||
		!strings.Contains(reasons[0], "scenarios: more than 64 entries") {
		t.Errorf("partial reasons %q, want the hostile runner's refusal naming scenarios", reasons)
	}
	nAlloc, nHeap, nReasons := peakDecodeMerge(t, honest, honest)
	if len(nReasons) != 0 {
		t.Errorf("honest documents gave partial reasons %q", nReasons)
	}
	t.Logf("normal %d KiB gzip: allocated %d MiB, heap %d MiB after decoding", len(honest)>>10, nAlloc>>20, nHeap>>20)
	t.Logf("bench: hostile %d KiB gzip -> allocated %.1f MiB (%.0fx input); normal %d KiB gzip -> allocated %.1f MiB (%.0fx input)",
		len(hostile)>>10, float64(alloc)/(1<<20), float64(alloc)/float64(len(hostile)),
		len(honest)>>10, float64(nAlloc)/(1<<20), float64(nAlloc)/float64(len(honest)))
}
