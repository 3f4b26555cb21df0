// Package livemetrics streams a runner's live metrics to a Prometheus remote-write endpoint
// while the load runs: the environment a runner reads its settings from, the metric names and
// latency buckets, the remote-write encoding (protobuf + snappy) and a pusher that never slows
// or fails the load (bounded queue dropping the oldest push, timeouts, failures counted).
package livemetrics

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Environment variables a runner reads its remote-write settings from. Credentials and the CA
// come from Secrets (secretKeyRef in the runner pod, resolved locally by benchrun run).
const (
	// EnvURL is the remote-write endpoint; remote write is off when it is empty.
	EnvURL = "BENCHRUN_REMOTE_WRITE_URL"
	// EnvInterval is the push interval (Go duration, default 5s).
	EnvInterval = "BENCHRUN_REMOTE_WRITE_INTERVAL"
	// EnvBearerToken is filled from a Secret: sent as "Authorization: Bearer".
	EnvBearerToken = "BENCHRUN_REMOTE_WRITE_BEARER_TOKEN"
	// EnvUsername is filled from a Secret: the basic-auth user.
	EnvUsername = "BENCHRUN_REMOTE_WRITE_USERNAME"
	// EnvPassword is filled from a Secret: the basic-auth password.
	EnvPassword = "BENCHRUN_REMOTE_WRITE_PASSWORD"
	// EnvTLSCA is filled from a Secret: a PEM CA bundle verifying the endpoint.
	EnvTLSCA = "BENCHRUN_REMOTE_WRITE_TLS_CA"
	// EnvTLSServerName overrides the name checked in the endpoint's certificate.
	EnvTLSServerName = "BENCHRUN_REMOTE_WRITE_TLS_SERVER_NAME"
	// EnvTLSInsecure ("true") skips verifying the endpoint's certificate.
	EnvTLSInsecure = "BENCHRUN_REMOTE_WRITE_TLS_INSECURE"
	// EnvRun is the BenchmarkRun's name (label benchmarkrun).
	EnvRun = "BENCHRUN_RUN"
	// EnvNamespace is the BenchmarkRun's namespace (label namespace).
	EnvNamespace = "BENCHRUN_NAMESPACE"
	// EnvTargetKind is the target kind, e.g. redis/single (label target).
	EnvTargetKind = "BENCHRUN_TARGET_KIND"
)

// DefaultInterval is how often a runner pushes.
const DefaultInterval = 5 * time.Second

// Config is where and how a runner pushes.
type Config struct {
	// URL is the remote-write endpoint.
	URL string
	// Interval is the push interval.
	Interval time.Duration
	// Timeout bounds one push.
	Timeout time.Duration
	// QueueLen is how many encoded pushes wait at most; the oldest is dropped beyond it.
	QueueLen int
	// BearerToken, Username and Password authenticate (bearer token or basic auth).
	BearerToken, Username, Password string
	// TLS configures https endpoints (nil: system roots).
	TLS *tls.Config
	// Run, Namespace, Runner and Target are the labels every series carries.
	Run, Namespace, Runner, Target string
}

// ConfigFromEnv reads the settings from env (os.Getenv-like). ok is false when remote write
// is off. Errors never quote credentials.
func ConfigFromEnv(env func(string) string) (cfg Config, ok bool, err error) {
	raw := env(EnvURL)
	if raw == "" {
		return Config{}, false, nil
	}
	if err := CheckURL(raw); err != nil {
		return Config{}, false, fmt.Errorf("%s: %w", EnvURL, err)
	}
	cfg = Config{URL: raw, Interval: DefaultInterval, QueueLen: 12,
		BearerToken: env(EnvBearerToken), Username: env(EnvUsername), Password: env(EnvPassword),
		Run: env(EnvRun), Namespace: env(EnvNamespace), Target: env(EnvTargetKind)}
	if s := env(EnvInterval); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 100*time.Millisecond || d > 10*time.Minute {
			return Config{}, false, fmt.Errorf("%s=%q: want a duration from 100ms to 10m", EnvInterval, s)
		}
		cfg.Interval = d
	}
	cfg.Timeout = min(max(cfg.Interval, 2*time.Second), 10*time.Second)
	if cfg.BearerToken != "" && (cfg.Username != "" || cfg.Password != "") {
		return Config{}, false, errors.New("remote write: give a bearer token or basic auth, not both")
	}
	if cfg.TLS, err = tlsFromEnv(env); err != nil {
		return Config{}, false, err
	}
	return cfg, true, nil
}

// CheckURL refuses a remote-write URL that is not http(s) or holds credentials (they belong
// in Secrets); the error never quotes the URL.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http:// or https:// URL")
	}
	if u.User != nil {
		return errors.New("the URL must not hold credentials: give them from a Secret (bearer token or basic auth)")
	}
	return nil
}

// tlsFromEnv builds the TLS settings (nil when none is set).
func tlsFromEnv(env func(string) string) (*tls.Config, error) {
	ca, name, insecure := env(EnvTLSCA), env(EnvTLSServerName), env(EnvTLSInsecure)
	if ca == "" && name == "" && insecure == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: name}
	if insecure != "" {
		b, err := strconv.ParseBool(insecure)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: want true or false", EnvTLSInsecure, insecure)
		}
		c.InsecureSkipVerify = b //nolint:gosec // asked for explicitly (test endpoints)
	}
	if ca != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ca)) {
			return nil, fmt.Errorf("%s holds no PEM certificate", EnvTLSCA)
		}
		c.RootCAs = pool
	}
	return c, nil
}
