package runner

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/internal/lifecycle"
	"github.com/benchrun/benchrun/internal/results"
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
// On main before the structure check, decoding it allocated over 12 GiB (heap 9.4 GiB); now
// it is refused while it is decompressed, before it is buffered.
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
	if alloc > 8<<20 { // the task's bound is 64 MiB; checked while decompressed, it is ~1 MiB
		t.Errorf("refusing the hostile document allocated %d MiB, want under 8 MiB", alloc>>20)
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
	mib := func(n uint64) float64 { return float64(n) / (1 << 20) }
	t.Logf("bench: hostile %d KiB gzip (%.0f MiB of empty scenarios) -> decode+merge allocated %.1f MiB (%.0fx input), heap +%.1f MiB; "+
		"normal %d KiB gzip -> allocated %.1f MiB (%.0fx input), heap +%.1f MiB; hostile/normal allocated %.1fx",
		len(hostile)>>10, mib(MaxResultBytes-1024), mib(alloc), float64(alloc)/float64(len(hostile)), mib(heap),
		len(honest)>>10, mib(nAlloc), float64(nAlloc)/float64(len(honest)), mib(nHeap), float64(alloc)/float64(nAlloc))
}

// hostileSeeds are crafted worst cases for FuzzHostilePath: each as stored (gzip).
func hostileSeeds() [][]byte {
	gz := func(parts ...string) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		for _, p := range parts {
			_, _ = zw.Write([]byte(p))
		}
		_ = zw.Close()
		return b.Bytes()
	}
	counts := strings.Repeat(",0", 29999)
	var scen []string
	for i := range 64 { // the most timeline counts and buckets the bounds let through
		scen = append(scen, fmt.Sprintf(`{"name":"s%d","starts":{"counts":[0%s]},"latency":{"buckets":[%s[1,1]]}}`,
			i, counts, strings.Repeat("[1,1],", 999)))
	}
	var lts []string
	for i := range 64 { // the most latency intervals the bounds let through, one number each
		lts = append(lts, fmt.Sprintf(`{"name":"s%d","latencyTimeline":{"intervals":[[1]%s]}}`, i, strings.Repeat(",[1]", 8783)))
	}
	return [][]byte{
		resultstest.ManyScenarios(1 << 20),
		gz(`{"schemaVersion":2,"runners":["r"],"scenarios":[`, strings.Join(lts, ","), `]}`),
		gz(`{"schemaVersion":2,"runners":["r"],"scenarios":[`, strings.Join(scen, ","), `]}`),
		gz(`{"schemaVersion":2,"runners":[`, strings.Repeat(`"r",`, 8191), `"r"],"partialReasons":[`,
			strings.Repeat(`"`+strings.Repeat("x", 1000)+`",`, 8191), `""],"scenarios":[]}`),
		gz(`{"schemaVersion":2,"runners":["r"],"scenarios":[{"name":"s","returnValues":{`,
			strings.Repeat(`"k":1,`, 63), `"k":1},"faultSeconds":[`, strings.Repeat(`{"latency":{"buckets":[[1,1]]}},`, 319), `{}]}]}`),
	}
}

// FuzzHostilePath runs what the manager does with a runner's stored result, whole: gunzip →
// bounded decode → merge with an honest runner (spec names only) → summary → every report
// file. It fails when the bytes allocated exceed hostileAllocBound of the stored (compressed)
// size, or when the honest runner's results are lost. Run by `make fuzz`.
func FuzzHostilePath(f *testing.F) {
	honest, err := resultstest.Normal(4 << 10)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(honest)
	for _, s := range hostileSeeds() {
		f.Add(s)
	}
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		alloc := wholePath(t, data, honest)
		if bound := hostileAllocBound(len(data)); alloc > bound {
			t.Fatalf("%d bytes stored: the whole path allocated %d MiB, over the bound %d MiB", len(data), alloc>>20, bound>>20)
		}
	})
}

// hostileAllocBound is the most the manager may allocate for one stored result of n bytes
// (decode, merge with an honest document, summary, reports): 48 MiB plus 2,048 bytes per
// stored byte (deflate inflates at most 1,032×; a decoded number is 8 bytes for its 2 of
// text at least).
func hostileAllocBound(n int) uint64 { return 48<<20 + 2048*uint64(n) }

// wholePath decodes data as runner 0's stored result, merges it with honest as runner 1's
// (scenario names of the spec: resultstest's), summarizes and renders every report file,
// and returns the bytes allocated.
func wholePath(t *testing.T, data, honest []byte) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	stored := [][]byte{data, honest}
	merged, _, err := lifecycle.MergeEach(2, func(i int) lifecycle.Runner {
		cm := &corev1.ConfigMap{BinaryData: map[string][]byte{KeyResult: stored[i]}}
		cm.Name = fmt.Sprintf("run-result-%d", i)
		r := lifecycle.Runner{Name: fmt.Sprintf("runner-%d", i)}
		doc, derr := DecodeResult(cm)
		if derr != nil {
			r.Missing = "unreadable result: " + derr.Error()
		}
		r.Doc = doc
		return r
	}, false, "scenario_00", "scenario_01", "scenario_02", "scenario_03", "s1")
	if err != nil {
		t.Fatalf("the honest runner's result was lost: %v", err)
	}
	sum := results.Summarize(merged, results.Options{})
	if _, err := lifecycle.Reports("run", sum, merged, ""); err != nil {
		t.Fatalf("rendering: %v", err)
	}
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHostileSeedsBounded: the crafted worst cases of FuzzHostilePath, with their figures.
func TestHostileSeedsBounded(t *testing.T) {
	honest, err := resultstest.Normal(4 << 10)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range append(hostileSeeds(), honest) {
		start := time.Now()
		alloc := wholePath(t, s, honest)
		t.Logf("seed %d: %v", i, time.Since(start))
		t.Logf("seed %d: %d KiB stored: allocated %.1f MiB (bound %d MiB)", i, len(s)>>10, float64(alloc)/(1<<20), hostileAllocBound(len(s))>>20)
		if alloc > hostileAllocBound(len(s)) {
			t.Errorf("seed %d: over the bound", i)
		}
	}
}
