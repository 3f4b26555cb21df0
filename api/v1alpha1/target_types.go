package v1alpha1

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TargetSpec is the system under test. Exactly one of its fields is set.
// +kubebuilder:validation:XValidation:rule="(has(self.hetu) ? 1 : 0) + (has(self.redis) ? 1 : 0) + (has(self.external) ? 1 : 0) + (has(self.custom) ? 1 : 0) == 1",message="set exactly one of spec.target.hetu, spec.target.redis, spec.target.external or spec.target.custom"
type TargetSpec struct {
	// HeTu deploys a HeTu game server (WebSocket RPC) with its Redis back end.
	// +optional
	HeTu *HeTuTarget `json:"hetu,omitempty"`

	// Redis deploys Redis or Valkey: single, HA (master, replicas, sentinels) or behind a
	// read/write-splitting proxy.
	// +optional
	Redis *RedisTarget `json:"redis,omitempty"`

	// External points at an endpoint that already exists (Aliyun Redis, Tair, an existing
	// HeTu server): nothing is deployed.
	// +optional
	External *ExternalTarget `json:"external,omitempty"`

	// Custom deploys the user's own server (an echo server, an HTTP app...) behind a Service.
	// +optional
	Custom *CustomTarget `json:"custom,omitempty"`
}

// PacketLayers is the HeTu protocol layer stack, applied in order on send.
// +kubebuilder:validation:Enum=msgpack;msgpack+zlib;msgpack+zlib+crypto
type PacketLayers string

const (
	// LayersMsgpack is msgpack only.
	LayersMsgpack PacketLayers = "msgpack"
	// LayersMsgpackZlib is msgpack then a zlib stream with HeTu's preset dictionary.
	LayersMsgpackZlib PacketLayers = "msgpack+zlib"
	// LayersMsgpackZlibCrypto is msgpack, zlib, then X25519 + ChaCha20-Poly1305 encryption (HeTu's default).
	LayersMsgpackZlibCrypto PacketLayers = "msgpack+zlib+crypto"
)

// SecretKeyRef names one key of a Secret in the BenchmarkRun's namespace.
type SecretKeyRef struct {
	// Name is the Secret's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a Secret name (lower-case letters, digits, '-' and '.'), such as redis-auth"
	Name string `json:"name"`
	// Key is the key inside the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="must be a Secret key (letters, digits, '-', '_' and '.'), such as password"
	Key string `json:"key"`
}

