package hetu

import (
	"bytes"
	"compress/zlib"
	"testing"
)

// helloMsg is the msgpack of ["rpc", "hello_world"], the seeds' call.
var helloMsg = []byte("\x92\xa3rpc\xabhello_world")

// BenchmarkDeflateHello is one hello_world request through the zlib layer (level 1, dictionary,
// sync flush per message).
func BenchmarkDeflateHello(b *testing.B) {
	d, err := newDeflater(zdict)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.compress(helloMsg); err != nil {
			b.Fatal(err)
		}
	}
}

// The zlib layer writes what compress/zlib writes for the seeds' requests (a stored block).
func TestDeflateSameBytesAsStdlib(t *testing.T) {
	d, err := newDeflater(zdict)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := zlib.NewWriterLevelDict(&buf, 1, zdict)
	for i, m := range [][]byte{helloMsg, helloMsg, []byte("\x93\xa3rpc\xa8just_get\xcd\x01\x02"), helloMsg} {
		got, err := d.compress(m)
		if err != nil {
			t.Fatal(err)
		}
		buf.Reset()
		_, _ = w.Write(m)
		_ = w.Flush()
		if !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("message %d: %x, compress/zlib writes %x", i, got, buf.Bytes())
		}
	}
}
