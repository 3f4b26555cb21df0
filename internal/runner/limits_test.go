package runner

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// bomb is a gzip-compressed result document of a few KiB whose one timeline holds n zero
// counts (2n bytes of JSON once decompressed).
func bomb(t *testing.T, n int) []byte {
	t.Helper()
	var raw bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&raw, gzip.BestCompression)
	_, _ = fmt.Fprint(zw, `{"schemaVersion":1,"runners":["r"],"scenarios":[{"name":"s","calls":0,"errors":0,`+
		`"starts":{"startUnixMs":0,"bucketMs":1000,"counts":[0`)
	const chunk = 1 << 16
	for i := 0; i < n; i += chunk {
		_, _ = zw.Write([]byte(strings.Repeat(",0", min(chunk, n-i))))
	}
	_, _ = fmt.Fprint(zw, "]}}]}")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return raw.Bytes()
}

// decodeAlloc decodes a stored result and returns the bytes allocated meanwhile and the error.
func decodeAlloc(data []byte) (uint64, error) {
	cm := &corev1.ConfigMap{BinaryData: map[string][]byte{KeyResult: data}}
	cm.Name = "run-runner-0"
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	_, err := DecodeResult(cm)
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc, err
}

// TestDecodeResultGzipBomb: a gzip bomb stored as a runner's result is refused with a reason,
// and decoding it allocates a bounded amount whatever the decompressed size. Before the cap,
// a 32 KiB bomb (32 MiB of JSON) made DecodeResult allocate 895 MiB.
func TestDecodeResultGzipBomb(t *testing.T) {
	over := bomb(t, 32<<20) // 64 MiB decompressed
	alloc, err := decodeAlloc(over)
	t.Logf("bomb of %d KiB, 64 MiB decompressed: allocated %d MiB: %v", len(over)>>10, alloc>>20, err)
	if err == nil || !strings.Contains(err.Error(), "larger than 16 MiB once decompressed") || !strings.Contains(err.Error(), "run-runner-0") {
		t.Fatalf("err = %v, want the size refusal naming the runner", err)
	}
	if alloc > 8<<20 {
		t.Errorf("refusing the bomb allocated %d MiB, want at most 8 (its trailer states its size)", alloc>>20)
	}
	// A forged gzip trailer claiming a small size: stopped by the limit while decompressing.
	forged := append([]byte(nil), over...)
	copy(forged[len(forged)-4:], []byte{0, 1, 0, 0})
	alloc, err = decodeAlloc(forged)
	t.Logf("same bomb with a forged size in its trailer: allocated %d MiB: %v", alloc>>20, err)
	if err == nil || !strings.Contains(err.Error(), "larger than 16 MiB once decompressed") {
		t.Fatalf("err = %v, want the size refusal", err)
	}
	if alloc > 64<<20 {
		t.Errorf("refusing the forged bomb allocated %d MiB, want at most 64", alloc>>20)
	}
	// Just under the cap: decoded (and then refused by validation), with counts allocated once.
	under := bomb(t, (MaxResultBytes-1024)/2)
	alloc, err = decodeAlloc(under)
	t.Logf("bomb of %d KiB, ~16 MiB decompressed: allocated %d MiB: %v", len(under)>>10, alloc>>20, err)
	if err == nil {
		t.Fatal("a timeline of zero counts with no calls was accepted")
	}
	if alloc > 192<<20 {
		t.Errorf("decoding a 16 MiB document allocated %d MiB, want at most 192", alloc>>20)
	}
}

// FuzzDecodeResult: whatever bytes a runner stores as its result, decoding returns a document
// or an error, never panics, and never decodes more than MaxResultBytes. `go test` runs the
// seeds; `make fuzz` explores for a bounded time.
func FuzzDecodeResult(f *testing.F) {
	doc, err := os.ReadFile("../results/testdata/document_v1.json")
	if err != nil {
		f.Fatal(err)
	}
	good, err := EncodeResult(doc)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cm := &corev1.ConfigMap{BinaryData: map[string][]byte{KeyResult: data}}
		if d, err := DecodeResult(cm); err == nil && d == nil {
			t.Fatal("no document and no error")
		}
	})
}

// FuzzParseState: any state ConfigMap a runner writes parses without panicking.
func FuzzParseState(f *testing.F) {
	f.Add("running", "", "2026-11-24T10:00:00Z", `{"cpuCores":1}`)
	f.Add("failed", strings.Repeat("x", 5000), "not a time", "{")
	f.Fuzz(func(t *testing.T, state, reason, started, usage string) {
		cm := &corev1.ConfigMap{Data: map[string]string{KeyState: state, KeyReason: reason,
			KeyLoadStartedAt: started, KeyUsage: usage}}
		_ = ParseState(cm, 0)
	})
}

// FuzzDecodeInvocation: any invocation text decodes or fails without panicking.
func FuzzDecodeInvocation(f *testing.F) {
	f.Add(`{}`)
	f.Add(`{"scenarios":[{"name":"a"}]}`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = DecodeInvocation(&corev1.ConfigMap{Data: map[string]string{KeyInvocation: s}})
	})
}

// TestParseStateBoundsReason: a runner's failure text is cut to MaxReasonBytes on a UTF-8
// boundary before the manager copies it anywhere.
func TestParseStateBoundsReason(t *testing.T) {
	long := strings.Repeat("é", 4000)
	s := ParseState(&corev1.ConfigMap{Data: map[string]string{KeyState: StateFailed, KeyReason: long}}, 0)
	if len(s.Reason) > MaxReasonBytes || !strings.HasSuffix(s.Reason, "…(cut)") || !utf8.ValidString(s.Reason) {
		t.Fatalf("reason of %d bytes, valid UTF-8 %v: %q…", len(s.Reason), utf8.ValidString(s.Reason), s.Reason[:20])
	}
	short := ParseState(&corev1.ConfigMap{Data: map[string]string{KeyReason: "k6 exited 1"}}, 0)
	if short.Reason != "k6 exited 1" {
		t.Fatalf("short reason changed: %q", short.Reason)
	}
}

// TestParseStateReasonOneLine: a runner's failure text reaches status, conditions and Events
// as one line: no newline that fakes a second message, no control or bidi characters.
func TestParseStateReasonOneLine(t *testing.T) {
	raw := "k6 exited 1\n\nReason: Succeeded\r\x1b[2J\u202eevil\t<script>alert(1)</script>"
	s := ParseState(&corev1.ConfigMap{Data: map[string]string{KeyState: StateFailed, KeyReason: raw}}, 0)
	if strings.ContainsAny(s.Reason, "\n\r\t\x1b\u202e") {
		t.Fatalf("reason keeps control characters: %q", s.Reason)
	}
	if want := "k6 exited 1 Reason: Succeeded [2J evil <script>alert(1)</script>"; s.Reason != want {
		t.Fatalf("reason %q, want %q", s.Reason, want)
	}
}