// Placement says where and with what resources pods of one role run.
type Placement struct {
	// Resources are the container's requests and limits.
	// +kubebuilder:validation:XValidation:rule="!has(self.limits) || !has(self.requests) || ['cpu', 'memory'].all(r, !(r in self.limits) || !(r in self.requests) || !isQuantity(string(self.limits[r])) || !isQuantity(string(self.requests[r])) || quantity(string(self.limits[r])).compareTo(quantity(string(self.requests[r]))) >= 0)",message="resources.limits must not be below resources.requests for cpu and memory (the pods could not be created): raise the limit or lower the request"
	// +optional
	Resources *ResourceRequirements `json:"resources,omitempty"`
	// NodeSelector restricts the pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations let the pods run on tainted (dedicated) nodes.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator in ['Exists', 'Equal'])",message="tolerations[].operator must be Equal (the default) or Exists, such as {key: dedicated, operator: Equal, value: load, effect: NoSchedule}"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator != 'Exists' || !has(t.value) || size(t.value) == 0)",message="tolerations[].value must be empty with operator Exists (it matches any value), such as {key: dedicated, operator: Exists, effect: NoSchedule}"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.effect) || size(t.effect) == 0 || t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="tolerations[].effect must be NoSchedule, PreferNoSchedule or NoExecute (or empty: every effect), such as {key: dedicated, value: load, effect: NoSchedule}"
	// +kubebuilder:validation:XValidation:rule="self.all(t, (has(t.key) && size(t.key) > 0) || (has(t.operator) && t.operator == 'Exists'))",message="tolerations[] without a key must have operator Exists (it then tolerates every taint), such as {operator: Exists}"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.tolerationSeconds) || (has(t.effect) && t.effect == 'NoExecute'))",message="tolerations[].tolerationSeconds applies only to effect NoExecute, such as {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}"
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// ResourceRequirements are a container's requests and limits: corev1.ResourceRequirements
// with bounded maps, so that admission checks resource names and quantities with messages
// that name the field and give an example (issue 25).
type ResourceRequirements struct {
	// Limits are the most the container may use, such as {cpu: '2', memory: 1Gi}.
	// +optional
	Limits ResourceList `json:"limits,omitempty"`
	// Requests are what the scheduler reserves for the container, such as {cpu: 500m, memory: 512Mi}.
	// +optional
	Requests ResourceList `json:"requests,omitempty"`
}

// ResourceList maps a resource name (cpu, memory, ephemeral-storage, hugepages-<size>, or an
// extended resource with a domain such as nvidia.com/gpu) to a quantity (500m, 2, 512Mi, 1Gi).
// +kubebuilder:validation:MaxProperties=8
// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage'] || (k.startsWith('hugepages-') && isQuantity(k.substring(10))) || k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",message="resource names are cpu, memory, ephemeral-storage, hugepages-<size> (such as hugepages-2Mi) or an extended resource with its domain (such as nvidia.com/gpu): check the spelling, such as {cpu: 500m, memory: 512Mi}"
// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(string(self[k])))",message="every value must be a quantity, a number with an optional unit, such as cpu: 500m or 2 and memory: 512Mi or 1Gi"
type ResourceList map[corev1.ResourceName]Quantity

// Quantity is a resource quantity written as a string (500m, 512Mi) or a whole number (2); its
// length is bounded so that admission's CEL rules on it fit their cost budget.
// +kubebuilder:validation:XIntOrString
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:Type=""
type Quantity struct {
	intstr.IntOrString `json:",inline"`
}

// Core is r as corev1.ResourceRequirements (a quantity admission did not check is left out).
func (r *ResourceRequirements) Core() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Limits: r.Limits.Core(), Requests: r.Requests.Core()}
}

// Core is l as a corev1.ResourceList (nil when l is empty).
func (l ResourceList) Core() corev1.ResourceList {
	if len(l) == 0 {
		return nil
	}
	out := make(corev1.ResourceList, len(l))
	for name, v := range l {
		v := v.IntOrString
		if q, err := resource.ParseQuantity(v.String()); err == nil {
			out[name] = q
		}
	}
	return out
}

// HeTuTarget deploys a HeTu game server.
// +kubebuilder:validation:XValidation:rule="!has(self.authKeySecretRef) || !has(self.packetLayers) || self.packetLayers == 'msgpack+zlib+crypto'",message="spec.target.hetu.authKeySecretRef needs packetLayers msgpack+zlib+crypto (the auth key is used by the crypto layer only): set packetLayers: msgpack+zlib+crypto or remove the key",fieldPath=".authKeySecretRef"
type HeTuTarget struct {
	// Image is the HeTu server image running the benchmark app (default: the operator's configured HeTu bench image).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// Replicas is the number of HeTu server pods behind the Service.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Workers is the number of HeTu worker processes per pod (HeTu's WORKER_NUM).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	// +optional
	Workers int32 `json:"workers,omitempty"`

	// Port is the WebSocket port the server listens on.
	// +kubebuilder:default=2466
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// Instance is the HeTu instance name; clients connect to /hetu/<instance>.
	// +kubebuilder:default=bench
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_]+$')",message="instance names use letters, digits and '_' (clients connect to /hetu/<instance>)"
	// +optional
	Instance string `json:"instance,omitempty"`

	// PacketLayers is the protocol layer stack: msgpack, msgpack+zlib or msgpack+zlib+crypto (default).
	// +kubebuilder:default="msgpack+zlib+crypto"
	// +optional
	PacketLayers PacketLayers `json:"packetLayers,omitempty"`

	// AuthKeySecretRef, when set, makes the server require signed hellos with this key; runners sign with it.
	// +optional
	AuthKeySecretRef *SecretKeyRef `json:"authKeySecretRef,omitempty"`

	// ExtraConfig adds or overrides HeTu server configuration keys (e.g. CLIENT_SEND_LIMITS).
	// The operator already lifts the per-client limits that would throttle a load test.
	// Credentials are not allowed here (keys naming a password, secret, token or key, or
	// values holding a URL with user:password@): use authKeySecretRef and the backend's
	// passwordSecretRef.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.upperAscii().matches('PASSWORD|PASSWD|PWD|SECRET|TOKEN|CREDENTIAL|AUTH_?KEY|PRIVATE_?KEY|API_?KEY'))",message="hetu.extraConfig must not hold credentials (a key naming a password, secret, token or key): put them in a Secret (authKeySecretRef, backend passwordSecretRef)"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Z0-9_]+$'))",message="hetu.extraConfig keys are HeTu config names in upper case (letters, digits and '_'), such as CLIENT_SEND_LIMITS"
	// +optional
	ExtraConfig map[string]HeTuConfigValue `json:"extraConfig,omitempty"`

	// App runs your own HeTu app file (from a ConfigMap) instead of the image's benchmark app
	// (examples/hetu-bench/app.py); with image, your own HeTu image too. hetu.call scenarios
	// call its RPCs.
	// +optional
	App *HeTuAppSpec `json:"app,omitempty"`

	// Backend is where HeTu keeps its data.
	Backend HeTuBackend `json:"backend"`

	// Placement of the HeTu server pods.
	// +optional
	Placement `json:",inline"`
}

