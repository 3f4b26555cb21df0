package usage

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/benchrun/benchrun/internal/usage/usagetest"
)

// staticTokens is a TokenSource of one token.
type staticTokens string

// Token implements TokenSource.
func (s staticTokens) Token(context.Context) (string, error) { return string(s), nil }

// TestKubeletReaderToken: with a token source (the kubelet reader's tokens) the kubelet gets
// that token and never the REST config's (the manager's own), and its serving certificate is
// still verified against the cluster CA.
func TestKubeletReaderToken(t *testing.T) {
	pki, otherCA := usagetest.NewPKI(t), usagetest.NewPKI(t)
	k := usagetest.NewKubelet(t, pki, "n")
	k.Host("p", map[string]float64{"c": 1}, 1)
	reader := fake.NewClientBuilder().WithObjects(usagetest.Node("n1", k.Port())).Build()
	ctx := context.Background()

	manager := usagetest.RESTConfig(pki.CAPEM)
	manager.BearerToken = "the-managers-own-token"
	km, err := NewKubeletMetrics(manager, KubeletOptions{Tokens: staticTokens(usagetest.Token)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := km.scrape(ctx, reader, "n1"); err != nil || len(got) != 2 {
		t.Fatalf("scrape with the reader's token: %v %v", got, err)
	}
	// the REST config carries the token the kubelet accepts; a token source replaces it
	km, err = NewKubeletMetrics(usagetest.RESTConfig(pki.CAPEM), KubeletOptions{Tokens: staticTokens("another-token")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := km.scrape(ctx, reader, "n1"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("the REST config's token was sent along the token source's: %v", err)
	}
	if requests, bad := k.Stats(); requests != 2 || bad != 1 {
		t.Fatalf("%d requests, %d with a wrong token; want 2, 1", requests, bad)
	}
	km, err = NewKubeletMetrics(usagetest.RESTConfig(otherCA.CAPEM), KubeletOptions{Tokens: staticTokens(usagetest.Token)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := km.scrape(ctx, reader, "n1"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a kubelet certificate of another CA accepted: %v", err)
	}
	if requests, _ := k.Stats(); requests != 2 {
		t.Fatalf("the reader's token reached a kubelet whose certificate failed verification (%d requests)", requests)
	}
}
