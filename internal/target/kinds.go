package target

import (
	"context"
	"fmt"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// KindInfo is everything benchrun knows about one target kind, in one entry: the spec field
// that selects it, its label, its endpoint roles, its cluster objects, its local processes and
// how the load scripts reach it. A new kind adds an entry to Kinds (and its own file here and
// in internal/local); nothing else switches on the kind.
type KindInfo struct {
	// Field is the spec.target field that selects the kind: hetu, redis, external or custom.
	Field string
	// Selected tells whether spec selects this kind.
	Selected func(spec *v1alpha1.TargetSpec) bool
	// Label is the kind label of spec, as status.target.kind shows it (hetu, redis/single,
	// valkey/ha, external/redis, custom): the one spelling, also the cluster Target's Kind.
	Label func(spec *v1alpha1.TargetSpec) string
	// Roles are the endpoint roles the kind can publish (a custom target adds custom-<port>).
	Roles []string
	// Cluster builds the kind's Kubernetes objects (target.New).
	Cluster func(spec *v1alpha1.TargetSpec, o Options) (Target, error)
	// Local builds the kind's local processes through b (internal/local implements it).
	Local func(spec *v1alpha1.TargetSpec, b LocalBuilder) (LocalTarget, error)
	// Wire maps the kind's endpoints to the load scripts' addresses and secret env vars.
	Wire func(spec *v1alpha1.TargetSpec, endpoints []v1alpha1.Endpoint) (Addresses, []SecretEnv)
}

// Kinds are the target kinds, in the order a spec's fields are checked.
var Kinds = []KindInfo{
	{Field: "hetu", Selected: func(s *v1alpha1.TargetSpec) bool { return s.HeTu != nil },
		Label:   func(*v1alpha1.TargetSpec) string { return hetuLabel },
		Roles:   []string{RoleHeTu, RoleRedis, RoleMaster, RoleReplica, RoleSentinel, RoleProxy},
		Cluster: func(s *v1alpha1.TargetSpec, o Options) (Target, error) { return nilIfErr(newHeTu(s.HeTu, o)) },
		Local:   func(s *v1alpha1.TargetSpec, b LocalBuilder) (LocalTarget, error) { return b.HeTu(s.HeTu) },
		Wire:    wireHeTu},
	{Field: "redis", Selected: func(s *v1alpha1.TargetSpec) bool { return s.Redis != nil },
		Label: func(s *v1alpha1.TargetSpec) string { return redisKindLabel(s.Redis) },
		Roles: []string{RoleRedis, RoleMaster, RoleReplica, RoleSentinel, RoleProxy},
		Cluster: func(s *v1alpha1.TargetSpec, o Options) (Target, error) {
			return nilIfErr(newRedis(s.Redis, o, "redis"))
		},
		Local: func(s *v1alpha1.TargetSpec, b LocalBuilder) (LocalTarget, error) { return b.Redis(s.Redis) },
		Wire:  wireRedis},
	{Field: "external", Selected: func(s *v1alpha1.TargetSpec) bool { return s.External != nil },
		Label:   func(s *v1alpha1.TargetSpec) string { return externalLabel(s.External) },
		Roles:   externalRoles(), // an external endpoint's role is its kind
		Cluster: func(s *v1alpha1.TargetSpec, _ Options) (Target, error) { return &external{spec: s.External}, nil },
		Local:   func(s *v1alpha1.TargetSpec, b LocalBuilder) (LocalTarget, error) { return b.External(s.External) },
		Wire:    wireExternal},
	{Field: "custom", Selected: func(s *v1alpha1.TargetSpec) bool { return s.Custom != nil },
		Label:   func(*v1alpha1.TargetSpec) string { return customLabel },
		Roles:   []string{RoleCustom},
		Cluster: func(s *v1alpha1.TargetSpec, o Options) (Target, error) { return nilIfErr(newCustom(s.Custom, o)) },
		Local:   func(s *v1alpha1.TargetSpec, b LocalBuilder) (LocalTarget, error) { return b.Custom(s.Custom) },
		Wire:    wireCustom},
}

// KindOf is the kind spec selects: the one lookup of a target's kind.
func KindOf(spec *v1alpha1.TargetSpec) (*KindInfo, error) {
	for i := range Kinds {
		if Kinds[i].Selected(spec) {
			return &Kinds[i], nil
		}
	}
	return nil, fmt.Errorf("target: set one of spec.target.hetu, redis, external or custom (e.g. redis: {mode: single})")
}

// Label is the kind label of spec (status.target.kind: redis/single, valkey/ha, hetu,
// external/redis, custom), "" when it selects no kind.
func Label(spec *v1alpha1.TargetSpec) string {
	if k, err := KindOf(spec); err == nil {
		return k.Label(spec)
	}
	return ""
}

// DryRunEndpoints are placeholder endpoints (127.0.0.1:1) of every role spec's kind can
// publish, to plan a run before its target exists (benchrun run's checks).
func DryRunEndpoints(spec *v1alpha1.TargetSpec) []v1alpha1.Endpoint {
	k, err := KindOf(spec)
	if err != nil {
		return nil
	}
	eps := make([]v1alpha1.Endpoint, 0, len(k.Roles))
	for _, r := range k.Roles {
		eps = append(eps, v1alpha1.Endpoint{Role: r, Address: "127.0.0.1:1"})
	}
	return eps
}

// LocalTarget is a target running on this machine (local.Target): benchrun run's processes.
type LocalTarget interface {
	// Start starts the target and returns once it is ready; it fails when ctx ends first.
	// After an error, Stop still has to be called.
	Start(ctx context.Context) error
	// Endpoints are the addresses the runners use, by role (as status.target.endpoints).
	Endpoints() []v1alpha1.Endpoint
	// Stop stops every process started and removes temporary data. It is safe to call
	// more than once and after a failed Start.
	Stop() error
}

// LocalBuilder builds each kind's local processes; internal/local implements it, so that
// this package does not import it.
type LocalBuilder interface {
	// HeTu builds a HeTu server (and its Redis back end).
	HeTu(spec *v1alpha1.HeTuTarget) (LocalTarget, error)
	// Redis builds Redis or Valkey servers (single, or ha with replicas and sentinels).
	Redis(spec *v1alpha1.RedisTarget) (LocalTarget, error)
	// External checks an existing endpoint.
	External(spec *v1alpha1.ExternalTarget) (LocalTarget, error)
	// Custom runs a custom target's command.
	Custom(spec *v1alpha1.CustomTarget) (LocalTarget, error)
}

// nilIfErr returns a nil Target (not a typed nil) with err.
func nilIfErr[T Target](t T, err error) (Target, error) {
	if err != nil {
		return nil, err
	}
	return t, nil
}
