package controllers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// contractConsts reads api/v1alpha1/conditions.go: the Condition* and Reason* constants by
// value (name → value). Every one of them must have a doc comment (the API reference shows it).
func contractConsts(t *testing.T) (conditions, reasons map[string]string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("..", "api", "v1alpha1", "conditions.go"), nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	conditions, reasons = map[string]string{}, map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			lit, ok := v.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s: not a string literal", v.Names[0].Name)
				continue
			}
			val, _ := strconv.Unquote(lit.Value)
			name := v.Names[0].Name
			if v.Doc == nil || !strings.HasPrefix(v.Doc.Text(), name+" ") {
				t.Errorf("api/v1alpha1/conditions.go: %s has no doc comment starting with its name", name)
			}
			switch {
			case strings.HasPrefix(name, "Condition"):
				conditions[val] = name
			case strings.HasPrefix(name, "Reason"):
				reasons[val] = name
			default:
				t.Errorf("api/v1alpha1/conditions.go: %s is neither a Condition* nor a Reason* constant", name)
			}
		}
	}
	if len(conditions) < 8 || len(reasons) < 40 {
		t.Fatalf("conditions.go: %d condition types, %d reasons: parsed wrongly?", len(conditions), len(reasons))
	}
	return conditions, reasons
}

// contractArgs are the calls whose arguments are condition types or reasons: the callee's name
// and the indexes of those arguments.
var contractArgs = map[string][]int{
	"setCondition":          {0, 2},
	"quietCondition":        {2},
	"finish":                {2},
	"setPhase":              {1},
	"event":                 {1},
	"enterCollecting":       {0},
	"baselineFailed":        {1},
	"condition":             {0},
	"Event":                 {2}, // record.EventRecorder
	"Eventf":                {2},
	"AnnotatedEventf":       {3},
	"FindStatusCondition":   {1},
	"IsStatusConditionTrue": {1},
	"RemoveStatusCondition": {1},
}

// TestContractsAreConstants fails when the controllers pass a string literal as a condition type
// or reason (to setCondition, finish, Events, metav1.Condition's Type/Reason, ...), or spell a
// reason's value anywhere instead of its constant: the contracts live in
// api/v1alpha1/conditions.go only.
func TestContractsAreConstants(t *testing.T) {
	conditions, reasons := contractConsts(t)
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		literal := func(e ast.Expr, what string) {
			if lit, ok := ast.Unparen(e).(*ast.BasicLit); ok && lit.Kind == token.STRING {
				t.Errorf("%s: %s %s is a string literal: use a constant of api/v1alpha1/conditions.go", fset.Position(lit.Pos()), what, lit.Value)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				for _, i := range contractArgs[calleeName(n.Fun)] {
					if i < len(n.Args) {
						literal(n.Args[i], calleeName(n.Fun)+" argument")
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && (k.Name == "Type" || k.Name == "Reason") {
					if lit, ok := n.Value.(*ast.BasicLit); ok {
						val, _ := strconv.Unquote(lit.Value)
						if _, known := conditions[val]; known || k.Name == "Reason" {
							literal(n.Value, k.Name+":")
						}
					}
				}
			case *ast.BasicLit:
				val, _ := strconv.Unquote(n.Value)
				if c, ok := reasons[val]; ok && n.Kind == token.STRING {
					t.Errorf("%s: %q is the value of v1alpha1.%s: use the constant", fset.Position(n.Pos()), val, c)
				} else if c, ok := conditions[val]; ok && n.Kind == token.STRING {
					t.Errorf("%s: %q is the value of v1alpha1.%s: use the constant", fset.Position(n.Pos()), val, c)
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("only %d files checked: run from the controllers directory", checked)
	}
}

// calleeName is f of f(...), x.f(...) and x.y.f(...).
func calleeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// TestArgoCDHealthNamesConstants holds config/argocd/health.lua against the constants: every
// condition type it looks up is a Condition* constant and every reason it names (in code or
// comments: "reason X") is a Reason* constant, so renaming one fails here, not in Argo CD.
func TestArgoCDHealthNamesConstants(t *testing.T) {
	conditions, reasons := contractConsts(t)
	lua, err := os.ReadFile(filepath.Join("..", "config", "argocd", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	var types, named []string
	for _, m := range regexp.MustCompile(`condition\("([^"]*)"\)`).FindAllStringSubmatch(string(lua), -1) {
		types = append(types, m[1])
		if _, ok := conditions[m[1]]; !ok {
			t.Errorf("health.lua looks up condition %q: not a Condition* constant of api/v1alpha1/conditions.go", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`reason[s]? ([A-Z][A-Za-z]+)|reason == "([^"]*)"`).FindAllStringSubmatch(string(lua), -1) {
		r := m[1] + m[2]
		named = append(named, r)
		if _, ok := reasons[r]; !ok {
			t.Errorf("health.lua names reason %q: not a Reason* constant of api/v1alpha1/conditions.go", r)
		}
	}
	if len(types) == 0 || len(named) == 0 {
		t.Fatalf("health.lua: found condition types %v and reasons %v: the patterns no longer match it", types, named)
	}
	sort.Strings(types)
	t.Logf("health.lua: condition types %v, reasons %v", types, named)
}

// TestTroubleshootingNamesConstants: every reason the troubleshooting page's tables name (first
// column) and every condition (second column of the four-column tables) is a constant of
// api/v1alpha1/conditions.go.
func TestTroubleshootingNamesConstants(t *testing.T) {
	conditions, reasons := contractConsts(t)
	page, err := os.ReadFile(filepath.Join("..", "docs", "operations", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(page), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.Contains(cells[1], "`") {
			continue
		}
		for _, m := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(cells[1], -1) {
			n++
			if _, ok := reasons[m[1]]; !ok {
				t.Errorf("troubleshooting.md names reason %q: not a Reason* constant", m[1])
			}
		}
		if len(cells) < 6 {
			continue // the Events table: reason and meaning
		}
		for _, m := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(cells[2], -1) {
			if _, ok := conditions[m[1]]; !ok {
				t.Errorf("troubleshooting.md names condition %q: not a Condition* constant", m[1])
			}
		}
	}
	if n < 20 {
		t.Fatalf("troubleshooting.md: only %d reasons found in its tables", n)
	}
}
