package plan

import (
	"strconv"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/livemetrics"
	"github.com/benchrun/benchrun/internal/target"
)

// WithRemoteWriteDefault gives the Prometheus remote-write URL runners push their live
// metrics to when the run sets none (the manager's --prometheus-remote-write-url, the
// chart's liveMetrics.remoteWriteURL; benchrun run's --prometheus-remote-write-url).
func WithRemoteWriteDefault(url string) Option {
	return func(o *options) { o.remoteWriteURL = url }
}

// All combines options into one.
func All(opts ...Option) Option {
	return func(o *options) {
		for _, opt := range opts {
			opt(o)
		}
	}
}

// addRemoteWrite adds the live-metrics settings to inv when a remote-write URL is in effect:
// the URL, interval, TLS knobs and the labels as plain env, credentials and the CA as
// SecretEnv (secretKeyRef in the runner pod).
func addRemoteWrite(inv *Invocation, run *v1alpha1.BenchmarkRun, defaultURL string) {
	c := run.Spec.Collect
	url := c.PrometheusRemoteWriteURL
	if url == "" {
		url = defaultURL
	}
	if url == "" {
		return
	}
	inv.Env[livemetrics.EnvURL] = url
	inv.Env[livemetrics.EnvRun] = run.Name
	inv.Env[livemetrics.EnvNamespace] = run.Namespace
	inv.Env[livemetrics.EnvTargetKind] = TargetKind(run)
	rw := c.PrometheusRemoteWrite
	if rw == nil {
		return
	}
	if rw.IntervalSeconds != nil {
		inv.Env[livemetrics.EnvInterval] = (time.Duration(*rw.IntervalSeconds) * time.Second).String()
	}
	secret := func(name string, ref v1alpha1.SecretKeyRef) {
		inv.SecretEnv = append(inv.SecretEnv, SecretEnv{Name: name, Secret: ref})
	}
	if rw.BearerTokenSecretRef != nil {
		secret(livemetrics.EnvBearerToken, *rw.BearerTokenSecretRef)
	}
	if b := rw.BasicAuth; b != nil {
		secret(livemetrics.EnvUsername, b.UsernameSecretRef)
		secret(livemetrics.EnvPassword, b.PasswordSecretRef)
	}
	if t := rw.TLS; t != nil {
		if t.CASecretRef != nil {
			secret(livemetrics.EnvTLSCA, *t.CASecretRef)
		}
		if t.ServerName != "" {
			inv.Env[livemetrics.EnvTLSServerName] = t.ServerName
		}
		if t.InsecureSkipVerify {
			inv.Env[livemetrics.EnvTLSInsecure] = strconv.FormatBool(true)
		}
	}
}

// TargetKind is the run's target kind as status.target.kind names it (redis/single,
// valkey/ha, hetu, external/redis): from the status once provisioned, else from the spec
// (target.Label, the kind's one spelling).
func TargetKind(run *v1alpha1.BenchmarkRun) string {
	if st := run.Status.Target; st != nil && st.Kind != "" {
		return st.Kind
	}
	return target.Label(&run.Spec.Target)
}
