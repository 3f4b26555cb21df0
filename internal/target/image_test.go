package target

import (
	"testing"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

func TestWithTag(t *testing.T) {
	for in, want := range map[string]string{
		"redis:8.2":                     "redis:7.4",
		"redis":                         "redis:7.4",
		"valkey/valkey:9.0":             "valkey/valkey:7.4",
		"host:5000/redis":               "host:5000/redis:7.4",
		"host:5000/redis:8@sha256:abcd": "host:5000/redis:7.4",
		"redis@sha256:abcd":             "redis:7.4",
	} {
		if got := WithTag(in, "7.4"); got != want {
			t.Errorf("WithTag(%q) = %q, want %q", in, got, want)
		}
	}
}

// The version shorthand picks a tag of the operator's default image for the engine; an
// explicit image wins (CEL rejects both at admission).
func TestRedisVersion(t *testing.T) {
	o := Options{Images: Images{Redis: "redis:8.2", Valkey: "valkey/valkey:9.0"}}
	for _, c := range []struct {
		spec v1alpha1.RedisTarget
		want string
	}{
		{v1alpha1.RedisTarget{}, "redis:8.2"},
		{v1alpha1.RedisTarget{Version: "7.4"}, "redis:7.4"},
		{v1alpha1.RedisTarget{Engine: v1alpha1.EngineValkey, Version: "8.1"}, "valkey/valkey:8.1"},
		{v1alpha1.RedisTarget{Image: "my/redis:x"}, "my/redis:x"},
	} {
		r, err := newRedis(&c.spec, o, "redis")
		if err != nil {
			t.Fatal(err)
		}
		if r.image != c.want {
			t.Errorf("%+v: image %q, want %q", c.spec, r.image, c.want)
		}
	}
}