// HeTuConfigValue is one hetu.extraConfig value: one line, bounded (so the credential rule's
// CEL cost is bounded too), and never a URL with a password (user:password@).
// +kubebuilder:validation:MaxLength=4096
// +kubebuilder:validation:XValidation:rule="!self.contains('\\n') && !self.contains('\\r')",message="hetu.extraConfig values must be single-line, such as CLIENT_SEND_LIMITS: '[[100, 1]]'"
// +kubebuilder:validation:XValidation:rule="!self.matches('://[^/@\\\\s]*:[^/@\\\\s]*@')",message="hetu.extraConfig values must not hold credentials (a URL with user:password@): put them in a Secret (backend passwordSecretRef)"
type HeTuConfigValue string

// HeTuBackend is where HeTu keeps its data: exactly one of redis or external.
// +kubebuilder:validation:XValidation:rule="(has(self.redis) ? 1 : 0) + (has(self.external) ? 1 : 0) == 1",message="set exactly one of backend.redis or backend.external"
// +kubebuilder:validation:XValidation:rule="!has(self.external) || !has(self.external.kind) || self.external.kind == 'redis'",message="backend.external must have kind: redis (HeTu stores its data in Redis)"
type HeTuBackend struct {
	// Redis deploys a Redis or Valkey back end for HeTu; replicas become HeTu's read servants.
	// +optional
	Redis *RedisTarget `json:"redis,omitempty"`
	// External uses an existing Redis (Aliyun Redis, Tair...) as HeTu's back end.
	// +optional
	External *ExternalTarget `json:"external,omitempty"`
}

// RedisMode is the Redis topology.
// +kubebuilder:validation:Enum=single;ha;proxy
type RedisMode string

const (
	// RedisSingle is one Redis server.
	RedisSingle RedisMode = "single"
	// RedisHA is a master with replicas, watched by sentinels.
	RedisHA RedisMode = "ha"
	// RedisProxy is a master with read replicas behind a read/write-splitting proxy.
	RedisProxy RedisMode = "proxy"
)

// RedisEngine is the server implementation.
// +kubebuilder:validation:Enum=redis;valkey
type RedisEngine string

const (
	// EngineRedis is Redis.
	EngineRedis RedisEngine = "redis"
	// EngineValkey is Valkey.
	EngineValkey RedisEngine = "valkey"
)

// RedisProvider says what deploys Redis.
// +kubebuilder:validation:Enum=builtin;redis-operator;auto
type RedisProvider string

