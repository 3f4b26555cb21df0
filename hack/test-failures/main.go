// Command test-failures reads `go test -json` on stdin, prints every test's output as `go test
// -v` would (live), and after the run prints again the last lines of each failed test's own
// output, so that a failure's reason is in the tail of a long, interleaved log (CI shows a
// log's head and tail). It exits 1 when a test or a package failed or the stream broke.
//
//	go test -json ./test/e2e/... | go run ./hack/test-failures
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// keep is how many of a failed test's last output lines are printed again.
const keep = 40

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// failure is a failed test with its last output lines.
type failure struct {
	name  string
	lines []string
}

func main() {
	failed, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test-failures:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// run copies the tests' output from in to out, then a summary of the failures; it reports
// whether anything failed.
func run(in io.Reader, out io.Writer) (bool, error) {
	tails := map[string][]string{}
	var failures []failure
	failedPkg := false
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, sc.Text()) // build errors and the like are not JSON
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			fmt.Fprint(out, e.Output)
			if e.Test != "" {
				tails[key] = appendTail(tails[key], e.Output)
			}
		case "fail":
			if e.Test == "" {
				failedPkg = true
				continue
			}
			failures = append(failures, failure{name: e.Test, lines: tails[key]})
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	printFailures(out, failures)
	return failedPkg || len(failures) > 0, nil
}

// appendTail appends line to the last keep lines in tail.
func appendTail(tail []string, line string) []string {
	tail = append(tail, strings.TrimRight(line, "\n"))
	if len(tail) > keep {
		tail = append(tail[:0], tail[len(tail)-keep:]...)
	}
	return tail
}

// printFailures prints each failed test's last output lines, subtests before their parents
// (the order go test reports them in).
func printFailures(out io.Writer, failures []failure) {
	if len(failures) == 0 {
		return
	}
	fmt.Fprintf(out, "\n==== %d failed tests; the last lines of each one's own output ====\n", len(failures))
	for _, f := range failures {
		fmt.Fprintf(out, "\n---- %s\n%s\n", f.name, strings.Join(f.lines, "\n"))
	}
	names := make([]string, len(failures))
	for i, f := range failures {
		names[i] = f.name
	}
	fmt.Fprintf(out, "\n==== failed: %s\n", strings.Join(names, " "))
}
