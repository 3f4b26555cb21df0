package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkRunSpec describes one benchmark: the target to deploy (or reach), the load to
// run against it scenario after scenario, what to collect, and how to clean up.
// +kubebuilder:validation:XValidation:rule="self.load.scenarios.all(s, !has(s.type) || !s.type.startsWith('hetu.') || has(self.target.hetu) || (has(self.target.external) && has(self.target.external.kind) && self.target.external.kind == 'hetu'))",message="scenarios of type hetu.* need a HeTu target: set spec.target.hetu, or spec.target.external with kind: hetu"
// +kubebuilder:validation:XValidation:rule="self.load.scenarios.all(s, !has(s.type) || !(s.type.startsWith('redis.') || s.type == 'ycsb') || !has(self.target.external) || !has(self.target.external.kind) || self.target.external.kind == 'redis')",message="scenarios of type redis.* and ycsb need a Redis endpoint: an external target of kind hetu, tcp or http has none (use kind: redis, or a redis or hetu target)"
// +kubebuilder:validation:XValidation:rule="self.load.scenarios.all(s, !has(s.type) || s.type != 'tcp.echo' || has(self.target.custom) || (has(self.target.external) && has(self.target.external.kind) && self.target.external.kind == 'tcp'))",message="scenarios of type tcp.echo need a TCP echo server: set spec.target.custom, or spec.target.external with kind: tcp"
// +kubebuilder:validation:XValidation:rule="self.load.scenarios.all(s, !has(s.type) || s.type != 'http' || has(self.target.custom) || (has(self.target.external) && has(self.target.external.kind) && self.target.external.kind == 'http'))",message="scenarios of type http need an HTTP server: set spec.target.custom, or spec.target.external with kind: http"
// +kubebuilder:validation:XValidation:rule="self.load.scenarios.all(s, !has(s.type) || s.type != 'grpc' || has(self.target.custom) || (has(self.target.external) && has(self.target.external.kind) && self.target.external.kind == 'grpc'))",message="scenarios of type grpc need a gRPC server: set spec.target.custom, or spec.target.external with kind: grpc"
// +kubebuilder:validation:XValidation:rule="!has(self.target.custom) || self.load.scenarios.all(s, !has(s.type) || s.type in ['tcp.echo', 'http', 'grpc', 'script'])",message="a custom target runs scenarios of type tcp.echo, http, grpc and script only"
// +kubebuilder:validation:XValidation:rule="!has(self.thresholds) || self.thresholds.all(t, !has(t.scenario) || self.load.scenarios.exists(s, s.name == t.scenario))",message="spec.thresholds[].scenario must name one of spec.load.scenarios"
// +kubebuilder:validation:XValidation:rule="!has(self.thresholds) || has(self.baseline) || self.thresholds.all(t, !has(t.expr) || !t.expr.matches('%\\\\s*$'))",message="relative thresholds (such as 'cps >= -5%') need spec.baseline"
// +kubebuilder:validation:XValidation:rule="!has(self.timeouts) || !has(self.timeouts.run) || !self.timeouts.run.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || !(has(self.load.duration) && self.load.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && self.load.scenarios.all(s, ((!has(s.duration) || s.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')) && (!has(s.arrival) || ((!has(s.arrival.stages) || s.arrival.stages.all(st, st.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))) && (!has(s.arrival.search) || s.arrival.search.stepDuration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))))))) || duration(self.timeouts.run) >= ([duration('0s')] + self.load.scenarios.map(s, !has(s.requests), (has(s.arrival) && has(s.arrival.search) ? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].filter(i, i <= (has(s.arrival.search.maxSteps) ? s.arrival.search.maxSteps : 8)).map(i, duration(s.arrival.search.stepDuration)).sum() : (has(s.arrival) && has(s.arrival.stages) && size(s.arrival.stages) > 0 ? s.arrival.stages.map(st, duration(st.duration)).sum() : (has(s.duration) ? duration(s.duration) : duration(self.load.duration)))))).sum()",message="spec.timeouts.run is shorter than the total length of the scenarios (the arrival stages or search steps of each scenario, else its duration, else load.duration; requests scenarios not counted): set it to at least that total plus a margin, such as 15m for two 5m scenarios, or leave it unset (default: that total + timeouts.targetReady + 10m)",fieldPath=".timeouts.run"
// +kubebuilder:validation:XValidation:rule="!has(self.faults) || self.faults.all(f, !has(f.scenario) || self.load.scenarios.exists(s, s.name == f.scenario))",message="spec.faults[].scenario must name one of spec.load.scenarios"
// +kubebuilder:validation:XValidation:rule="!has(self.faults) || !(has(self.load.duration) && self.load.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && self.load.scenarios.all(s, ((!has(s.duration) || s.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')) && (!has(s.arrival) || ((!has(s.arrival.stages) || s.arrival.stages.all(st, st.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))) && (!has(s.arrival.search) || s.arrival.search.stepDuration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))))))) || self.faults.all(f, !has(f.offset) || !has(f.scenario) || !f.offset.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || self.load.scenarios.all(s, s.name != f.scenario || duration(f.offset) < (has(s.arrival) && has(s.arrival.search) ? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].filter(i, i <= (has(s.arrival.search.maxSteps) ? s.arrival.search.maxSteps : 8)).map(i, duration(s.arrival.search.stepDuration)).sum() : (has(s.arrival) && has(s.arrival.stages) && size(s.arrival.stages) > 0 ? s.arrival.stages.map(st, duration(st.duration)).sum() : (has(s.duration) ? duration(s.duration) : duration(self.load.duration))))))",message="spec.faults[].offset must be shorter than the scenario's length: its arrival.stages' total, or arrival.search maxSteps × stepDuration, else its duration, else load.duration (for example offset 20s in a 1m scenario): a fault past the scenario's end would hit the next scenario or nothing",fieldPath=".faults"
// +kubebuilder:validation:XValidation:rule="!has(self.faults) || self.faults.all(f, !has(f.role) || (f.role == 'master' && (has(self.target.redis) || (has(self.target.hetu) && has(self.target.hetu.backend.redis)))) || (f.role == 'replica' && ((has(self.target.redis) && has(self.target.redis.mode) && self.target.redis.mode != 'single') || (has(self.target.hetu) && has(self.target.hetu.backend.redis) && has(self.target.hetu.backend.redis.mode) && self.target.hetu.backend.redis.mode != 'single'))) || (f.role == 'sentinel' && ((has(self.target.redis) && has(self.target.redis.mode) && self.target.redis.mode == 'ha') || (has(self.target.hetu) && has(self.target.hetu.backend.redis) && has(self.target.hetu.backend.redis.mode) && self.target.hetu.backend.redis.mode == 'ha'))) || (f.role == 'proxy' && ((has(self.target.redis) && has(self.target.redis.mode) && self.target.redis.mode == 'proxy') || (has(self.target.hetu) && has(self.target.hetu.backend.redis) && has(self.target.hetu.backend.redis.mode) && self.target.hetu.backend.redis.mode == 'proxy'))) || (f.role == 'hetu' && has(self.target.hetu)) || (f.role == 'custom' && has(self.target.custom)))",message="spec.faults[].role must be a role the target has: master (redis, or hetu with a redis back end), replica (mode ha or proxy), sentinel (mode ha), proxy (mode proxy), hetu (hetu), custom (custom); an external target has none"
// +kubebuilder:validation:XValidation:rule="!has(self.faults) || !(has(self.load.duration) && self.load.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && self.load.scenarios.all(s, ((!has(s.duration) || s.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')) && (!has(s.arrival) || ((!has(s.arrival.stages) || s.arrival.stages.all(st, st.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))) && (!has(s.arrival.search) || s.arrival.search.stepDuration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))))))) || self.faults.all(f, !has(f.duration) || !has(f.offset) || !has(f.scenario) || !f.offset.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || !f.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || self.load.scenarios.all(s, s.name != f.scenario || duration(f.offset) + duration(f.duration) < (has(s.arrival) && has(s.arrival.search) ? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].filter(i, i <= (has(s.arrival.search.maxSteps) ? s.arrival.search.maxSteps : 8)).map(i, duration(s.arrival.search.stepDuration)).sum() : (has(s.arrival) && has(s.arrival.stages) && size(s.arrival.stages) > 0 ? s.arrival.stages.map(st, duration(st.duration)).sum() : (has(s.duration) ? duration(s.duration) : duration(self.load.duration))))))",message="spec.faults[].offset + spec.faults[].duration must end inside its scenario (the scenario's length: its arrival.stages' total, or arrival.search maxSteps × stepDuration, else its duration, else load.duration; for example offset 20s with duration 5s in a 1m scenario): a pause must end before the load of its scenario does",fieldPath=".faults"
// +kubebuilder:validation:XValidation:rule="!has(self.faults) || !self.faults.exists(f, has(f.action) && f.action == 'pause') || !((has(self.target.redis) && has(self.target.redis.provider) && self.target.redis.provider == 'redis-operator') || (has(self.target.hetu) && has(self.target.hetu.backend.redis) && has(self.target.hetu.backend.redis.provider) && self.target.hetu.backend.redis.provider == 'redis-operator'))",message="spec.faults[].action pause needs pods benchrun deploys (provider builtin): the redis-operator's pods do not share their process namespace, so their redis-server is PID 1 of its container and cannot be stopped from inside the pod"
// +kubebuilder:validation:XValidation:rule="!has(self.thresholds) || !(has(self.load.duration) && self.load.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && self.load.scenarios.all(s, ((!has(s.duration) || s.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')) && (!has(s.arrival) || ((!has(s.arrival.stages) || s.arrival.stages.all(st, st.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))) && (!has(s.arrival.search) || s.arrival.search.stepDuration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))))))) || self.thresholds.all(t, !has(t.delayAbortEval) || !t.delayAbortEval.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || duration(t.delayAbortEval) < ([duration('0s')] + self.load.scenarios.map(s, (has(s.arrival) && has(s.arrival.search) ? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].filter(i, i <= (has(s.arrival.search.maxSteps) ? s.arrival.search.maxSteps : 8)).map(i, duration(s.arrival.search.stepDuration)).sum() : (has(s.arrival) && has(s.arrival.stages) && size(s.arrival.stages) > 0 ? s.arrival.stages.map(st, duration(st.duration)).sum() : (has(s.duration) ? duration(s.duration) : duration(self.load.duration)))))).sum())",message="spec.thresholds[].delayAbortEval is not shorter than the whole load (the scenarios' total length), so abortOnFail would never be evaluated live: shorten it, such as delayAbortEval: 30s for a 5m load",fieldPath=".thresholds"
// +kubebuilder:validation:XValidation:rule="!has(self.faults) || self.faults.exists(f, !has(f.offset) || !f.offset.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (has(f.duration) && !f.duration.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$'))) || self.faults.all(f, !has(f.duration) || self.faults.all(g, g == f || g.role != f.role || g.scenario != f.scenario || duration(g.offset) < duration(f.offset) || duration(g.offset) >= duration(f.offset) + duration(f.duration)))",message="spec.faults: a fault on a role falls inside a pause of the same role in the same scenario (the pod is stopped then, so the second fault measures nothing of its own): move it after the pause ends, such as pause at 10s for 5s, then kill at 20s",fieldPath=".faults"
type BenchmarkRunSpec struct {
	// Target is the system under test: exactly one of hetu, redis, external or custom.
	Target TargetSpec `json:"target"`

	// Load is the load to generate: scenarios run one after another by the k6 runners.
	Load LoadSpec `json:"load"`

	// Collect says what is measured besides the load results.
	// +kubebuilder:default={}
	// +optional
	Collect CollectSpec `json:"collect,omitempty"`

	// Cleanup says what is deleted when the run ends. Results are always kept.
	// +kubebuilder:default={}
	// +optional
	Cleanup CleanupSpec `json:"cleanup,omitempty"`

	// Timeouts bound how long the run may take.
	// +kubebuilder:default={}
	// +optional
	Timeouts TimeoutsSpec `json:"timeouts,omitempty"`

	// Thresholds decide the verdict: a broken threshold fails the run (phase Failed, reason ThresholdsNotMet).
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.all(b, !has(a.expr) || !has(b.expr) || !a.expr.matches('^\\\\s*(cps|errorRate|mean|p50|p90|p99|p999|max)\\\\s*(<|<=|>|>=)\\\\s*([0-9]+(\\\\.[0-9]+)?|[+-][0-9]+(\\\\.[0-9]+)?%)\\\\s*$') || !b.expr.matches('^\\\\s*(cps|errorRate|mean|p50|p90|p99|p999|max)\\\\s*(<|<=|>|>=)\\\\s*([0-9]+(\\\\.[0-9]+)?|[+-][0-9]+(\\\\.[0-9]+)?%)\\\\s*$') || a.expr.find('[A-Za-z][A-Za-z0-9]*') != b.expr.find('[A-Za-z][A-Za-z0-9]*') || a.expr.contains('%') != b.expr.contains('%') || (has(a.scenario) && has(b.scenario) && a.scenario != b.scenario) || !(a.expr.find('[<>]=?') in ['<', '<=']) || !(b.expr.find('[<>]=?') in ['>', '>=']) || double(a.expr.find('[+-]?[0-9]+(\\\\.[0-9]+)?%?\\\\s*$').replace('%', '').trim()) > double(b.expr.find('[+-]?[0-9]+(\\\\.[0-9]+)?%?\\\\s*$').replace('%', '').trim()) || (double(a.expr.find('[+-]?[0-9]+(\\\\.[0-9]+)?%?\\\\s*$').replace('%', '').trim()) == double(b.expr.find('[+-]?[0-9]+(\\\\.[0-9]+)?%?\\\\s*$').replace('%', '').trim()) && a.expr.find('[<>]=?') == '<=' && b.expr.find('[<>]=?') == '>=')))",message="spec.thresholds: two thresholds on the same metric and scenario contradict each other (an upper bound below a lower bound, such as p99 < 10 and p99 > 20, or cps >= +10% and cps <= -10%: the run could never pass): keep one, or make them a range, such as p99 > 1 and p99 < 20"
	// +optional
	Thresholds []Threshold `json:"thresholds,omitempty"`

	// Priority orders runs waiting for the same load pool (load.runners.pool) or external
	// target endpoint: higher first, then oldest first (default 0). It never preempts the
	// run holding the pool.
	// +kubebuilder:validation:Minimum=-1000
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// Baseline names the earlier run this run is compared with (deltas, relative thresholds).
	// +optional
	Baseline *BaselineSpec `json:"baseline,omitempty"`

	// Faults are injected into the target while the load runs (kill or restart the pod of a
	// role at an offset in a scenario); status.faults says when and to which pod, and for the
	// Redis write path the failover time and lost writes (README "Fault injection").
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Faults []Fault `json:"faults,omitempty"`
}

