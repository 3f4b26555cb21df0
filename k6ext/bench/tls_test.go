package bench

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrun/benchrun/internal/redistest"
)

// newCert makes a key pair and a certificate for cn signed by parent (self-signed when nil).
func newCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{cn},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// TestTLSAgainstRealRedis starts redis-server with TLS only (as managed endpoints with TLS on)
// and connects with the CA bundle, with the wrong CA, and insecurely.
func TestTLSAgainstRealRedis(t *testing.T) {
	addr := redistest.FreeAddr(t)
	dir := t.TempDir()
	ca, caKey, caPEM, _ := newCert(t, "benchrun-test-ca", nil, nil)
	_, _, srvPEM, srvKeyPEM := newCert(t, "redis.test", ca, caKey)
	_, _, otherCA, _ := newCert(t, "other-ca", nil, nil)
	for name, data := range map[string][]byte{"ca.pem": caPEM, "srv.pem": srvPEM, "srv.key": srvKeyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := redistest.Command(t, addr, "--port", "0", "--tls-port", port, // TLS only
		"--tls-cert-file", filepath.Join(dir, "srv.pem"), "--tls-key-file", filepath.Join(dir, "srv.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.pem"), "--tls-auth-clients", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	redistest.WaitListening(t, addr)
	dial := func(serverName, caPEM string, insecure bool) (string, error) {
		cfg, err := TLSConfig(serverName, caPEM, insecure)
		if err != nil {
			return "", err
		}
		c, err := DialRedis(context.Background(), RedisOptions{Addr: addr, TLS: cfg})
		if err != nil {
			return "", err
		}
		defer func() { _ = c.Close() }()
		v, err := c.Do("PING")
		return str(v), err
	}
	if got, err := dial("redis.test", string(caPEM), false); err != nil || got != "PONG" {
		t.Fatalf("TLS with the CA bundle: %q, %v", got, err)
	}
	if _, err := dial("redis.test", string(otherCA), false); err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Fatalf("a server signed by another CA was accepted: %v", err)
	}
	if got, err := dial("", "", true); err != nil || got != "PONG" {
		t.Fatalf("insecure TLS: %q, %v", got, err)
	}
	if _, err := TLSConfig("", "not a pem", false); err == nil {
		t.Fatal("a CA bundle without certificates was accepted")
	}
	// Plain RESP to the TLS port fails instead of hanging.
	if c, err := DialRedis(context.Background(), RedisOptions{Addr: addr, DialTimeout: time.Second}); err == nil {
		_ = c.conn.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Do("PING"); err == nil {
			t.Fatal("plain PING to a TLS port succeeded")
		}
		_ = c.Close()
	}
}
