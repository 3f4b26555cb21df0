// Command conditions-doc prints the "Condition types and reasons" section of
// docs/reference/api.md from api/v1alpha1/conditions.go: one table per const block, each
// constant's value and its doc comment (crd-ref-docs shows only typed enum constants; these
// are untyped strings so that they fit metav1.Condition's fields). hack/docs.sh api runs it.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
)

func main() {
	path := "api/v1alpha1/conditions.go"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print("\n## Condition types and reasons\n\n")
	fmt.Print("The values of `status.conditions[].type` and `.reason` and of the run's Event reasons, from\n")
	fmt.Print("`api/v1alpha1/conditions.go` (Go constants `v1alpha1.Condition*` and `v1alpha1.Reason*`):\n")
	fmt.Print("match on these in Argo CD health checks, `kubectl wait` and alerts. A condition that becomes True, or False\n")
	fmt.Print("with a reason other than `Waiting`, emits an Event whose reason is its type followed by its reason (e.g.\n")
	fmt.Print("`TargetReadyTimeout`), except `Succeeded`: the phase Event (reason: the run's outcome) reports it.\n")
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST || g.Doc == nil {
			continue
		}
		fmt.Printf("\n#### %s\n\n| Value | Constant | Description |\n| --- | --- | --- |\n", strings.TrimSuffix(strings.TrimSpace(g.Doc.Text()), "."))
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			lit, ok := v.Values[0].(*ast.BasicLit)
			if !ok {
				continue
			}
			val, _ := strconv.Unquote(lit.Value)
			doc := strings.Join(strings.Fields(v.Doc.Text()), " ")
			doc = strings.TrimPrefix(doc, v.Names[0].Name+" ")
			if doc != "" {
				doc = strings.ToUpper(doc[:1]) + doc[1:]
			}
			fmt.Printf("| `%s` | `%s` | %s |\n", val, v.Names[0].Name, strings.ReplaceAll(doc, "|", "\\|"))
		}
	}
}