const (
	// ProviderBuiltin deploys StatefulSets directly.
	ProviderBuiltin RedisProvider = "builtin"
	// ProviderRedisOperator creates OT-CONTAINER-KIT redis-operator resources.
	ProviderRedisOperator RedisProvider = "redis-operator"
	// ProviderAuto uses the redis-operator when its CRDs are installed, else builtin.
	ProviderAuto RedisProvider = "auto"
)

// RedisTarget deploys Redis or Valkey.
// +kubebuilder:validation:XValidation:rule="self.mode != 'single' || !has(self.replicas)",message="replicas applies only to mode ha or proxy"
// +kubebuilder:validation:XValidation:rule="self.mode == 'ha' || !has(self.sentinels)",message="sentinels applies only to mode ha"
// +kubebuilder:validation:XValidation:rule="self.mode == 'proxy' || !has(self.proxy)",message="proxy settings apply only to mode proxy"
// +kubebuilder:validation:XValidation:rule="!has(self.version) || !has(self.image)",message="set either version (a tag of the default image) or image, not both"
type RedisTarget struct {
	// Mode is the topology: single (default), ha (master + replicas + sentinels) or proxy (master + read replicas behind a read/write-splitting proxy).
	// +kubebuilder:default=single
	// +optional
	Mode RedisMode `json:"mode,omitempty"`

	// Engine is redis (default) or valkey.
	// +kubebuilder:default=redis
	// +optional
	Engine RedisEngine `json:"engine,omitempty"`

	// Image overrides the server image (default: the operator's configured image for the engine).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// Version is a shorthand for the image: this tag of the operator's default image for the
	// engine (e.g. "8.2" gives redis:8.2, "9.0" with engine valkey gives valkey/valkey:9.0).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`
	// +optional
	Version string `json:"version,omitempty"`

	// Replicas is the number of read replicas besides the master (mode ha and proxy; default 2).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Sentinels is the number of sentinel processes (mode ha; default 3).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +optional
	Sentinels *int32 `json:"sentinels,omitempty"`

	// Provider says what deploys Redis: builtin StatefulSets, the OT-CONTAINER-KIT redis-operator, or auto (default: the operator when its CRDs exist).
	// +kubebuilder:default=auto
	// +optional
	Provider RedisProvider `json:"provider,omitempty"`

	// Config sets server configuration directives, e.g. io-threads: "8", maxmemory: 4gb.
	// Passwords are not allowed here: use passwordSecretRef.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="!('requirepass' in self) && !('masterauth' in self)",message="do not put passwords in config: use passwordSecretRef"
	// +kubebuilder:validation:XValidation:rule="!('tls-key-file-pass' in self) && !('tls-client-key-file-pass' in self) && !('user' in self && self['user'].matches('(^|\\\\s)>'))",message="do not put passwords in config (user ... >password, tls-key-file-pass, tls-client-key-file-pass): use passwordSecretRef"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z][a-z0-9-]*$'))",message="config keys must be Redis directive names in lower case, such as io-threads or maxmemory-policy"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k in ['port', 'bind', 'daemonize', 'dir', 'dbfilename', 'appendfilename', 'appenddirname', 'logfile', 'pidfile', 'unixsocket', 'include', 'supervised', 'tls-port', 'replicaof', 'slaveof', 'cluster-enabled', 'protected-mode', 'rename-command']))",message="config must not set what benchrun manages: port, bind, daemonize, dir, dbfilename, appendfilename, appenddirname, logfile, pidfile, unixsocket, include, supervised, tls-port, replicaof/slaveof, cluster-enabled, protected-mode, rename-command (persistence paths are on benchrun's data volume; the root filesystem is read-only); tune the server instead, such as io-threads: '4' or maxmemory-policy: allkeys-lru"
	// +optional
	Config map[string]RedisConfigValue `json:"config,omitempty"`

	// PasswordSecretRef sets requirepass (and masterauth) from a Secret.
	// +optional
	PasswordSecretRef *SecretKeyRef `json:"passwordSecretRef,omitempty"`

	// Proxy configures the read/write-splitting proxy (mode proxy).
	// +optional
	Proxy *RedisProxySpec `json:"proxy,omitempty"`

	// Placement of the Redis server pods.
	// +optional
	Placement `json:",inline"`
}

