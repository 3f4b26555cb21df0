package hetu

import (
	"bytes"
	"crypto/ecdh"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/chacha20poly1305"
)

func TestMsgpackRoundTrip(t *testing.T) {
	in := []any{"rpc", "exchange_data", "ABC", int64(29999), int64(-1), int64(-200), int64(1 << 40),
		nil, true, false, 1.5, []byte{1, 2, 3}, strings.Repeat("x", 300),
		map[string]any{"a": int64(1)}, []any{}}
	b, err := appendMsgpack(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := unmarshalMsgpack(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", out, in)
	}
}

// Bytes produced by Python's msgpack.packb, the encoding the server uses.
func TestMsgpackPythonBytes(t *testing.T) {
	cases := []struct {
		v   any
		hex string
	}{
		{[]any{"rpc", "hello_world"}, "92a3727063ab68656c6c6f5f776f726c64"},
		{[]any{"rpc", "just_get", int64(30000)}, "93a3727063a86a7573745f676574cd7530"},
		{[]any{[]byte{}, []byte{0xaa}}, "92c400c401aa"},
		{int64(-33), "d0df"},
		{float64(2), "02"}, // integral JS numbers go out as ints
	}
	for _, c := range cases {
		b, err := appendMsgpack(nil, c.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(b); got != c.hex {
			t.Errorf("%#v: got %s want %s", c.v, got, c.hex)
		}
	}
	// ["updt", 3, {7: ["x"], 8: None}]: integer map keys become decimal strings.
	b, _ := hex.DecodeString("93a47570647403820791a17808c0")
	v, err := unmarshalMsgpack(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"updt", int64(3), map[string]any{"7": []any{"x"}, "8": nil}}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("got %#v want %#v", v, want)
	}
	for _, bad := range []string{"92a3", "dc", "c1", "91"} {
		b, _ := hex.DecodeString(bad)
		if _, err := unmarshalMsgpack(b); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestNonceCounter(t *testing.T) {
	c := nonceCounter{dir: dirClientToServer}
	n1, n2 := c.next(), c.next()
	if hex.EncodeToString(n1[:]) != "ff0000000000000000000001" ||
		hex.EncodeToString(n2[:]) != "ff0000000000000000000002" {
		t.Fatalf("nonces %x %x", n1, n2)
	}
	s := nonceCounter{dir: dirServerToClient, n: 0x0102}
	if n := s.next(); hex.EncodeToString(n[:]) != "000000000000000000000103" {
		t.Fatalf("nonce %x", n)
	}
}

// zdict and pythonFrames come from Python 3.11:
// c = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS, zdict=zdict);
// frame = c.compress(m) + c.flush(zlib.Z_SYNC_FLUSH) for each message, one stream.
var (
	zdict        = []byte(`["rsp", "rpc", "updt", "sub", "hello_world", "just_get", "upsert", "exchange_data"]`)
	pythonFrames = []string{
		"783f25961a6d9ab41868e4c4354f764c7b3eb5e7d9946d4f3b3600000000ffff",
		"82083100000000ffff",
		"825200000000ffff",
		"6260646266616563e7e0e4e2e6e1e5e3171014121611151397909492969195935750545256515553d7d0d4d2d6d1d5d33730343236313533b7b0b4b2b6b1b5b37770747276717573f7f0f4f2f6f1f5f30f080c0a0e090d0b8f888c8a8e898d8b4f484c4a4e494d4bcfc8cccacec9cdcb2f282c2a2e292d2bafa8acaaaea9adab6f686c6a6e696d6befe8eceaeee9edeb9f3071d2e42953a74d9f3173d6ec3973e7cd5fb070d1e2254b972d5fb172d5ea356bd7addfb071d3e62d5bb76ddfb173d7ee3d7bf7ed3f70f0d0e123478f1d3f71f2d4e93367cf9dbf70f1d2e52b57af5dbf71f3d6ed3b77efdd7ff0f0d1e3274f9f3d7ff1f2d5eb376fdfbdfff0f1d3e72f5fbf7dfff1f3d7ef3f7ffffd1ff5ffc88e7f00000000ffff",
	}
	pythonMessages = [][]byte{
		append([]byte("\x92\xa3rsp\x91\xac"), "世界收到"...),
		[]byte("\x92\xa3rsp\x91\x00"),
		[]byte("\x92\xa3rsp\x91\x00"),
		bytes.Repeat(func() []byte {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}(), 3),
	}
)

func TestInflatePythonStream(t *testing.T) {
	f := newInflater(zdict)
	for i, h := range pythonFrames {
		frame, _ := hex.DecodeString(h)
		got, err := f.decompress(frame)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, pythonMessages[i]) {
			t.Fatalf("frame %d: got %x want %x", i, got, pythonMessages[i])
		}
	}
}

func TestZlibStreamRoundTrip(t *testing.T) {
	d, err := newDeflater(zdict)
	if err != nil {
		t.Fatal(err)
	}
	f := newInflater(zdict)
	big := make([]byte, 200_000) // beyond the 32 KiB window: output flushed mid-block
	_, _ = rand.Read(big[:1000])
	for i := 1000; i < len(big); i++ {
		big[i] = big[i%1000] ^ byte(i/7)
	}
	msgs := [][]byte{[]byte("\x92\xa3rpc\xabhello_world"), big, {}, []byte("x"), big[:5000]}
	for round := 0; round < 3; round++ {
		for i, m := range msgs {
			frame, err := d.compress(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(frame, []byte{0, 0, 0xff, 0xff}) {
				t.Fatalf("message %d: frame does not end with a sync flush", i)
			}
			got, err := f.decompress(bytes.Clone(frame))
			if err != nil {
				t.Fatalf("round %d message %d: %v", round, i, err)
			}
			if !bytes.Equal(got, m) {
				t.Fatalf("round %d message %d: %d bytes back, want %d", round, i, len(got), len(m))
			}
		}
	}
}

func TestCryptoLayerAgainstServerSide(t *testing.T) {
	clientPriv, _ := ecdh.X25519().GenerateKey(rand.Reader)
	serverPriv, _ := ecdh.X25519().GenerateKey(rand.Reader)
	c, err := newCryptoLayer(clientPriv, serverPriv.PublicKey().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	// The server side, written out from the protocol description.
	shared, _ := serverPriv.ECDH(clientPriv.PublicKey())
	key := blake2b.Sum256(shared)
	aead, _ := chacha20poly1305.New(key[:])
	for i := 1; i <= 3; i++ {
		frame := c.seal(nil, []byte("hello"))
		nonce := make([]byte, 12)
		nonce[0], nonce[11] = 0xff, byte(i)
		plain, err := aead.Open(nil, nonce, frame, nil)
		if err != nil || string(plain) != "hello" {
			t.Fatalf("message %d: server cannot open: %v", i, err)
		}
		nonce[0] = 0x00
		reply := aead.Seal(nil, nonce, []byte("world"), nil)
		got, err := c.open(nil, reply)
		if err != nil || string(got) != "world" {
			t.Fatalf("message %d: client cannot open: %v", i, err)
		}
	}
	if _, err := c.open(nil, []byte("garbage-garbage-garbage")); err == nil {
		t.Fatal("garbage frame opened")
	}
}

func TestClientHello(t *testing.T) {
	pub := bytes.Repeat([]byte{7}, 32)
	h, _ := clientHello(pub, nil)
	if !bytes.Equal(h, pub) {
		t.Fatal("unsigned hello must be the bare public key")
	}
	key := []byte("secret")
	h, err := clientHello(pub, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 92 || string(h[:4]) != "H2A1" || !bytes.Equal(h[4:36], pub) ||
		!bytes.Equal(h[36:44], make([]byte, 8)) {
		t.Fatalf("bad signed hello %x", h)
	}
	m := hmac.New(sha256.New, key)
	m.Write(h[:60])
	if !hmac.Equal(m.Sum(nil), h[60:]) {
		t.Fatal("bad hello signature")
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:2466":      "ws://127.0.0.1:2466/hetu/bench",
		"ws://h:1":            "ws://h:1/hetu/bench",
		"ws://h:1/hetu/other": "ws://h:1/hetu/other",
		"http://h:1/":         "ws://h:1/hetu/bench",
	} {
		got, err := URL(in, "bench")
		if err != nil || got != want {
			t.Errorf("URL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestParseLayers(t *testing.T) {
	for in, want := range map[string]Layers{"msgpack": LayersMsgpack, "jsonb+zlib": LayersMsgpackZlib,
		"full": LayersMsgpackZlibCrypto, "": LayersMsgpackZlibCrypto, "msgpack+zlib+crypto": LayersMsgpackZlibCrypto} {
		if got, err := ParseLayers(in); err != nil || got != want {
			t.Errorf("ParseLayers(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseLayers("gzip"); err == nil {
		t.Error("no error for gzip")
	}
}
