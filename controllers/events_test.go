package controllers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/target"
)

// podSecurityMessage is what the StatefulSet controller reports when PodSecurity rejects
// the redis-operator's pods (long: every violated rule).
const podSecurityMessage = `create Pod ot-g1-redis-0 in StatefulSet ot-g1-redis failed error: pods "ot-g1-redis-0" is forbidden: ` +
	`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (containers "init-config", "redis" must set ` +
	`securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (containers "init-config", "redis" must set ` +
	`securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or containers "init-config", "redis" must set ` +
	`securityContext.runAsNonRoot=true), seccompProfile (pod or containers "init-config", "redis" must set ` +
	"securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")\n(and more rules that would make this message even longer)"

// warningEvent creates an Event on an object of the namespace, at the fake clock plus offset.
func (e *env) warningEvent(name, typ, kind, object, reason, message string, offset time.Duration, count int32) {
	e.t.Helper()
	at := metav1.NewTime(e.clock.Now().Add(offset))
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: object, Namespace: e.ns, APIVersion: "v1"},
		Type:           typ, Reason: reason, Message: message, Count: count,
		FirstTimestamp: at, LastTimestamp: at, Source: corev1.EventSource{Component: "statefulset-controller"}}
	if err := k8sClient.Create(e.ctx, ev); err != nil {
		e.t.Fatal(err)
	}
}

// TestTargetWarningInCondition: a redis-operator target whose StatefulSet cannot create
// pods (PodSecurity) says why in TargetReady while waiting and in the Failed reason after
// timeouts.targetReady: the newest Warning Event of its objects, on one line, truncated.
func TestTargetWarningInCondition(t *testing.T) {
	e := newEnv(t)
	installOperatorCRDs(t)
	const password = "s3cr3t-Pa55-value"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "auth", Namespace: e.ns}, StringData: map[string]string{"password": password}}
	if err := k8sClient.Create(e.ctx, secret); err != nil {
		t.Fatal(err)
	}
	run := e.redisRun("ot", 1)
	run.Spec.Target.Redis = &v1alpha1.RedisTarget{Mode: v1alpha1.RedisHA, Provider: v1alpha1.ProviderRedisOperator,
		Replicas: ptr.To[int32](2), Sentinels: ptr.To[int32](3), PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "auth", Key: "password"}}
	run.Spec.Timeouts.TargetReady = &metav1.Duration{Duration: time.Minute}
	e.create(run)
	run = e.until(run.Name, v1alpha1.PhaseProvisioning)
	operatorStatefulSets(t, e, run)
	sts := targetName(run, "redis")

	// Not ours (another StatefulSet, a Normal Event), or older: not shown.
	e.warningEvent("other", corev1.EventTypeWarning, "StatefulSet", "other-redis", "FailedCreate", "not this run", 20*time.Second, 1)
	e.warningEvent("normal", corev1.EventTypeNormal, "StatefulSet", sts, "SuccessfulCreate", "create Pod ok", 20*time.Second, 1)
	e.warningEvent("stale", corev1.EventTypeWarning, "StatefulSet", sts, "FailedCreate", "from an earlier run", -time.Hour, 1)
	e.warningEvent("older", corev1.EventTypeWarning, "Pod", sts+"-sentinel-0", "FailedScheduling", "0/1 nodes are available", 5*time.Second, 1)
	e.reconcile(run.Name)
	c := meta.FindStatusCondition(e.get(run.Name).Status.Conditions, v1alpha1.ConditionTargetReady)
	if c == nil || !strings.Contains(c.Message, "0/3 ready; last warning: Pod/"+sts+"-sentinel-0 FailedScheduling: 0/1 nodes are available") {
		t.Fatalf("TargetReady %+v", c)
	}

	e.warningEvent("psa", corev1.EventTypeWarning, "StatefulSet", sts, "FailedCreate", podSecurityMessage, 10*time.Second, 7)
	e.clock.Step(30 * time.Second)
	e.reconcile(run.Name)
	run = e.get(run.Name)
	if run.Status.Phase != v1alpha1.PhaseProvisioning {
		t.Fatalf("phase %s", run.Status.Phase)
	}
	c = meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionTargetReady)
	want := "StatefulSet " + sts + ": 0/3 ready; last warning: StatefulSet/" + sts + ` FailedCreate (7 times): create Pod ot-g1-redis-0 in StatefulSet ot-g1-redis failed error: pods "ot-g1-redis-0" is forbidden: violates PodSecurity "restricted:latest"`
	if c == nil || c.Status != metav1.ConditionFalse || !strings.HasPrefix(c.Message, want) || !strings.HasSuffix(c.Message, "…") ||
		strings.Contains(c.Message, "\n") || strings.Contains(c.Message, "even longer") {
		t.Fatalf("TargetReady message %q", c.Message)
	}
	if _, quoted, _ := strings.Cut(c.Message, "(7 times): "); len(quoted) > maxWarningMessage {
		t.Fatalf("Event message not cut to %d bytes: %d", maxWarningMessage, len(quoted))
	}

	e.clock.Step(31 * time.Second)
	run = e.until(run.Name, v1alpha1.PhaseFailed)
	done := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionSucceeded)
	if done.Reason != "TargetNotReady" || !strings.HasPrefix(done.Message, "target not ready after 1m0s: "+want) {
		t.Fatalf("Succeeded %+v", done)
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionTargetReady); c.Reason != "Timeout" || !strings.Contains(c.Message, "violates PodSecurity") {
		t.Fatalf("TargetReady %+v", c)
	}
	found := false
	for _, ev := range e.events {
		found = found || (strings.Contains(ev, "TargetNotReady") && strings.Contains(ev, "violates PodSecurity"))
	}
	if !found {
		t.Fatalf("no TargetNotReady Event with the warning: %q", e.events)
	}
	b, _ := json.Marshal(run.Status)
	if strings.Contains(string(b), password) || strings.Contains(strings.Join(e.events, "\n"), password) {
		t.Fatal("secret value in the status or Events")
	}
}

