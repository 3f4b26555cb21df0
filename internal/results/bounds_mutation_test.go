package results

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
	"testing/iotest"
	"time"
)

// TestMutatedDocuments: 3,000 random mutations of an honest document: the structure check
// gives the same answer on bytes and on a stream read one byte at a time, no input takes
// over a second, and what decodes re-encodes to something that decodes again.
func TestMutatedDocuments(t *testing.T) {
	b, _ := os.ReadFile("testdata/document_v2.json")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		m := bytes.Clone(b)
		for range 1 + rng.IntN(8) {
			switch rng.IntN(3) {
			case 0:
				m[rng.IntN(len(m))] = byte(rng.IntN(256))
			case 1:
				i := rng.IntN(len(m))
				m = append(m[:i], m[min(len(m), i+rng.IntN(20)):]...)
			case 2:
				i, j := rng.IntN(len(m)), rng.IntN(len(m))
				m = append(m[:i:i], append(bytes.Clone(m[j:min(len(m), j+rng.IntN(50))]), m[i:]...)...)
			}
		}
		e1 := checkStructure(m)
		e2 := (&scanner{r: iotest.OneByteReader(bytes.NewReader(m)), chunk: make([]byte, 7)}).document()
		if (e1 == nil) != (e2 == nil) || (e1 != nil && e1.Error() != e2.Error()) {
			t.Fatalf("stream %v, bytes %v: %q", e2, e1, m)
		}
		start := time.Now()
		doc, err := Decode(bytes.NewReader(m))
		if err == nil {
			var first bytes.Buffer
			if err := Encode(&first, doc); err != nil {
				t.Fatalf("encode: %v", err)
			}
			if _, err := Decode(bytes.NewReader(first.Bytes())); err != nil {
				t.Fatalf("re-decode: %v\n%s", err, first.Bytes())
			}
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("slow input %v: %q", d, m)
		}
	}
}
