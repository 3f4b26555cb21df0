package controllers

import (
	"context"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/benchrun/benchrun/internal/usage"
)

// tokenClient is a client authenticating with a bearer token only.
func tokenClient(t *testing.T, token string) client.Client {
	t.Helper()
	c := rest.AnonymousClientConfig(cfg)
	c.BearerToken = token
	cl, err := client.New(c, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestKubeletReaderIdentity: on the real API server, the manager holding only the chart's
// kubelet-reader-token Role (serviceaccounts/token create on the reader alone) gets
// 10-minute tokens of the kubelet reader through TokenRequest, reused until 80% of their
// lifetime and then renewed; it cannot get a token of any other account. The token
// authenticates as the reader (TokenReview, as the kubelet's webhook does), which may get
// nodes/metrics and nothing else the manager may (pods, configmaps, nodes/proxy).
func TestKubeletReaderIdentity(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"manager", "kubelet-reader", "other"} {
		if err := k8sClient.Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "kubelet-reader-token"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{"kubelet-reader"}, Verbs: []string{"create"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "kubelet-reader-token"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "manager", Namespace: e.ns}}}
	for _, o := range []client.Object{role, binding} {
		if err := k8sClient.Create(e.ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	bindClusterRole(t, e.ns, "kubelet-reader", e.ns+"-kubelet-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}}})
	manager := impersonate(t, "system:serviceaccount:"+e.ns+":manager")
	waitAllowed(t, manager, authorizationv1.ResourceAttributes{Namespace: e.ns, Verb: "create", Resource: "serviceaccounts",
		Subresource: "token", Name: "kubelet-reader"})

	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tokens := &usage.ServiceAccountTokens{Client: manager, Namespace: e.ns, Name: "kubelet-reader", Now: clock}
	first, err := tokens.Token(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := tokens.Token(e.ctx); err != nil || again != first || tokens.Issued() != 1 {
		t.Fatalf("token not reused: %d issued, %v", tokens.Issued(), err)
	}
	mu.Lock()
	now = now.Add(8*time.Minute + time.Second) // past 80% of 10 minutes
	mu.Unlock()
	if renewed, err := tokens.Token(e.ctx); err != nil || renewed == first || tokens.Issued() != 2 {
		t.Fatalf("token not renewed after 8 minutes: %d issued, %v", tokens.Issued(), err)
	}
	other := &usage.ServiceAccountTokens{Client: manager, Namespace: e.ns, Name: "other"}
	if _, err := other.Token(e.ctx); !kerrors.IsForbidden(err) {
		t.Errorf("the manager got a token of another account: want Forbidden, got %v", err)
	}

	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: first}}
	if err := k8sClient.Create(e.ctx, review); err != nil {
		t.Fatal(err)
	}
	if !review.Status.Authenticated || review.Status.User.Username != "system:serviceaccount:"+e.ns+":kubelet-reader" {
		t.Fatalf("the token authenticates as %+v (%s)", review.Status.User, review.Status.Error)
	}
	reader := tokenClient(t, first)
	may := func(a authorizationv1.ResourceAttributes) bool {
		r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a}}
		if err := reader.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	waitAllowed(t, reader, authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "metrics", Name: "n1"})
	for _, a := range []authorizationv1.ResourceAttributes{
		{Verb: "get", Resource: "nodes", Subresource: "proxy", Name: "n1"},
		{Verb: "get", Resource: "nodes", Subresource: "stats", Name: "n1"},
		{Verb: "list", Resource: "pods"},
		{Namespace: e.ns, Verb: "get", Resource: "configmaps"},
		{Namespace: e.ns, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: "kubelet-reader"},
	} {
		if may(a) {
			t.Errorf("the kubelet reader may %s %s/%s", a.Verb, a.Resource, a.Subresource)
		}
	}
}
