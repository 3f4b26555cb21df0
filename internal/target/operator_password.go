package target

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// The OT redis-operator (v0.23.0, `/operator agent bootstrap` in its init-config container)
// writes the password unquoted: `masterauth <pw>` and `requirepass <pw>` into redis.conf,
// `sentinel auth-pass <group> <pw>` into sentinel.conf (internal/agent/util.Config.Append
// joins the words with spaces). Redis reads those lines with sdssplitargs, which ends an
// unquoted argument at a space, tab, newline or carriage return and starts a quoted part at
// " or ': a password with any of these crash-loops the server ("wrong number of arguments",
// "unbalanced quotes") or silently becomes another password, and a newline injects config
// lines. Its default probes run `redis-cli ... -a ${REDIS_PASSWORD} ping` unquoted in sh, so
// the same whitespace splits the word (and *, ?, [ may glob). benchrun fixes both where it
// can: an init container of ours (the operator's user init container, which runs after
// init-config with the config volume at /etc/redis) replaces exactly those lines with
// quoted ones (confQuoteAwk), and the Redis pods get probes that quote the password.

// operatorConfFix is, per config file the operator generates, the directive prefix before
// the password on its line(s).
var operatorConfFix = map[bool]struct{ file, lines string }{
	false: {"/etc/redis/redis.conf", `"\nmasterauth " x "\nrequirepass " x "\n"`},
	true:  {"/etc/redis/sentinel.conf", `"\nsentinel auth-pass ` + masterGroup + ` " x "\n"`},
}

// operatorPasswordScript is the shell command of our init container: it rewrites the
// password line(s) of the operator's redis.conf (sentinel false) or sentinel.conf (true)
// from the raw $REDIS_PASSWORD to the quoted form (passwordLineFix).
func operatorPasswordScript(sentinel bool) string {
	fix := operatorConfFix[sentinel]
	return passwordLineFix(fix.file, fix.lines)
}

// passwordLineFix is a shell command replacing, in file, the text of the awk expression
// lines with x the raw password by the same text with x the quoted password. It finds the
// exact text the operator wrote (index, never a regular expression or gsub), so a password
// with newlines is replaced whole, and fails, naming the file, when that text is not there
// (another operator version) rather than start a server with a broken password. Nothing
// happens without a password (the operator then writes no password line).
func passwordLineFix(file, lines string) string {
	prog := confQuoteAwk + `
BEGIN {
  f = "` + file + `"; p = ENVIRON["` + PasswordEnv + `"]
  c = ""; n = 0
  while ((getline l < f) > 0) c = c (n++ ? "\n" : "") l
  close(f)
  x = p; s = ` + lines + `
  x = "\"" q(p) "\""; t = ` + lines + `
  i = index(c, s)
  if (i == 0) { print "benchrun: the redis-operator wrote no password line benchrun knows in " f > "/dev/stderr"; exit 1 }
  printf "%s\n", substr(c, 1, i - 1) t substr(c, i + length(s)) > f
}`
	return fmt.Sprintf("[ -z \"$%s\" ] || LC_ALL=C awk '%s'\n", PasswordEnv, prog)
}

// operatorProbe is the Redis pods' readiness and liveness probe with a password: the
// operator's own check (PONG from redis-cli) with the password quoted and given through
// REDISCLI_AUTH instead of an unquoted -a word. A server under a benchmark on a saturated
// node answers late: the probe waits 5 s (with Kubernetes' default, 1 s, a busy node's server
// could be restarted mid-run) and the liveness probe restarts only after a minute of failures.
func operatorProbe(liveness bool) map[string]any {
	cmd := `RESP="$(REDISCLI_AUTH="$` + PasswordEnv + `" redis-cli -p "${REDIS_PORT:-6379}" ping)"; [ "$RESP" = PONG ]`
	p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-ec", cmd}}},
		TimeoutSeconds: 5, PeriodSeconds: 10, FailureThreshold: 3}
	if liveness {
		p.FailureThreshold = 6
	}
	return toMap(p)
}