// ReadPolicy says where a proxy sends reads.
// +kubebuilder:validation:Enum=replicas;replicas-and-master;master
type ReadPolicy string

const (
	// ReadReplicas sends reads to replicas only.
	ReadReplicas ReadPolicy = "replicas"
	// ReadReplicasAndMaster spreads reads over replicas and the master.
	ReadReplicasAndMaster ReadPolicy = "replicas-and-master"
	// ReadMaster sends every read to the master (no splitting; a baseline).
	ReadMaster ReadPolicy = "master"
)

// RedisProxySpec configures the read/write-splitting proxy in front of Redis.
type RedisProxySpec struct {
	// Image is the proxy image (default: the operator's camellia-redis-proxy image).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// Replicas is the number of proxy pods.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadPolicy is where reads go: replicas (default), replicas-and-master or master.
	// +kubebuilder:default=replicas
	// +optional
	ReadPolicy ReadPolicy `json:"readPolicy,omitempty"`

	// Placement of the proxy pods.
	// +optional
	Placement `json:",inline"`
}

// ExternalKind is the protocol an external endpoint speaks.
// +workloadcel:begin=externalEnum generated by hack/workload-cel from internal/workload: do not edit
// +kubebuilder:validation:Enum=redis;hetu;tcp;http;grpc
// +workloadcel:end
type ExternalKind string

const (
	// ExternalRedis is a Redis-protocol endpoint (Redis, Valkey, Aliyun Redis, Tair).
	ExternalRedis ExternalKind = "redis"
	// ExternalHeTu is a HeTu server.
	ExternalHeTu ExternalKind = "hetu"
	// ExternalTCP is a plain TCP (or TLS) server, e.g. an echo server (tcp.echo scenarios).
	ExternalTCP ExternalKind = "tcp"
	// ExternalHTTP is an HTTP server (https when tls.enabled).
	ExternalHTTP ExternalKind = "http"
	// ExternalGRPC is a gRPC server with server reflection (TLS when tls.enabled).
	ExternalGRPC ExternalKind = "grpc"
)

// ExternalKinds are every ExternalKind in the Enum marker's order (internal/validation's
// TestExternalKindsMatchEnum holds them equal).
func ExternalKinds() []ExternalKind { return slices.Clone(externalKinds) }

// externalKinds are every ExternalKind, in the Enum marker's order.
// +workloadcel:begin=externalKinds generated by hack/workload-cel from internal/workload: do not edit
var externalKinds = []ExternalKind{"redis", "hetu", "tcp", "http", "grpc"}

// +workloadcel:end

// RedisConfigValue is the value of one Redis configuration directive: one line (a line break
// would start another directive, which could also carry a password past the rules on config).
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:XValidation:rule="!self.contains('\\n') && !self.contains('\\r')",message="config values must be single-line (a line break would start another directive), such as maxmemory: 4gb"
type RedisConfigValue string

