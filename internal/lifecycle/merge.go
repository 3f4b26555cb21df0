package lifecycle

import (
	"errors"
	"fmt"
	"strings"

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
func Merge(runners []Runner, stopped bool) (doc *results.Document, merged int, err error) {
	return MergeEach(len(runners), func(i int) Runner { return runners[i] }, stopped)
}

// MergeEach is Merge over n runners given one at a time by get: each document is merged and
// dropped before the next is asked for, so memory holds one runner's document and the merged
// one, whatever n.
func MergeEach(n int, get func(i int) Runner, stopped bool) (doc *results.Document, merged int, err error) {
	var missing []string
	m := results.NewMerger()
	for i := range n {
		r := get(i)
		if r.Doc == nil {
			missing = append(missing, r.Name+": "+r.Missing)
			continue
		}
		if r.Failed != "" {
			r.Doc.Partial = true
			r.Doc.PartialReasons = append(r.Doc.PartialReasons, r.Name+": "+r.Failed)
		}
		if err := m.Add(r.Doc); err != nil {
			return nil, 0, fmt.Errorf("merging runner results: %w", err)
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
