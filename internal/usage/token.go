package usage

import (
	"context"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultTokenLifetime is how long a kubelet reader token is valid (the TokenRequest minimum).
const DefaultTokenLifetime = 10 * time.Minute

// ServiceAccountTokens are short-lived tokens of one ServiceAccount (the kubelet reader),
// requested with the TokenRequest API (serviceaccounts/token create on that account only) and
// renewed when 80% of their lifetime has passed. The token has the API server's default
// audience, which the kubelets' webhook authentication (TokenReview) accepts.
type ServiceAccountTokens struct {
	// Client creates the TokenRequests (the manager's client).
	Client client.Client
	// Namespace and Name are the ServiceAccount's.
	Namespace, Name string
	// Lifetime is the requested validity (default DefaultTokenLifetime).
	Lifetime time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu     sync.Mutex
	token  string
	renew  time.Time
	issued int
}

// Token implements TokenSource: the current token, or a new one when it is due for renewal.
func (s *ServiceAccountTokens) Token(ctx context.Context) (string, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && now().Before(s.renew) {
		return s.token, nil
	}
	life := s.Lifetime
	if life <= 0 {
		life = DefaultTokenLifetime
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(life.Seconds()))}}
	if err := s.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", s.Namespace, s.Name, err)
	}
	issued := now()
	valid := tr.Status.ExpirationTimestamp.Sub(issued)
	if valid <= 0 || valid > life {
		valid = life
	}
	s.token, s.renew, s.issued = tr.Status.Token, issued.Add(valid*4/5), s.issued+1
	return s.token, nil
}

// Issued is how many tokens were requested so far.
func (s *ServiceAccountTokens) Issued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}