// ExternalTarget is an endpoint that already exists; nothing is deployed.
// +kubebuilder:validation:XValidation:rule="!has(self.usernameSecretRef) || has(self.passwordSecretRef)",message="spec.target.external.usernameSecretRef needs passwordSecretRef (Redis AUTH takes a user name with a password; a user name alone is never sent): add passwordSecretRef: {name: redis-auth, key: password}",fieldPath=".usernameSecretRef"
// +kubebuilder:validation:XValidation:rule="!has(self.authKeySecretRef) || !has(self.packetLayers) || self.packetLayers == 'msgpack+zlib+crypto'",message="authKeySecretRef needs packetLayers msgpack+zlib+crypto (the auth key is used by the crypto layer only): set packetLayers: msgpack+zlib+crypto or remove the key",fieldPath=".authKeySecretRef"
// +kubebuilder:validation:XValidation:rule="!has(self.kind) || self.kind == 'hetu' || (!has(self.instance) && !has(self.packetLayers) && !has(self.authKeySecretRef))",message="instance, packetLayers and authKeySecretRef apply only to kind: hetu"
// +kubebuilder:validation:XValidation:rule="!has(self.kind) || self.kind == 'redis' || (!has(self.readAddresses) && !has(self.usernameSecretRef))",message="readAddresses and usernameSecretRef apply only to kind: redis"
// +workloadcel:begin=streamKinds generated by hack/workload-cel from internal/workload: do not edit
// +kubebuilder:validation:XValidation:rule="!has(self.kind) || !(self.kind in ['tcp', 'http', 'grpc']) || !has(self.passwordSecretRef)",message="passwordSecretRef does not apply to kind tcp, http or grpc"
// +workloadcel:end
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || (has(self.tls.enabled) && self.tls.enabled) || ((!has(self.tls.serverName) || size(self.tls.serverName) == 0) && !has(self.tls.caSecretRef) && !(has(self.tls.insecureSkipVerify) && self.tls.insecureSkipVerify))",message="tls.serverName, tls.caSecretRef and tls.insecureSkipVerify apply only with tls.enabled: true (set enabled: true, or remove them)"
type ExternalTarget struct {
	// +workloadcel:begin=externalKindDoc generated by hack/workload-cel from internal/workload: do not edit
	// Kind is the protocol: redis, hetu, tcp, http or grpc.
	// +workloadcel:end
	Kind ExternalKind `json:"kind"`

	// Addresses are host:port endpoints (for redis, the first is the write endpoint).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=261
	// +kubebuilder:validation:XValidation:rule="self.all(a, a.matches('^(\\\\[[0-9A-Fa-f:.]+\\\\]|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?):[0-9]{1,5}$'))",message="addresses must be host:port, such as r-bp1xxxx.redis.rds.aliyuncs.com:6379"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches(':[0-9]{1,5}$') || a.matches(':([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$'))",message="addresses: the port must be between 1 and 65535, such as host:6379"
	Addresses []string `json:"addresses"`

	// ReadAddresses are read-replica host:port endpoints (kind redis), used by read scenarios when set.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=261
	// +kubebuilder:validation:XValidation:rule="self.all(a, a.matches('^(\\\\[[0-9A-Fa-f:.]+\\\\]|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?):[0-9]{1,5}$'))",message="readAddresses must be host:port"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches(':[0-9]{1,5}$') || a.matches(':([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$'))",message="readAddresses: the port must be between 1 and 65535, such as host:6379"
	// +optional
	ReadAddresses []string `json:"readAddresses,omitempty"`

	// UsernameSecretRef is the ACL user name (kind redis; Aliyun and Tair accounts).
	// +optional
	UsernameSecretRef *SecretKeyRef `json:"usernameSecretRef,omitempty"`

	// PasswordSecretRef is the password.
	// +optional
	PasswordSecretRef *SecretKeyRef `json:"passwordSecretRef,omitempty"`

	// TLS configures encrypted connections.
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// Instance is the HeTu instance name (kind hetu; default bench).
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_]+$')",message="instance names use letters, digits and '_' (clients connect to /hetu/<instance>)"
	// +optional
	Instance string `json:"instance,omitempty"`

	// PacketLayers is the HeTu server's protocol layer stack (kind hetu; default msgpack+zlib+crypto).
	// +optional
	PacketLayers PacketLayers `json:"packetLayers,omitempty"`

	// AuthKeySecretRef is the HeTu server's auth key (kind hetu), when it requires signed hellos.
	// +optional
	AuthKeySecretRef *SecretKeyRef `json:"authKeySecretRef,omitempty"`

	// Exclusive (default true): runs whose external targets share an endpoint (any of
	// addresses and readAddresses, compared as host:port with the host lower-cased; names are
	// not resolved) never overlap: they wait in phase Queued and start one after another,
	// like runs on one load pool (spec.priority, then oldest first). false: this run neither
	// waits for nor holds its endpoints (benchrun run ignores it).
	// +optional
	Exclusive *bool `json:"exclusive,omitempty"`
}

