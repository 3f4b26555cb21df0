package target

import (
	"os/exec"
	"strings"
	"testing"
)

// awks are the awk implementations on this machine (images have mawk, gawk or busybox).
func awks(t *testing.T) [][]string {
	var found [][]string
	for _, a := range [][]string{{"mawk"}, {"gawk"}, {"nawk"}, {"original-awk"}, {"busybox", "awk"}} {
		if _, err := exec.LookPath(a[0]); err == nil {
			found = append(found, a)
		}
	}
	if len(found) == 0 {
		t.Skip("no awk")
	}
	return found
}

// nastyPasswords need escaping in at least one of the files.
var nastyPasswords = []string{
	"plain", "", `p@ss:w/rd#&\1 %41 "q" ?x=1&y`, `ünïcødé 密码 & \\ "x" # @h`, `${HOME}${x:y}$$ \& ${`,
	"tab\tnl\nend\n", "\x01\x1f\x7f", `\`, `&`, `"`, "\\&\\\\&",
}

// TestAppendPasswordConf: every awk writes the directives with the password quoted as
// redis.conf's parser (sdssplitargs) reads it back, and nothing without a password.
func TestAppendPasswordConf(t *testing.T) {
	unquote := func(s string) string { // sdssplitargs inside double quotes, the escapes we emit
		r := strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n", `\r`, "\r")
		return r.Replace(s)
	}
	for _, awk := range awks(t) {
		for _, p := range nastyPasswords {
			script := strings.Replace(appendPasswordConf("/dev/stdout", "requirepass", "sentinel auth-pass mymaster"), "awk", strings.Join(awk, " "), 1)
			cmd := exec.Command("sh", "-c", script)
			cmd.Env = []string{"PATH=/usr/bin:/bin", PasswordEnv + "=" + p}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", awk[0], err)
			}
			if p == "" {
				if len(out) != 0 {
					t.Errorf("%s: %q without a password", awk[0], out)
				}
				continue
			}
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(lines) != 2 {
				t.Fatalf("%s, %q: %q", awk[0], p, out)
			}
			for i, prefix := range []string{`requirepass "`, `sentinel auth-pass mymaster "`} {
				arg, ok := strings.CutPrefix(lines[i], prefix)
				if !ok || !strings.HasSuffix(arg, `"`) || unquote(strings.TrimSuffix(arg, `"`)) != p {
					t.Errorf("%s, %q: line %q", awk[0], p, lines[i])
				}
			}
		}
	}
}
