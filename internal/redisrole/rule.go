package redisrole

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/benchrun/benchrun/internal/resp"
)

// Label values.
const (
	// Master is the label of the pod the master Service selects.
	Master = "master"
	// Replica is the label of the pods the replica Service selects.
	Replica = "replica"
	// None is the label of a pod neither Service selects: a master that stopped answering
	// or that the sentinels no longer name.
	None = "none"
)

// MinSilentChecks is how many checks in a row must go unanswered (besides Unresponsive
// elapsing) before a silent master loses its label.
const MinSilentChecks = 3

// Observation is what one check saw.
type Observation struct {
	// Role is the server's answer to ROLE ("" when it did not answer).
	Role string
	// Answered says whether the server has answered ROLE since the sidecar started.
	Answered bool
	// Silent is how long the server has not answered (0 when it answered this check).
	Silent time.Duration
	// Failures counts the checks in a row without an answer.
	Failures int
	// Master is the host the sentinels name as master in their newest configuration (the
	// highest config epoch among those answering; "" when none answered or they disagree).
	Master string
	// Err says why the server did not answer.
	Err string
}

// State carries what Observe needs between checks.
type State struct {
	answered   bool
	lastAnswer time.Time
	failures   int
	started    time.Time
}

// Observe records one ROLE check (ok: the server answered role) at now.
func (s *State) Observe(role string, ok bool, now time.Time) Observation {
	if s.started.IsZero() {
		s.started = now
	}
	if ok {
		s.answered, s.lastAnswer, s.failures = true, now, 0
		return Observation{Role: role, Answered: true}
	}
	s.failures++
	since := s.lastAnswer
	if !s.answered {
		since = s.started
	}
	return Observation{Answered: s.answered, Silent: now.Sub(since), Failures: s.failures}
}

// Decide is the labelling rule. It returns the label the pod should carry, or "" to keep
// labelled as it is:
//
//   - a server answering replica is labelled replica;
//   - a server answering master is labelled master, unless the sentinels' newest
//     configuration names another host: then a pod labelled master loses the label (none: a
//     deposed master, continued after a failover and not reconfigured yet) and any other
//     keeps its label (a replica just promoted, until the sentinels switch to it);
//   - a silent server keeps its label, except a master: it loses it (none) as soon as the
//     sentinels' newest configuration names another host, or once it has answered before and
//     then not for unresponsive and MinSilentChecks checks in a row (unresponsive 0: never;
//     the Follower uses it only with sentinels, which promote a replica in its place). One
//     slow reply (a check times out after CheckTimeout, well below unresponsive) never costs
//     a master its label.
//
// The pod regains master only from its own server's answer and never against the sentinels'
// newest configuration, so two pods are labelled master together at most until the old
// master's sidecar either hears the sentinels' new configuration (one Interval plus
// CheckTimeout after any sentinel it reaches knows it) or unresponsive has passed.
func Decide(labelled string, o Observation, self string, unresponsive time.Duration) string {
	deposed := o.Master != "" && !sameHost(o.Master, self)
	switch o.Role {
	case "replica":
		return Replica
	case "master":
		switch {
		case !deposed:
			return Master
		case labelled == Master:
			return None
		}
		return "" // promoted, the sentinels not switched yet; or deposed, already off
	}
	if labelled != Master {
		return ""
	}
	if deposed || (unresponsive > 0 && o.Answered && o.Silent >= unresponsive && o.Failures >= MinSilentChecks) {
		return None
	}
	return ""
}

// sameHost compares host names as DNS does (case-insensitive, trailing dot optional).
func sameHost(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// SentinelMaster asks each sentinel address for group's master and returns the host named in
// the newest configuration: the answer with the highest config epoch, as sentinels
// themselves resolve conflicting configurations. It returns "" when no sentinel answered or
// answers of the same epoch disagree.
func SentinelMaster(ctx context.Context, sentinels []string, group string) string {
	type answer struct {
		host  string
		epoch int64
		ok    bool
	}
	answers := make(chan answer, len(sentinels))
	for _, addr := range sentinels {
		go func() {
			host, epoch, err := askSentinel(ctx, addr, group)
			answers <- answer{host, epoch, err == nil}
		}()
	}
	best, bestEpoch := "", int64(-1)
	for range sentinels {
		a := <-answers
		switch {
		case !a.ok:
		case a.epoch > bestEpoch:
			best, bestEpoch = a.host, a.epoch
		case a.epoch == bestEpoch && !sameHost(a.host, best):
			best = ""
		}
	}
	return best
}

// askSentinel returns the master host a sentinel names for group (its current address, which
// is already the promoted replica while the sentinel leading a failover reconfigures the
// other replicas) and the config epoch of its configuration, on one connection.
func askSentinel(ctx context.Context, addr, group string) (string, int64, error) {
	replies, err := resp.Pipeline(ctx, addr, "",
		[]string{"SENTINEL", "MASTER", group}, []string{"SENTINEL", "GET-MASTER-ADDR-BY-NAME", group})
	if err != nil {
		return "", 0, err
	}
	epoch := int64(-1)
	fields := strings.Split(replies[0], "\n")
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] == "config-epoch" {
			epoch, err = strconv.ParseInt(fields[i+1], 10, 64)
			if err != nil {
				return "", 0, err
			}
		}
	}
	host, _, _ := strings.Cut(replies[1], "\n")
	if epoch < 0 || host == "" {
		return "", 0, errNoMaster
	}
	return host, epoch, nil
}

// errNoMaster: a sentinel answered without a master address or config epoch.
var errNoMaster = errors.New("sentinel named no master")
