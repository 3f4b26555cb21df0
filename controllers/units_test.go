package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestHelpers(t *testing.T) {
	if got := parseIndexes("1,3-5, 9"); len(got) != 5 || got[1] != 3 || got[4] != 9 {
		t.Errorf("parseIndexes %v", got)
	}
	evicted := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "low memory"}}
	if got := podFailure(evicted); !strings.Contains(got, "evicted: low memory") {
		t.Errorf("podFailure %q", got)
	}
	if got := podFailure(&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}); got != "" {
		t.Errorf("running pod failed: %q", got)
	}
}
