package lifecycle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/results"
)

// Runner is what one runner left for collection.
type Runner struct {
	// Name names the runner in partial reasons, e.g. "runner-1".
	Name string
	// Doc is its result document; nil when it stored none or it could not be read.
	Doc *results.Document
	// Missing says why Doc is nil, e.g. "no result stored (pod evicted)".
	Missing string
	// Failed says why the runner failed although it stored a document; empty when it did not.
	Failed string
}

// ErrNoResults is returned by Merge when no runner left a document.
var ErrNoResults = errors.New("no runner stored a result")

// Merge merges the runners' documents. The result is partial when a runner failed (its
// reason is added) or left no document (named with why), or when stopped is set (the run
// ended before its end: "run stopped before its end" unless already partial). merged is
// how many documents went in. Without any document the error wraps ErrNoResults and lists
// why each runner has none.
func Merge(runners []Runner, stopped bool, scenarios ...string) (doc *results.Document, merged int, err error) {
	return MergeEach(len(runners), func(i int) Runner { return runners[i] }, stopped, scenarios...)
}

// MergeEach is Merge over n runners given one at a time by get: each document is merged and
// dropped before the next is asked for, so memory holds one runner's document and the merged
// one, whatever n.
//
// Runner documents are untrusted. With scenarios (the spec's scenario names) given, only
// those scenarios are kept, and only operations whose names look like one (SafeName); what
// is dropped is a partial reason of that runner. A document that does not merge (another
// type for a scenario, a counter that would overflow) is that runner's missing result, the
// others are kept. Every reason is made one bounded line (results.OneLine).
func MergeEach(n int, get func(i int) Runner, stopped bool, scenarios ...string) (doc *results.Document, merged int, err error) {
	var missing []string
	m := results.NewMerger()
	known := nameSet(scenarios)
	for i := range n {
		r := get(i)
		if r.Doc == nil {
			missing = append(missing, line(r.Name+": "+r.Missing))
			continue
		}
		keepKnown(&r, known)
		if r.Failed != "" {
			r.Doc.Partial = true
			r.Doc.PartialReasons = append(r.Doc.PartialReasons, r.Name+": "+r.Failed)
		}
		for j, reason := range r.Doc.PartialReasons {
			r.Doc.PartialReasons[j] = line(reason)
		}
		if err := m.Add(r.Doc); err != nil {
			missing = append(missing, line(r.Name+": result not merged: "+err.Error()))
			continue
		}
		merged++
	}
	if merged == 0 {
		return nil, 0, fmt.Errorf("%w: %s", ErrNoResults, strings.Join(missing, "; "))
	}
	doc, err = m.Document()
	if err != nil {
		return nil, 0, fmt.Errorf("merging runner results: %w", err)
	}
	if len(missing) > 0 {
		doc.Partial = true
		doc.PartialReasons = append(doc.PartialReasons, missing...)
	}
	if stopped && !doc.Partial {
		doc.Partial = true
		doc.PartialReasons = append(doc.PartialReasons, "run stopped before its end")
	}
	return doc, merged, nil
}

// line is a runner-supplied reason as one bounded line.
func line(s string) string { return results.OneLine(s, results.MaxReasonLength) }

// nameSet is the set of names, nil when there are none (keep every scenario).
func nameSet(names []string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// SafeName tells whether an operation name is one a runner writes (YCSB read, update,
// read-modify-write, a search step-04): 1 to 63 lower-case letters, digits, '_' or '-'.
// Such a name is the same text in status, Markdown, HTML and metric labels.
func SafeName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// sketch is a dropped name as it is named in a partial reason: at most 40 bytes, every byte
// but letters, digits, '_', '-' and '.' shown as '?', so the name cannot fake anything
// where the reason is shown.
func sketch(name string) string {
	b := []byte(name[:min(len(name), 40)])
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' && c != '.' {
			b[i] = '?'
		}
	}
	if len(name) > 40 {
		return `"` + string(b) + `..."`
	}
	return `"` + string(b) + `"`
}

// keepKnown drops from r's document the scenarios not in known (when known is set) and the
// operations whose names are not SafeName, and says so in r.Failed. The document is changed
// in place (it is r's own, decoded for this merge).
func keepKnown(r *Runner, known map[string]bool) {
	var dropped []string
	kept := r.Doc.Scenarios[:0]
	for _, s := range r.Doc.Scenarios {
		if known != nil && !known[s.Name] {
			dropped = append(dropped, "scenario "+sketch(s.Name))
			continue
		}
		ops := s.Operations[:0]
		for _, op := range s.Operations {
			if SafeName(op.Name) {
				ops = append(ops, op)
			} else {
				dropped = append(dropped, "operation "+sketch(op.Name)+" of "+s.Name)
			}
		}
		s.Operations = ops
		if len(s.Operations) == 0 {
			s.Operations = nil
		}
		kept = append(kept, s)
	}
	r.Doc.Scenarios = kept
	if len(dropped) == 0 {
		return
	}
	why := fmt.Sprintf("%d not in the spec dropped: %s", len(dropped), strings.Join(dropped[:min(len(dropped), 3)], ", "))
	if len(dropped) > 3 {
		why += ", ..."
	}
	if r.Failed != "" {
		why = r.Failed + "; " + why
	}
	r.Failed = why
}

// ScenarioNames are the spec's scenario names: the only ones a merge keeps.
func ScenarioNames(spec *v1alpha1.BenchmarkRunSpec) []string {
	names := make([]string, len(spec.Load.Scenarios))
	for i, sc := range spec.Load.Scenarios {
		names[i] = sc.Name
	}
	return names
}