// TLSSpec configures TLS to an external endpoint.
type TLSSpec struct {
	// Enabled turns TLS on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// ServerName overrides the name checked in the server certificate.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServerName string `json:"serverName,omitempty"`
	// CASecretRef is a PEM CA bundle to verify the server with (default: system roots).
	// +optional
	CASecretRef *SecretKeyRef `json:"caSecretRef,omitempty"`
	// InsecureSkipVerify skips server certificate verification (test endpoints only).
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// CustomTarget deploys the user's own server: a Deployment of image (command, args, env)
// with its ports behind a Service, ready when its readiness probe passes. Pods run under the
// restricted Pod Security Standard (non-root user 65532, read-only root filesystem with a
// writable /tmp). Locally (`benchrun run`) command + args run as a process on 127.0.0.1,
// with each port passed in the environment (see the README).
// +kubebuilder:validation:XValidation:rule="has(self.ports) && size(self.ports) > 0",message="spec.target.custom needs at least one port (ports: [{name: echo, port: 7007}])"
// +kubebuilder:validation:XValidation:rule="has(self.readinessProbe)",message="spec.target.custom needs a readinessProbe (tcpSocket, httpGet or exec): the load starts only once the server is ready"
// +kubebuilder:validation:XValidation:rule="!has(self.readinessProbe) || !has(self.readinessProbe.tcpSocket) || !has(self.readinessProbe.tcpSocket.port) || (has(self.ports) && self.ports.exists(p, has(p.name) && p.name == self.readinessProbe.tcpSocket.port))",message="readinessProbe.tcpSocket.port must name one of spec.target.custom.ports"
// +kubebuilder:validation:XValidation:rule="!has(self.readinessProbe) || !has(self.readinessProbe.httpGet) || !has(self.readinessProbe.httpGet.port) || (has(self.ports) && self.ports.exists(p, has(p.name) && p.name == self.readinessProbe.httpGet.port))",message="readinessProbe.httpGet.port must name one of spec.target.custom.ports"
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || self.ports.all(p, self.ports.exists_one(q, q.port == p.port))",message="spec.target.custom.ports: two ports have the same number; give each its own, such as [{name: echo, port: 7007}, {name: admin, port: 7008}]",fieldPath=".ports"
// +kubebuilder:validation:XValidation:rule="!has(self.env) || self.env.all(e, !e.name.startsWith('BENCHRUN_PORT_'))",message="spec.target.custom.env must not set BENCHRUN_PORT_* variables: benchrun sets them from spec.target.custom.ports (name yours otherwise, such as ECHO_PORT)",fieldPath=".env"
// +kubebuilder:validation:XValidation:rule="(!has(self.command) && !has(self.args) && !has(self.env)) || ((has(self.command) ? self.command : []) + (has(self.args) ? self.args : []) + (has(self.env) ? self.env.map(e, has(e.value), e.value) : [])).all(a, !a.contains('$(BENCHRUN_PORT_') || a.findAll('[$][(]BENCHRUN_PORT_[A-Za-z0-9_]*[)]').all(r, has(self.ports) && self.ports.exists(p, r == '$(BENCHRUN_PORT_' + p.name.upperAscii().replace('-', '_') + ')')))",message="spec.target.custom: a $(BENCHRUN_PORT_<NAME>) in command, args or env names a port that is not in spec.target.custom.ports: declare it, such as ports: [{name: echo, port: 7007}] for $(BENCHRUN_PORT_ECHO)"
type CustomTarget struct {
	// Image is the server's container image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`

	// Command replaces the image's entrypoint (locally: the program and its first arguments).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	// +optional
	Command []string `json:"command,omitempty"`

	// Args are the arguments (after command).
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=4096
	// +optional
	Args []string `json:"args,omitempty"`

	// Env are environment variables of the server, literal or from a Secret.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +optional
	Env []CustomEnvVar `json:"env,omitempty"`

	// Ports are the ports the server listens on; the first one is where the load goes.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	// +optional
	Ports []CustomPort `json:"ports,omitempty"`

	// ReadinessProbe tells when the server serves: exactly one of tcpSocket, httpGet or exec.
	// +optional
	ReadinessProbe *CustomProbe `json:"readinessProbe,omitempty"`

	// Replicas is the number of server pods behind the Service.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Placement of the server pods.
	// +optional
	Placement `json:",inline"`
}

// CustomEnvVar is one environment variable of a custom server.
// +kubebuilder:validation:XValidation:rule="!has(self.value) || !has(self.secretKeyRef)",message="set either value or secretKeyRef, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.value) || size(self.value) == 0 || !self.name.upperAscii().matches('PASSWORD|PASSWD|SECRET|TOKEN|CREDENTIAL|AUTH_?KEY|PRIVATE_?KEY|API_?KEY')",message="a custom env variable naming a password, secret, token or key takes its value from a Secret (secretKeyRef), not a literal value"
type CustomEnvVar struct {
	// Name is the variable's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*$')",message="environment variable names use letters, digits and '_', such as ECHO_PORT"
	Name string `json:"name"`
	// Value is a literal value.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Value string `json:"value,omitempty"`
	// SecretKeyRef takes the value from a Secret key.
	// +optional
	SecretKeyRef *SecretKeyRef `json:"secretKeyRef,omitempty"`
}

// CustomPort is one port of a custom server.
type CustomPort struct {
	// Name names the port (a DNS label, such as echo or http); locally the port number is in
	// the environment variable BENCHRUN_PORT_<NAME> (upper case, '-' as '_').
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="port names are lower-case letters, digits and '-', starting with a letter, such as echo or http"
	Name string `json:"name"`
	// Port is the port number the server listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
}

// CustomProbe is a custom server's readiness probe: exactly one handler.
// +kubebuilder:validation:XValidation:rule="(has(self.tcpSocket) ? 1 : 0) + (has(self.httpGet) ? 1 : 0) + (has(self.exec) ? 1 : 0) == 1",message="readinessProbe needs exactly one of tcpSocket, httpGet or exec"
type CustomProbe struct {
	// TCPSocket is ready when the named port accepts connections.
	// +optional
	TCPSocket *ProbePort `json:"tcpSocket,omitempty"`
	// HTTPGet is ready when GET path on the named port answers 200-399.
	// +optional
	HTTPGet *HTTPGetProbe `json:"httpGet,omitempty"`
	// Exec is ready when the command exits 0 (locally: run on this machine).
	// +optional
	Exec *ExecProbe `json:"exec,omitempty"`
	// PeriodSeconds is how often the probe runs (default 2).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=300
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`
}

// ProbePort names the port a probe checks.
type ProbePort struct {
	// Port is the name of one of the target's ports (default: the first port).
	// +kubebuilder:validation:MaxLength=15
	// +optional
	Port string `json:"port,omitempty"`
}

// HTTPGetProbe is an HTTP GET readiness probe.
type HTTPGetProbe struct {
	ProbePort `json:",inline"`
	// Path is the request path (default /).
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="readinessProbe.httpGet.path must start with '/'"
	// +optional
	Path string `json:"path,omitempty"`
}

// ExecProbe is a command readiness probe.
type ExecProbe struct {
	// Command is the program and its arguments.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=4096
	Command []string `json:"command"`
}

// HeTuAppSpec is the user's HeTu app: a Python file in a ConfigMap, served for one app
// namespace. Locally (`benchrun run`) the ConfigMap comes from the run file.
type HeTuAppSpec struct {
	// ConfigMapName is the ConfigMap holding the app file (in the run's namespace).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ConfigMapName string `json:"configMapName"`
	// Key is the ConfigMap key with the app file (default app.py).
	// +kubebuilder:default="app.py"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="hetu.app.key must be a ConfigMap key (letters, digits, '-', '_', '.'), such as app.py"
	// +optional
	Key string `json:"key,omitempty"`
	// Namespace is the app namespace HeTu serves (its components and endpoints; default bench).
	// +kubebuilder:default="bench"
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*$')",message="hetu.app.namespace must be a Python identifier, such as bench"
	// +optional
	Namespace string `json:"namespace,omitempty"`
}