// TestTargetWarningDeployment: for a HeTu target, Warnings on the Deployment's ReplicaSets
// and pods and on the back end's StatefulSet pods count; a look-alike name does not.
func TestTargetWarningDeployment(t *testing.T) {
	e := newEnv(t)
	run := e.redisRun("hetu", 1)
	run.Spec.Target = v1alpha1.TargetSpec{HeTu: &v1alpha1.HeTuTarget{Backend: v1alpha1.HeTuBackend{Redis: &v1alpha1.RedisTarget{
		Mode: v1alpha1.RedisSingle, Provider: v1alpha1.ProviderBuiltin}}}}
	run.Spec.Load.Scenarios = []v1alpha1.Scenario{{Name: "hello", Type: v1alpha1.ScenarioHeTuHelloWorld}}
	e.create(run)
	run = e.until(run.Name, v1alpha1.PhaseProvisioning)
	hetu, master := targetName(run, "hetu"), targetName(run, "redis-master")
	message := func() string {
		e.reconcile(run.Name)
		return meta.FindStatusCondition(e.get(run.Name).Status.Conditions, v1alpha1.ConditionTargetReady).Message
	}

	e.warningEvent("pod", corev1.EventTypeWarning, "Pod", master+"-0", "BackOff", "Back-off restarting failed container redis", time.Second, 3)
	if m := message(); m != "StatefulSet "+master+": 0/1 ready; last warning: Pod/"+master+"-0 BackOff (3 times): Back-off restarting failed container redis" {
		t.Fatalf("message %q", m)
	}
	e.warningEvent("lookalike", corev1.EventTypeWarning, "Pod", master+"-x-0", "BackOff", "not a pod of the target", 2*time.Second, 1)
	e.warningEvent("rs", corev1.EventTypeWarning, "ReplicaSet", hetu+"-5d8f7c9b4", "FailedCreate", `pods "`+hetu+`-5d8f7c9b4-abcde" is forbidden: exceeded quota`, 3*time.Second, 1)
	if m := message(); !strings.HasSuffix(m, "last warning: ReplicaSet/"+hetu+"-5d8f7c9b4 FailedCreate: pods \""+hetu+"-5d8f7c9b4-abcde\" is forbidden: exceeded quota") {
		t.Fatalf("message %q", m)
	}
	e.warningEvent("hetu-pod", corev1.EventTypeWarning, "Pod", hetu+"-5d8f7c9b4-abcde", "Failed", "Error: ErrImagePull", 4*time.Second, 1)
	if m := message(); !strings.HasSuffix(m, "last warning: Pod/"+hetu+"-5d8f7c9b4-abcde Failed: Error: ErrImagePull") {
		t.Fatalf("message %q", m)
	}
	e.markTargetReady()
	run = e.until(run.Name, v1alpha1.PhaseStarting)
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionTargetReady); c.Status != metav1.ConditionTrue || strings.Contains(c.Message, "warning") {
		t.Fatalf("TargetReady %+v", c)
	}
}

// TestInvolves: which object names belong to a workload.
func TestInvolves(t *testing.T) {
	ws := []target.Workload{{Kind: "StatefulSet", Name: "r-g1-redis"}, {Kind: "Deployment", Name: "r-g1-hetu"}, {Kind: "RedisReplication", Name: "r-g1-redis"}}
	for _, c := range []struct {
		kind, name string
		want       bool
	}{
		{"StatefulSet", "r-g1-redis", true},
		{"RedisReplication", "r-g1-redis", true},
		{"RedisSentinel", "r-g1-redis", false},
		{"Pod", "r-g1-redis-0", true},
		{"Pod", "r-g1-redis-12", true},
		{"Pod", "r-g1-redis-sentinel-0", false},
		{"Pod", "r-g1-redis", false},
		{"ReplicaSet", "r-g1-hetu-5d8f7c9b4", true},
		{"Pod", "r-g1-hetu-5d8f7c9b4-abcde", true},
		{"Pod", "r-g1-hetu-x-g1-hetu-abcde", false},
		{"ReplicaSet", "r-g1-hetu-x-g1", false},
		{"Deployment", "r-g1-hetu", true},
		{"StatefulSet", "r-g1-hetu", false},
	} {
		if got := involves(ws, corev1.ObjectReference{Kind: c.kind, Name: c.name}); got != c.want {
			t.Errorf("%s/%s: %v", c.kind, c.name, got)
		}
	}
	if got := oneLine("a\n\tb  c", 100); got != "a b c" {
		t.Errorf("oneLine %q", got)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for want, ev := range map[time.Duration]*corev1.Event{
		3: {LastTimestamp: metav1.NewTime(t0.Add(3)), ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t0.Add(9))}},
		4: {EventTime: metav1.NewMicroTime(t0.Add(1)), Series: &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(t0.Add(4))}},
		5: {EventTime: metav1.NewMicroTime(t0.Add(5))},
		6: {ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t0.Add(6))}},
	} {
		if got := eventTime(ev).Sub(t0); got != want {
			t.Errorf("eventTime %d, want %d", got, want)
		}
	}
	for _, limit := range []int{9, 10} {
		if got := oneLine(strings.Repeat("é", 10), limit); got != "ééé…" {
			t.Errorf("oneLine cut to %d: %q", limit, got)
		}
	}
}
