package naming

import (
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	if n := Name("run-g1", "redis-master"); n != "run-g1-redis-master" {
		t.Fatalf("short name changed: %q", n)
	}
	long := strings.Repeat("a", 60)
	if n := Name(long, "redis-master"); len(n) > 63 || n == Name(long, "redis-replica") {
		t.Fatalf("name %q", n)
	}
}

func TestShortNameAndPrefix(t *testing.T) {
	long := strings.Repeat("x", 100)
	if n := ShortName(long); len(n) > 30 || n == ShortName(long+"y") {
		t.Errorf("ShortName %q", n)
	}
	if p := Prefix("myrun", 2); p != "myrun-g2" {
		t.Errorf("Prefix %q", p)
	}
	if l := RunLabels(long, 3); l[LabelRun] != ShortName(long) || l[LabelGeneration] != "3" {
		t.Errorf("RunLabels %v", l)
	}
}

func TestSecurityContexts(t *testing.T) {
	if p := PodSecurityContext(); !*p.RunAsNonRoot || *p.RunAsUser != 65532 {
		t.Errorf("pod security context %+v", p)
	}
	if c := ContainerSecurityContext(); *c.AllowPrivilegeEscalation || c.Capabilities.Drop[0] != "ALL" {
		t.Errorf("container security context %+v", c)
	}
}
