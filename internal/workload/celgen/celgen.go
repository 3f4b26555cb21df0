// Package celgen generates the marker lines of api/v1alpha1 that list scenario types: the
// ScenarioType Enum and the CEL rules on which types take bodySize, arrival (the open model),
// each params key, a custom target and an external kind, and the suite's bodySize sweep; and
// those listing external kinds: the ExternalKind Enum, v1alpha1.ExternalKinds, the doc of
// spec.target.external.kind and the rule on the stream kinds (no Redis password). It
// reads internal/workload's descriptors (which import api/v1alpha1, so hack/workload-cel runs
// it as a separate program in `make manifests`, before controller-gen) and rewrites the lines
// between a `// +workloadcel:begin=NAME ...` and a `// +workloadcel:end` line; controller-gen
// ignores those two markers and leaves them out of the CRD's descriptions.
package celgen

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/workload"
)

// Files are the api/v1alpha1 files holding generated blocks.
var Files = []string{"load_types.go", "benchmarkrun_types.go", "suite_types.go", "target_types.go"}

// endLine closes a generated block.
const endLine = "// +workloadcel:end"

// beginLine opens a generated block and names it.
var beginLine = regexp.MustCompile(`^\s*// \+workloadcel:begin=([A-Za-z]+) `)

// marker is a CEL rule marker line with its message (and fieldPath when not "").
func marker(rule, message, fieldPath string) string {
	l := fmt.Sprintf(`// +kubebuilder:validation:XValidation:rule="%s",message="%s"`, rule, message)
	if fieldPath != "" {
		l += fmt.Sprintf(`,fieldPath="%s"`, fieldPath)
	}
	return l
}

// quoted is types as a CEL list's items: 'a', 'b'.
func quoted(types []string) string {
	q := make([]string, len(types))
	for i, t := range types {
		q[i] = "'" + t + "'"
	}
	return strings.Join(q, ", ")
}

// english is items as a sentence's list: "a, b and c".
func english(items []string, and string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + and + " " + items[len(items)-1]
}

// typesWhere are the types of the descriptors for which keep is true, in their order.
func typesWhere(ds []workload.Descriptor, keep func(workload.Descriptor) bool) []string {
	var out []string
	for _, d := range ds {
		if keep(d) {
			out = append(out, string(d.Type))
		}
	}
	return out
}

// typeIs is the CEL test of v (such as self.type) being one of types.
func typeIs(v string, types []string) string {
	if len(types) == 1 {
		return fmt.Sprintf("%s == '%s'", v, types[0])
	}
	return fmt.Sprintf("%s in [%s]", v, quoted(types))
}

// Blocks are the generated marker lines of every block, by name.
func Blocks(ds []workload.Descriptor) (map[string][]string, error) {
	enum := typesWhere(ds, func(workload.Descriptor) bool { return true })
	body := typesWhere(ds, func(d workload.Descriptor) bool { return d.BodySize })
	arrival, err := arrivalRule(ds)
	if err != nil {
		return nil, err
	}
	targets, err := targetRules(ds)
	if err != nil {
		return nil, err
	}
	blocks := map[string][]string{
		"enum": {"// +kubebuilder:validation:Enum=" + strings.Join(enum, ";")},
		"bodySize": {marker(fmt.Sprintf("!has(self.type) || (!has(self.bodySize) || self.type in [%s])", quoted(body)),
			fmt.Sprintf("bodySize applies only to %s scenarios", english(body, "and")), "")},
		"params":  {paramsRule(ds)},
		"arrival": {arrival},
		"targets": targets,
		"suiteBodySize": {marker(fmt.Sprintf("!has(self.sweeps) || self.sweeps.all(w, w.field != 'bodySize' || self.template.load.scenarios.all(s, s.type in [%s]))", quoted(body)),
			fmt.Sprintf("spec.sweeps: a bodySize sweep sets every scenario's bodySize, which applies only to %s scenarios", english(body, "and")), ".sweeps")},
	}
	maps.Copy(blocks, kindBlocks(ds))
	return blocks, nil
}