// CollectSpec says what is measured besides the load results.
// +kubebuilder:validation:XValidation:rule="!has(self.prometheusRemoteWrite) || !has(self.prometheusRemoteWrite.tls) || !has(self.prometheusRemoteWriteURL) || self.prometheusRemoteWriteURL.startsWith('https://')",message="prometheusRemoteWrite.tls applies to an https:// URL only, and prometheusRemoteWriteURL is plain http: use https://, such as https://prometheus:9090/api/v1/write, or remove tls",fieldPath=".prometheusRemoteWrite.tls"
type CollectSpec struct {
	// ResourceUsage samples CPU and memory of the target and runner pods during the load
	// and reports average and maximum per role in status.resources.
	// +kubebuilder:default=true
	// +optional
	ResourceUsage *bool `json:"resourceUsage,omitempty"`

	// PrometheusRemoteWriteURL, when set, makes every runner stream its live metrics (calls,
	// errors by kind, active VUs, a latency histogram; see the README's "Watching a run") to this
	// Prometheus remote-write endpoint (http or https URL) every few seconds while the load
	// runs. Empty means the manager's default (chart value liveMetrics.remoteWriteURL), if any.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="!self.matches('^https?://[^/]*@')",message="prometheusRemoteWriteURL must not hold credentials (user:password@host): they would show in the spec and the runner pods"
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^\\\\s/]+(/\\\\S*)?$')",message="prometheusRemoteWriteURL must be an http:// or https:// URL, such as http://prometheus:9090/api/v1/write"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[?&](?i)(access_token|token|api_key|apikey|password|passwd|secret|auth|signature|sig)=')",message="prometheusRemoteWriteURL must not hold credentials in its query (such as ?token=...): they would show in the spec and the runner pods; use prometheusRemoteWrite.bearerTokenSecretRef or basicAuth, and a URL such as http://prometheus:9090/api/v1/write"
	// +optional
	PrometheusRemoteWriteURL string `json:"prometheusRemoteWriteURL,omitempty"`

	// PrometheusRemoteWrite says how runners authenticate to the remote-write endpoint (the
	// run's prometheusRemoteWriteURL or the manager's default) and how often they push.
	// +optional
	PrometheusRemoteWrite *RemoteWriteSpec `json:"prometheusRemoteWrite,omitempty"`
}

