package fastsock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/redistest"
)

// dial connects to a real redis-server (a request/reply peer) through Wrap.
func dial(t *testing.T, addr string) *Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := Wrap(nc).(*Conn)
	if !ok {
		t.Fatal("Wrap of a *net.TCPConn is not a *Conn")
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// expect reads exactly len(want) bytes and compares them with want.
func expect(t *testing.T, c *Conn, want string) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
		t.Fatalf("read %q (%v), want %q", got, err, want)
	}
}

// Held requests (HoldWrites, then the reply's Read writes them) and ordinary writes against a
// real redis-server, interleaved: every reply in step; ReleaseWrites sends what was held.
func TestHeldAndOrdinaryWrites(t *testing.T) {
	c := dial(t, redistest.Start(t))
	for i := range 1000 {
		if i%2 == 0 {
			c.HoldWrites()
		}
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			t.Fatal(err)
		}
		expect(t, c, "+PONG\r\n")
	}
	c.HoldWrites()
	_, _ = c.Write([]byte("ECHO "))
	_, _ = c.Write([]byte("abc\r\n")) // two writes held, sent together
	expect(t, c, "$3\r\nabc\r\n")
	c.HoldWrites()
	_, _ = c.Write([]byte("PING\r\n"))
	if err := c.ReleaseWrites(); err != nil {
		t.Fatal(err)
	}
	expect(t, c, "+PONG\r\n")
	if Wrap(nil) != nil {
		t.Error("Wrap(nil) is not nil")
	}
}

// resp encodes a command as a RESP array of bulk strings.
func resp(args ...string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// A held request larger than the socket's send buffer: the rest goes by ordinary writes.
func TestHeldLargerThanSendBuffer(t *testing.T) {
	c := dial(t, redistest.Start(t))
	val := strings.Repeat("v", 32<<20)
	c.HoldWrites()
	if _, err := c.Write(resp("SET", "big", val)); err != nil { // inline commands stop at 64 KiB
		t.Fatal(err)
	}
	expect(t, c, "+OK\r\n")
	c.HoldWrites()
	_, _ = c.Write([]byte("STRLEN big\r\n"))
	expect(t, c, ":33554432\r\n")
	big := resp("SET", "big2", strings.Repeat("w", 32<<20)) // an ordinary write waiting for room
	if n, err := c.Write(big); err != nil || n != len(big) {
		t.Fatalf("wrote %d of %d (%v)", n, len(big), err)
	}
	expect(t, c, "+OK\r\n")
}

// A read deadline ends a wait on a held request (os.ErrDeadlineExceeded, a net.Error
// timeout); a closed peer gives io.EOF.
func TestDeadlineAndEOF(t *testing.T) {
	addr := redistest.Start(t)
	c := dial(t, addr)
	_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	c.HoldWrites()
	_, _ = c.Write([]byte("BLPOP nolist 0\r\n")) // blocks on the server: no reply
	_, err := c.Read(make([]byte, 16))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past the deadline: %v", err)
	}
	c2 := dial(t, addr)
	c2.HoldWrites()
	_, _ = c2.Write([]byte("QUIT\r\n"))
	expect(t, c2, "+OK\r\n")
	if _, err := c2.Read(make([]byte, 16)); err != io.EOF { //nolint:errorlint // io.EOF as is
		t.Fatalf("read after the server closed: %v, want io.EOF", err)
	}
}

// TLS over a fastsock.Conn (a wss HeTu connection): the handshake and records go through
// the raw reads and writes; a TLS-only redis-server answers.
func TestTLSOverConn(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redis.test"},
		DNSNames: []string{"redis.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	addr := redistest.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := redistest.Command(t, addr, "--port", "0", "--tls-port", port, "--tls-cert-file", certFile,
		"--tls-key-file", keyFile, "--tls-ca-cert-file", certFile, "--tls-auth-clients", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	redistest.WaitListening(t, addr)
	tc := tls.Client(dial(t, addr), &tls.Config{ServerName: "redis.test", InsecureSkipVerify: true}) //nolint:gosec // test server
	for range 100 {
		if _, err := tc.Write([]byte("PING\r\n")); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 7)
		if _, err := io.ReadFull(tc, got); err != nil || string(got) != "+PONG\r\n" {
			t.Fatalf("read %q (%v)", got, err)
		}
	}
}