// kindBlocks are the blocks listing the external kinds of ds (workload.ExternalKinds): the
// ExternalKind Enum, v1alpha1's externalKinds, the doc of ExternalTarget.Kind, and the rule
// refusing a Redis password for the stream kinds (workload.StreamKinds).
func kindBlocks(ds []workload.Descriptor) map[string][]string {
	kinds, stream := names(workload.ExternalKinds(ds)), names(workload.StreamKinds(ds))
	goList := make([]string, len(kinds))
	for i, k := range kinds {
		goList[i] = fmt.Sprintf("%q", k)
	}
	return map[string][]string{
		"externalEnum":    {"// +kubebuilder:validation:Enum=" + strings.Join(kinds, ";")},
		"externalKinds":   {"var externalKinds = []ExternalKind{" + strings.Join(goList, ", ") + "}", ""}, // gofmt's blank line
		"externalKindDoc": {"\t// Kind is the protocol: " + english(kinds, "or") + "."},
		"streamKinds": {marker(fmt.Sprintf("!has(self.kind) || !(self.kind in [%s]) || !has(self.passwordSecretRef)", quoted(stream)),
			fmt.Sprintf("passwordSecretRef does not apply to kind %s", english(stream, "or")), "")},
	}
}

// names are kinds as strings.
func names(kinds []v1alpha1.ExternalKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}

// arrivalRule is the rule refusing arrival on the types without the open model, each with
// its reason (Descriptor.Closed).
func arrivalRule(ds []workload.Descriptor) (string, error) {
	var types, why []string
	for _, d := range ds {
		if d.OpenModel {
			continue
		}
		if d.Closed == "" {
			return "", fmt.Errorf("type %s: no open model and no Closed reason for the CRD's message", d.Type)
		}
		types = append(types, string(d.Type))
		why = append(why, fmt.Sprintf("%s (%s)", d.Type, d.Closed))
	}
	if len(types) == 0 {
		return marker("true", "arrival applies to every type", ""), nil
	}
	why[0] = "type " + why[0]
	return marker(fmt.Sprintf("!has(self.arrival) || !has(self.type) || !(self.type in [%s])", quoted(types)),
		"arrival (the open model) does not apply to "+english(why, "nor to"), ""), nil
}