// RemoteWriteSpec holds the remote-write credentials (from Secrets, injected into the runner
// pods as secretKeyRef environment variables, never as literals), TLS and push interval.
// +kubebuilder:validation:XValidation:rule="!(has(self.bearerTokenSecretRef) && has(self.basicAuth))",message="prometheusRemoteWrite: give bearerTokenSecretRef or basicAuth, not both"
type RemoteWriteSpec struct {
	// BearerTokenSecretRef is sent as "Authorization: Bearer <token>".
	// +optional
	BearerTokenSecretRef *SecretKeyRef `json:"bearerTokenSecretRef,omitempty"`
	// BasicAuth is sent as HTTP basic authentication.
	// +optional
	BasicAuth *RemoteWriteBasicAuth `json:"basicAuth,omitempty"`
	// TLS verifies an https endpoint: caSecretRef, serverName, insecureSkipVerify as for
	// targets (https in the URL turns TLS on; enabled is not used).
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`
	// IntervalSeconds is how often each runner pushes (default 5).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=60
	// +optional
	IntervalSeconds *int32 `json:"intervalSeconds,omitempty"`
}

// RemoteWriteBasicAuth is a user name and password from Secrets.
type RemoteWriteBasicAuth struct {
	// UsernameSecretRef is the Secret key holding the user name.
	UsernameSecretRef SecretKeyRef `json:"usernameSecretRef"`
	// PasswordSecretRef is the Secret key holding the password.
	PasswordSecretRef SecretKeyRef `json:"passwordSecretRef"`
}

// CleanupPolicy says when the target and runners are deleted after a run.
// +kubebuilder:validation:Enum=Always;OnSuccess;Never
type CleanupPolicy string

const (
	// CleanupAlways deletes the target and runners whatever the outcome.
	CleanupAlways CleanupPolicy = "Always"
	// CleanupOnSuccess deletes them when the run succeeded and keeps them after a failure for debugging.
	CleanupOnSuccess CleanupPolicy = "OnSuccess"
	// CleanupNever keeps them until the BenchmarkRun itself is deleted.
	CleanupNever CleanupPolicy = "Never"
)

// CleanupSpec says what is deleted when the run ends. Results (status and report) are never deleted by cleanup.
type CleanupSpec struct {
	// Policy says when the target and the runners are deleted: Always, OnSuccess (default) or Never.
	// +kubebuilder:default=OnSuccess
	// +optional
	Policy CleanupPolicy `json:"policy,omitempty"`

	// TTLSecondsAfterFinished deletes the BenchmarkRun itself (and so its report) this many
	// seconds after it finished. Unset keeps it forever.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// TimeoutsSpec bounds how long a run may take.
type TimeoutsSpec struct {
	// TargetReady is how long the target may take to become ready before the run fails (default 10m).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 90s, 10m or 1h30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('24h'))",message="must be between 1s and 24h (a target not ready in a day will not become ready; the run holds its resources meanwhile)"
	// +kubebuilder:default="10m"
	// +optional
	TargetReady *metav1.Duration `json:"targetReady,omitempty"`

	// RunnersReady is how long the runners may take, from their creation, to all be ready to
	// start (scheduled, image pulled, Secrets found) before the run fails naming why (default
	// 10m). A runner waiting for a reason that does not heal by itself (a missing Secret or key,
	// an invalid image name) fails the run after 1m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 90s, 10m or 1h30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('24h'))",message="must be between 1s and 24h (runners not ready in a day will not become ready; the run holds its resources meanwhile)"
	// +optional
	RunnersReady *metav1.Duration `json:"runnersReady,omitempty"`

	// Queued is how long the run may wait in phase Queued for its load pool before it fails
	// with reason QueueTimeout, nothing provisioned (default 1h).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 90s, 10m or 1h30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('168h'))",message="timeouts.queued must be between 1s and 168h"
	// +optional
	Queued *metav1.Duration `json:"queued,omitempty"`

	// Run bounds the whole run from creation to results. Unset: the scenarios' total duration
	// plus TargetReady plus a margin of 10m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="must be a duration such as 90s, 10m or 1h30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || duration(self) >= duration('1s')",message="must be at least 1s"
	// +optional
	Run *metav1.Duration `json:"run,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=br;benchrun,categories=benchrun
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.target.kind`
// +kubebuilder:printcolumn:name="Scenarios",type=string,JSONPath=`.status.scenarios`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="Best CPS",type=string,JSONPath=`.status.bestCPS`
// +kubebuilder:printcolumn:name="Pool",type=string,JSONPath=`.spec.load.runners.pool`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.spec.baseline) || !has(self.spec.baseline.name) || !has(self.metadata.name) || self.spec.baseline.name != self.metadata.name",message="spec.baseline.name names this run itself (it would wait for itself forever): name an earlier run, such as get-before-upgrade, or use spec.baseline.selector",fieldPath=".spec.baseline.name"
// +kubebuilder:validation:XValidation:rule="!has(self.metadata.name) || size(self.metadata.name) <= 236",message="metadata.name must be at most 236 characters: the run's Events are named <name>.<16 hex digits>, and the API server refuses names over 253"
// +kubebuilder:validation:XValidation:rule="!has(self.metadata.name) || self.metadata.name == '' || self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",messageExpression="'metadata.name ' + self.metadata.name + ' must start with a lowercase letter and hold only lowercase letters, digits and - (no dots): it starts the names of the Services and pods of the run (for example my-run, not my.run or 1k-get)'"

// BenchmarkRun is one benchmark: a target deployed (or reached), k6 load runners started
// together, their results merged exactly and written as the tables users publish.
type BenchmarkRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the user asks for.
	Spec BenchmarkRunSpec `json:"spec"`
	// Status is what the operator observed and measured.
	// +optional
	Status BenchmarkRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkRunList is a list of BenchmarkRuns.
type BenchmarkRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the BenchmarkRuns.
	Items []BenchmarkRun `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkRun{}, &BenchmarkRunList{})
}
