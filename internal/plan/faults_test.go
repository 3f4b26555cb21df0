package plan

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// TestFaultWindowsEnv: every runner of a run with faults is told their offsets by scenario
// (what its k6 output reads back with results.ParseFaultOffsets); a run without faults is not.
func TestFaultWindowsEnv(t *testing.T) {
	run := hetuRun()
	for i := range 2 {
		inv, err := ForRunner(run, hetuEndpoints, i, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := inv.Env[EnvFaultWindows]; ok {
			t.Fatalf("runner %d of a run without faults: %s", i, inv.Env[EnvFaultWindows])
		}
	}
	run.Spec.Faults = []v1alpha1.Fault{
		{Scenario: "get", Offset: metav1.Duration{Duration: 20 * time.Second}, Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleMaster},
		{Scenario: "upsert", Offset: metav1.Duration{Duration: 1500 * time.Millisecond}, Action: v1alpha1.FaultRestart, Role: v1alpha1.FaultRoleHeTu},
		{Scenario: "get", Offset: metav1.Duration{Duration: 40 * time.Second}, Action: v1alpha1.FaultKill, Role: v1alpha1.FaultRoleMaster},
	}
	for i := range 2 {
		inv, err := ForRunner(run, hetuEndpoints, i, 2)
		if err != nil {
			t.Fatal(err)
		}
		got, err := results.ParseFaultOffsets(inv.Env[EnvFaultWindows])
		if err != nil || len(got) != 2 || len(got["get"]) != 2 || got["get"][1] != 40*time.Second || got["upsert"][0] != 1500*time.Millisecond {
			t.Errorf("runner %d: %v, %v (env %q)", i, got, err, inv.Env[EnvFaultWindows])
		}
	}
	if _, err := results.ParseFaultOffsets("{"); err == nil {
		t.Error("a malformed value parsed")
	}
}
