package target

import (
	"fmt"
	"strings"
)

// Passwords reach target pods only through the environment ($REDIS_PASSWORD from the
// Secret); the container scripts write them into config files with the escaping each format
// needs, in awk (present in every Redis, Valkey and proxy image; never gsub, whose
// replacement text treats & and \ specially). redis-server and redis-sentinel accept any
// byte string this way; the proxy's limits are in proxy.go.

// confQuoteAwk defines the awk function q(s): s as the inside of a double-quoted redis.conf or
// sentinel.conf argument (Redis' sdssplitargs: backslash and double quote escaped, newline and
// carriage return as \n and \r, every other byte, UTF-8 included, as itself). Run the
// program with LC_ALL=C so that awk counts bytes, not characters.
const confQuoteAwk = `function q(s,   o, i, c) {
  o = ""
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (c == "\\" || c == "\"") o = o "\\" c
    else if (c == "\n") o = o "\\n"
    else if (c == "\r") o = o "\\r"
    else o = o c
  }
  return o
}`

// appendPasswordConf is a shell command appending to file one line per directive: the
// directive then the password of $REDIS_PASSWORD as a quoted argument. It appends nothing
// when the password is empty. Directives are constants without quotes, % or backslashes.
func appendPasswordConf(file string, directives ...string) string {
	var prog strings.Builder
	prog.WriteString(confQuoteAwk)
	prog.WriteString("\nBEGIN {\n  p = q(ENVIRON[\"" + PasswordEnv + "\"])\n")
	for _, d := range directives {
		fmt.Fprintf(&prog, "  printf \"%s \\\"%%s\\\"\\n\", p\n", d)
	}
	prog.WriteString("}")
	return fmt.Sprintf("if [ -n \"$%s\" ]; then LC_ALL=C awk '%s' >> %s; fi\n", PasswordEnv, prog.String(), file)
}
