package redisrole

import (
	"testing"
	"time"
)

// TestDecide walks the labelling rule's cases.
func TestDecide(t *testing.T) {
	const self, other = "m-0.hl.ns.svc", "r-0.hl.ns.svc"
	silent := func(d time.Duration, n int) Observation {
		return Observation{Answered: true, Silent: d, Failures: n}
	}
	cases := []struct {
		name     string
		labelled string
		obs      Observation
		want     string
	}{
		{"replica answers", Master, Observation{Role: "replica", Answered: true}, Replica},
		{"master, no sentinel", Replica, Observation{Role: "master", Answered: true}, Master},
		{"master, sentinels name it", "", Observation{Role: "master", Answered: true, Master: "M-0.hl.ns.svc."}, Master},
		{"deposed master answers", Master, Observation{Role: "master", Answered: true, Master: other}, None},
		{"deposed master never regains", None, Observation{Role: "master", Answered: true, Master: other}, ""},
		{"promoted, sentinels not switched", Replica, Observation{Role: "master", Answered: true, Master: other}, ""},
		{"one slow reply", Master, silent(time.Second, 1), ""},
		{"silent, too few checks", Master, silent(4*time.Second, 2), ""},
		{"silent, too short", Master, silent(2900*time.Millisecond, 5), ""},
		{"silent master", Master, silent(3*time.Second, 3), None},
		{"never answered (starting)", Master, Observation{Silent: time.Minute, Failures: 100}, ""},
		{"silent master, sentinels moved on", Master, Observation{Answered: true, Silent: time.Second, Failures: 1, Master: other}, None},
		{"silent master, sentinels name it", Master, Observation{Answered: true, Silent: time.Second, Failures: 1, Master: self}, ""},
		{"silent replica keeps its label", Replica, silent(time.Hour, 1000), ""},
		{"silent, labelled none, stays", None, silent(time.Hour, 1000), ""},
	}
	if got := Decide(Master, silent(time.Hour, 1000), self, 0); got != "" {
		t.Errorf("silent master without sentinels (unresponsive 0): %q", got)
	}
	for _, c := range cases {
		if got := Decide(c.labelled, c.obs, self, 3*time.Second); got != c.want {
			t.Errorf("%s: Decide(%q, %+v) = %q, want %q", c.name, c.labelled, c.obs, got, c.want)
		}
	}
}

// TestStateObserve counts silence from the last answer (from the start before any).
func TestStateObserve(t *testing.T) {
	var s State
	t0 := time.Unix(100, 0)
	if o := s.Observe("", false, t0); o.Answered || o.Failures != 1 || o.Silent != 0 {
		t.Fatalf("first silent check: %+v", o)
	}
	if o := s.Observe("", false, t0.Add(time.Second)); o.Answered || o.Failures != 2 || o.Silent != time.Second {
		t.Fatalf("second silent check: %+v", o)
	}
	if o := s.Observe("master", true, t0.Add(2*time.Second)); !o.Answered || o.Failures != 0 || o.Role != "master" {
		t.Fatalf("answer: %+v", o)
	}
	if o := s.Observe("", false, t0.Add(3500*time.Millisecond)); !o.Answered || o.Failures != 1 || o.Silent != 1500*time.Millisecond {
		t.Fatalf("silent after an answer: %+v", o)
	}
}