// paramsRule is the rule admitting, for each params key, the types that read it; a prefix
// (hetu.) stands for its types when every one of them (two or more) reads the key.
func paramsRule(ds []workload.Descriptor) string {
	free := typesWhere(ds, func(d workload.Descriptor) bool { return d.FreeParams })
	fixed := slices.DeleteFunc(slices.Clone(ds), func(d workload.Descriptor) bool { return d.FreeParams })
	var keys []string
	for _, d := range fixed {
		for _, k := range d.Params {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	var terms, labels []string
	for _, k := range keys {
		readers := typesWhere(fixed, func(d workload.Descriptor) bool { return d.ReadsParam(k) })
		if len(readers) == len(fixed) {
			terms = append(terms, fmt.Sprintf("k == '%s'", k))
			labels = append(labels, k+" (every type)")
			continue
		}
		conds, names := groupByPrefix("self.type", fixed, readers)
		cond := strings.Join(conds, " || ")
		if len(conds) > 1 {
			cond = "(" + cond + ")"
		}
		terms = append(terms, fmt.Sprintf("(%s && k == '%s')", cond, k))
		labels = append(labels, fmt.Sprintf("%s (%s)", k, strings.Join(names, ", ")))
	}
	rule := fmt.Sprintf("!has(self.type) || (!has(self.params) || %s || self.params.all(k, %s))", typeIs("self.type", free), strings.Join(terms, " || "))
	msg := fmt.Sprintf("params of a built-in scenario type take only the keys it reads: %s; use the scenario's own fields for the rest (ycsb, http, keySpace, bodySize...); free params are for type: %s",
		strings.Join(labels, ", "), english(free, "or"))
	return marker(rule, msg, "")
}

// groupByPrefix are the CEL tests of v and the message's names of readers (types of ds): a
// prefix such as hetu. when every type of ds with it (two or more) is a reader, then the
// other readers.
func groupByPrefix(v string, ds []workload.Descriptor, readers []string) (conds, names []string) {
	var prefixes []string
	for _, d := range ds {
		p, _, ok := strings.Cut(string(d.Type), ".")
		if ok && !slices.Contains(prefixes, p+".") {
			prefixes = append(prefixes, p+".")
		}
	}
	rest := slices.Clone(readers)
	for _, p := range prefixes {
		all := typesWhere(ds, func(d workload.Descriptor) bool { return strings.HasPrefix(string(d.Type), p) })
		if len(all) < 2 || slices.ContainsFunc(all, func(t string) bool { return !slices.Contains(readers, t) }) {
			continue
		}
		conds = append(conds, fmt.Sprintf("%s.startsWith('%s')", v, p))
		names = append(names, p+"*")
		rest = slices.DeleteFunc(rest, func(t string) bool { return strings.HasPrefix(t, p) })
	}
	if len(rest) > 0 {
		conds = append(conds, typeIs(v, rest))
		names = append(names, rest...)
	}
	return conds, names
}

// addressRules are the rules of a BenchmarkRun spec on the targets of the types without a
// Server, by the address they connect to: the HeTu ones need a HeTu target (or an external
// hetu), the Redis ones a Redis endpoint (any target but an external one of another kind).
func addressRules(ds []workload.Descriptor) []string {
	var out []string
	for _, a := range []workload.Address{workload.AddressHeTu, workload.AddressRedis} {
		types := typesWhere(ds, func(d workload.Descriptor) bool { return d.Server == "" && d.Address == a })
		if len(types) == 0 {
			continue
		}
		conds, names := groupByPrefix("s.type", ds, types)
		not := "!" + conds[0]
		if len(conds) > 1 {
			not = "!(" + strings.Join(conds, " || ") + ")"
		}
		if a == workload.AddressHeTu {
			out = append(out, marker(fmt.Sprintf("self.load.scenarios.all(s, !has(s.type) || %s || has(self.target.hetu) || (has(self.target.external) && has(self.target.external.kind) && self.target.external.kind == 'hetu'))", not),
				fmt.Sprintf("scenarios of type %s need a HeTu target: set spec.target.hetu, or spec.target.external with kind: hetu", english(names, "and")), ""))
			continue
		}
		var others []string
		for _, k := range workload.ExternalKinds(ds) {
			if k != v1alpha1.ExternalRedis {
				others = append(others, string(k))
			}
		}
		out = append(out, marker(fmt.Sprintf("self.load.scenarios.all(s, !has(s.type) || %s || !has(self.target.external) || !has(self.target.external.kind) || self.target.external.kind == 'redis')", not),
			fmt.Sprintf("scenarios of type %s need a Redis endpoint: an external target of kind %s has none (use kind: redis, or a redis or hetu target)", english(names, "and"), english(others, "or")), ""))
	}
	return out
}

// targetRules are the rules of a BenchmarkRun spec on each type's target: addressRules, then
// for each type with a Server, a custom target (when Custom) or an external one of its
// kinds; then the rule on which types a custom target runs.
func targetRules(ds []workload.Descriptor) ([]string, error) {
	out := addressRules(ds)
	for _, d := range ds {
		if d.Server == "" {
			if d.External != nil && d.Address != workload.AddressHeTu && d.Address != workload.AddressRedis {
				return nil, fmt.Errorf("type %s: external kinds %v but no Server for the CRD's message", d.Type, d.External)
			}
			continue
		}
		if len(d.External) == 0 {
			return nil, fmt.Errorf("type %s: a Server but no external kind", d.Type)
		}
		kinds := make([]string, len(d.External))
		for i, k := range d.External {
			kinds[i] = string(k)
		}
		rule := fmt.Sprintf("self.load.scenarios.all(s, !has(s.type) || s.type != '%s' || ", d.Type)
		how := "set "
		if d.Custom {
			rule += "has(self.target.custom) || "
			how += "spec.target.custom, or "
		}
		rule += fmt.Sprintf("(has(self.target.external) && has(self.target.external.kind) && %s))", typeIs("self.target.external.kind", kinds))
		how += "spec.target.external with kind: " + english(kinds, "or")
		out = append(out, marker(rule, fmt.Sprintf("scenarios of type %s need %s: %s", d.Type, d.Server, how), ""))
	}
	custom := typesWhere(ds, func(d workload.Descriptor) bool { return d.Custom })
	out = append(out, marker(fmt.Sprintf("!has(self.target.custom) || self.load.scenarios.all(s, !has(s.type) || s.type in [%s])", quoted(custom)),
		fmt.Sprintf("a custom target runs scenarios of type %s only", english(custom, "and")), ""))
	return out, nil
}

// Rewrite is src with the lines of every generated block replaced by blocks[name]; used
// collects the names of the blocks it met.
func Rewrite(src []byte, blocks map[string][]string, used map[string]bool) ([]byte, error) {
	lines := strings.SplitAfter(string(src), "\n")
	var out bytes.Buffer
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		m := beginLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		gen, ok := blocks[m[1]]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown block %s", i+1, m[1])
		}
		used[m[1]] = true
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != endLine {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("line %d: block %s has no %q line", i+1, m[1], endLine)
		}
		for _, g := range gen {
			out.WriteString(g + "\n")
		}
		i = end - 1
	}
	return out.Bytes(), nil
}
