// Package dashboards reads the chart's Grafana dashboards (charts/benchrun/dashboards/*.json)
// for the tests that run their queries on a real Prometheus: the PromQL of every template
// variable, panel target and annotation, with the template variables substituted.
package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Run and History are the file names of the chart's two dashboards.
const (
	Run     = "benchrun-run.json"
	History = "benchrun-history.json"
)

// Query is one PromQL query of a dashboard: a template variable's (label_values(...) as
// count by) or a panel target's.
type Query struct {
	// Panel is the panel title, or "variable NAME".
	Panel string
	// Expr is the PromQL, variables substituted.
	Expr string
}

// Annotation is a Prometheus annotation query (target.expr), variables substituted.
type Annotation struct {
	Name string
	Expr string
}

// Dashboard is what the tests need of one dashboard.
type Dashboard struct {
	Title       string
	Queries     []Query
	Annotations []Annotation
}

// file is the subset of Grafana's dashboard JSON read here.
type file struct {
	Title       string `json:"title"`
	Annotations struct {
		List []struct {
			Name   string `json:"name"`
			Target struct {
				Expr string `json:"expr"`
			} `json:"target"`
		} `json:"list"`
	} `json:"annotations"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

var labelValues = regexp.MustCompile(`^label_values\((.*), *(\w+)\)$`)

// Load reads a dashboard and returns its queries with vars applied (e.g. "$namespace" →
// "bench"). Every query variable must be label_values(...) and every panel must have a query.
func Load(path string, vars *strings.Replacer) (*Dashboard, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: not a dashboard: %w", filepath.Base(path), err)
	}
	d := &Dashboard{Title: f.Title}
	for _, v := range f.Templating.List {
		q, ok := v.Query.(map[string]any)
		if !ok {
			continue // the datasource variable
		}
		m := labelValues.FindStringSubmatch(fmt.Sprint(q["query"]))
		if m == nil {
			return nil, fmt.Errorf("%s: variable %s: query %v is not label_values(...)", filepath.Base(path), v.Name, q["query"])
		}
		d.Queries = append(d.Queries, Query{"variable " + v.Name, fmt.Sprintf("count by (%s) (%s)", m[2], vars.Replace(m[1]))})
	}
	for _, p := range f.Panels {
		if len(p.Targets) == 0 {
			return nil, fmt.Errorf("%s: panel %q has no query", filepath.Base(path), p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				return nil, fmt.Errorf("%s: panel %q: a target without expr", filepath.Base(path), p.Title)
			}
			d.Queries = append(d.Queries, Query{p.Title, vars.Replace(tg.Expr)})
		}
	}
	for _, a := range f.Annotations.List {
		if a.Target.Expr == "" {
			return nil, fmt.Errorf("%s: annotation %q has no target.expr", filepath.Base(path), a.Name)
		}
		d.Annotations = append(d.Annotations, Annotation{a.Name, vars.Replace(a.Target.Expr)})
	}
	return d, nil
}
