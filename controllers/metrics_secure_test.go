package controllers

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/benchrun/benchrun/internal/usage"
)

// bindClusterRole creates a ClusterRole with rules and binds it to ServiceAccount sa of ns
// (both deleted when t ends).
func bindClusterRole(t *testing.T, ns, sa, name string, rules []rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}}
	for _, o := range []client.Object{role, binding} {
		if err := k8sClient.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), binding)
		_ = k8sClient.Delete(context.Background(), role)
	})
}

// saToken is a real token of ServiceAccount ns/name (TokenRequest on the API server).
func saToken(t *testing.T, ns, name string) string {
	t.Helper()
	if err := k8sClient.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	tok, err := (&usage.ServiceAccountTokens{Client: k8sClient, Namespace: ns, Name: name}).Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// freeAddr is a free local TCP address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// TestSecureMetrics: the manager's --metrics-secure endpoint (HTTPS; controller-runtime's
// authentication and authorization filter, as the kubebuilder scaffold) on the real API
// server, the manager holding only the chart's metrics-auth rules (tokenreviews and
// subjectaccessreviews create): a scrape without a token gets 401, with a forged token 500,
// with the token of an account not allowed to get /metrics 403, with the token of an account
// bound to the chart's metrics-reader rules the metrics; plain HTTP gets no metrics.
func TestSecureMetrics(t *testing.T) {
	e := newEnv(t)
	if err := k8sClient.Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "manager"}}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, e.ns, "manager", e.ns+"-metrics-auth", []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}}})
	bindClusterRole(t, e.ns, "prometheus", e.ns+"-metrics-reader", []rbacv1.PolicyRule{
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}})
	reader, stranger := saToken(t, e.ns, "prometheus"), saToken(t, e.ns, "stranger")
	user := "system:serviceaccount:" + e.ns + ":manager"
	waitAllowed(t, impersonate(t, user), authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"})

	mgrCfg := rest.CopyConfig(cfg)
	mgrCfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	httpClient, err := rest.HTTPClientFor(mgrCfg)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	srv, err := metricsserver.NewServer(metricsserver.Options{BindAddress: addr, SecureServing: true,
		FilterProvider: filters.WithAuthenticationAndAuthorization, CertDir: t.TempDir()}, mgrCfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	go func() { _ = srv.Start(ctx) }()

	scraper := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the manager's self-signed certificate
	scrape := func(token string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := scraper.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(body), nil
	}
	// until the server listens and the reader's binding is in force
	var code int
	var body string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if code, body, err = scrape(reader); err == nil && code == http.StatusOK {
			break
		}
	}
	if code != http.StatusOK || !strings.Contains(body, "# HELP") {
		t.Fatalf("authorized scrape: %d %v %.200s", code, err, body)
	}
	for name, c := range map[string]struct {
		token string
		want  int
	}{"no token": {"", http.StatusUnauthorized}, "an account without get /metrics": {stranger, http.StatusForbidden},
		// the filter answers a token the API server rejects with 500 ("Authentication failed")
		"a forged token": {"not-a-token", http.StatusInternalServerError}} {
		if code, body, err := scrape(c.token); err != nil || code != c.want || strings.Contains(body, "# HELP") {
			t.Errorf("scrape with %s: %d %v, want %d and no metrics", name, code, err, c.want)
		}
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	if resp, err := plain.Get("http://" + addr + "/metrics"); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP scrape answered 200")
		}
	}
}
