package results

import (
	"errors"
	"fmt"
	"io"
)

// Bounds a document's structure is checked against before anything of it is allocated
// (checkStructure). A hostile runner controls its document: without them a 16 KiB gzip of
// millions of empty scenarios expands to gigabytes of decoded structs. Each is far above what
// an honest runner or a merge writes (SCHEMA.md, "Size budget").
const (
	// MaxScenarios bounds Document.Scenarios (the CRD allows 32 scenarios per run).
	MaxScenarios = 64
	// MaxRunnerEntries bounds Document.Runners and Document.PartialReasons (one or a few
	// per runner after a merge).
	MaxRunnerEntries = 8192
	// MaxNameLength bounds scenario names, types and runner names in bytes once decoded.
	MaxNameLength = 253
	// MaxReasonLength bounds one partial reason in bytes once decoded.
	MaxReasonLength = 1024
	// maxHistogramBuckets bounds one histogram's buckets: 3-figure HDR histograms of
	// [1 µs, 1 h] have 23,552 buckets.
	maxHistogramBuckets = 1 << 15
	// maxDecodedTimeline bounds one timeline's counts when decoding: the recorder writes at
	// most 2,880, a year of 1 h buckets is 8,784.
	maxDecodedTimeline = 1 << 16
	// maxDocumentNumbers bounds the numbers in histogram buckets (two per bucket), timeline
	// counts and vus of a whole document, 8 bytes each decoded: at most 16 MiB of them (an
	// honest runner's fitted document holds well under 10^6).
	maxDocumentNumbers = 1 << 21
	// maxDocumentSeconds bounds fault seconds of a whole document.
	maxDocumentSeconds = MaxScenarios * MaxFaultSeconds
	// maxNumberLength bounds the text of one JSON number.
	maxNumberLength = 40
	// rawFactor: a JSON string's escaped text is at most 6 bytes per decoded byte (\u003c).
	rawFactor = 6
)

// kind is the JSON type a shape expects.
type kind uint8

const (
	kNum kind = iota
	kBool
	kStr
	kObj
	kMap
	kArr
)

// shape is the expected structure of one JSON value: for objects the allowed keys, for
// arrays and maps the element shape and the most entries, for strings the most raw bytes.
type shape struct {
	kind   kind
	fields map[string]*shape
	order  map[string]int // bit of each field, to refuse a repeated key
	elem   *shape
	max    int
	keyMax int
	budget *int // a document-wide counter this array's entries count against
}

// Document-wide budgets, indexes into scanner.budgets.
var (
	budgetNumbers = new(int)
	budgetSeconds = new(int)
)

// obj builds an object shape.
func obj(fields map[string]*shape) *shape {
	order := make(map[string]int, len(fields))
	i := 0
	for k := range fields {
		order[k] = i
		i++
	}
	return &shape{kind: kObj, fields: fields, order: order}
}

// docShape is the structure of a Document, built once.
var docShape = func() *shape {
	num := &shape{kind: kNum, max: maxNumberLength}
	str := func(n int) *shape { return &shape{kind: kStr, max: n * rawFactor} }
	counts := &shape{kind: kMap, elem: num, max: MaxDistinctValues, keyMax: MaxValueLength * rawFactor}
	pair := &shape{kind: kArr, elem: num, max: 2, budget: budgetNumbers}
	hist := obj(map[string]*shape{"unit": str(8), "sigFigs": num, "min": num, "max": num, "sum": num, "sumSquares": num,
		"buckets": {kind: kArr, elem: pair, max: maxHistogramBuckets}})
	timeline := obj(map[string]*shape{"startUnixMs": num, "bucketMs": num,
		"counts": {kind: kArr, elem: num, max: maxDecodedTimeline, budget: budgetNumbers}})
	latency := obj(map[string]*shape{"startUnixMs": num, "bucketMs": num,
		"intervals": {kind: kArr, elem: &shape{kind: kArr, elem: num, max: 2 + latencyBinCount, budget: budgetNumbers}, max: MaxLatencyIntervals, budget: budgetNumbers}})
	second := obj(map[string]*shape{"startUnixMs": num, "calls": num, "errors": num, "latency": hist})
	scenario := func(ops *shape) *shape {
		return obj(map[string]*shape{
			"name": str(MaxNameLength), "type": str(MaxNameLength), "calls": num, "errors": num,
			"errorKinds": counts, "firstStart": str(64), "lastEnd": str(64), "latency": hist,
			"returnValues": counts, "starts": timeline, "bytesSent": num, "bytesReceived": num,
			"vus":     {kind: kArr, elem: num, max: MaxVUEntries, budget: budgetNumbers},
			"command": str(MaxValueLength), "bodySize": num, "serviceTime": hist, "dropped": num,
			"targetRate": num, "searchStop": obj(map[string]*shape{"afterStep": num, "reason": str(MaxValueLength)}),
			"operations": ops, "serverCalls": counts,
			"faultSeconds":    {kind: kArr, elem: second, max: MaxFaultSeconds, budget: budgetSeconds},
			"latencyTimeline": latency,
		})
	}
	// Operations have no operations (Validate says so, naming them): one is let through.
	leaf := scenario(&shape{kind: kArr, max: 0})
	op := scenario(&shape{kind: kArr, elem: leaf, max: 1})
	return obj(map[string]*shape{
		"schemaVersion":  num,
		"runners":        {kind: kArr, elem: str(MaxNameLength), max: MaxRunnerEntries},
		"partial":        {kind: kBool},
		"partialReasons": {kind: kArr, elem: str(MaxReasonLength), max: MaxRunnerEntries},
		"scenarios":      {kind: kArr, elem: scenario(&shape{kind: kArr, elem: op, max: MaxOperations}), max: MaxScenarios},
	})
}()

// scanner walks JSON text checking it against a shape, allocating nothing on success. The
// text is buf, refilled from r when r is set (CheckStructure on a stream).
type scanner struct {
	buf     []byte
	i       int
	r       io.Reader
	chunk   []byte
	numbers int
	seconds int
	key     [64]byte // the start of the last string read
	keyLen  int
}

// errSyntax is returned for text that is not JSON; encoding/json then names the error.
var errSyntax = errors.New("not valid JSON")

// checkStructure checks a document's JSON text against docShape: known keys only, none
// repeated, and every array, map and string within its bound, before anything is decoded.
// Errors name the field path, e.g. "scenarios: more than 64 entries".
func checkStructure(b []byte) error {
	return (&scanner{buf: b}).document()
}

// CheckStructure is checkStructure on a stream (e.g. a gzip reader), in constant memory:
// a runner's stored result is checked while it is decompressed, before it is buffered.
func CheckStructure(r io.Reader) error {
	err := (&scanner{r: r, chunk: make([]byte, 32<<10)}).document()
	if errors.Is(err, errSyntax) {
		return nil // DecodeBytes names it
	}
	if err != nil {
		return fmt.Errorf("results: invalid document: %w", err)
	}
	return nil
}

// document checks the whole text.
func (s *scanner) document() error {
	if err := s.value(docShape); err != nil {
		return err
	}
	s.space()
	if _, ok := s.peek(); ok {
		return errors.New("unexpected data after the document")
	}
	return nil
}

// peek returns the next byte without consuming it; false at the end of the text.
func (s *scanner) peek() (byte, bool) {
	for s.i >= len(s.buf) {
		if s.r == nil {
			return 0, false
		}
		n, err := s.r.Read(s.chunk)
		s.buf, s.i = s.chunk[:n], 0
		if n == 0 && err != nil {
			s.r = nil
		}
	}
	return s.buf[s.i], true
}

// space skips white space.
func (s *scanner) space() {
	for {
		c, ok := s.peek()
		if !ok || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return
		}
		s.i++
	}
}

// value checks the value at s.i against sh.
func (s *scanner) value(sh *shape) error {
	s.space()
	c, ok := s.peek()
	if !ok {
		return errSyntax
	}
	if c == 'n' {
		return s.literal("null")
	}
	switch sh.kind {
	case kNum:
		return s.number()
	case kBool:
		switch c {
		case 't':
			return s.literal("true")
		case 'f':
			return s.literal("false")
		}
		return errors.New("want true or false")
	case kStr:
		n, err := s.str()
		if err == nil && n > sh.max {
			return fmt.Errorf("string longer than %d bytes", sh.max/rawFactor)
		}
		return err
	case kObj, kMap:
		if c != '{' {
			return errors.New("want an object")
		}
		return s.object(sh)
	default:
		if c != '[' {
			return errors.New("want an array")
		}
		return s.array(sh)
	}
}

// literal checks that the text at s.i is lit.
func (s *scanner) literal(lit string) error {
	for i := 0; i < len(lit); i++ {
		if c, ok := s.peek(); !ok || c != lit[i] {
			return errSyntax
		}
		s.i++
	}
	return nil
}

// number skips a number of at most maxNumberLength bytes.
func (s *scanner) number() error {
	n := 0
	for ; ; n++ {
		c, ok := s.peek()
		if !ok || (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		if n == maxNumberLength {
			return fmt.Errorf("number longer than %d bytes", maxNumberLength)
		}
		s.i++
	}
	if n == 0 {
		return errors.New("want a number")
	}
	return nil
}

// str skips a string and returns the length of its raw text; its first bytes are in s.key.
func (s *scanner) str() (int, error) {
	if c, ok := s.peek(); !ok {
		return 0, errSyntax
	} else if c != '"' {
		return 0, errors.New("want a string")
	}
	s.i++
	n, escaped := 0, false
	for ; ; n++ {
		c, ok := s.peek()
		if !ok {
			return 0, errSyntax
		}
		s.i++
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			s.keyLen = min(n, len(s.key))
			return n, nil
		}
		if n < len(s.key) {
			s.key[n] = c
		}
	}
}

// expect consumes byte c.
func (s *scanner) expect(c byte) error {
	s.space()
	if got, ok := s.peek(); !ok || got != c {
		return errSyntax
	}
	s.i++
	return nil
}

// end consumes the separator after an entry: true at close, false at ','.
func (s *scanner) end(close byte) (bool, error) {
	s.space()
	c, ok := s.peek()
	switch {
	case ok && c == close:
		s.i++
		return true, nil
	case ok && c == ',':
		s.i++
		return false, nil
	}
	return false, errSyntax
}

// empty consumes close when the container is empty.
func (s *scanner) empty(close byte) bool {
	s.space()
	if c, ok := s.peek(); ok && c == close {
		s.i++
		return true
	}
	return false
}

// object checks an object: a struct (known keys, each once) or a map (bounded keys).
func (s *scanner) object(sh *shape) error {
	s.i++ // '{'
	if s.empty('}') {
		return nil
	}
	var seen uint64
	for n := 0; ; n++ {
		s.space()
		klen, err := s.str()
		if err != nil {
			return err
		}
		var keyBuf [64]byte
		key := keyBuf[:copy(keyBuf[:], s.key[:s.keyLen])] // the value's strings overwrite s.key
		elem := sh.elem
		if sh.kind == kMap {
			if n >= sh.max {
				return fmt.Errorf("more than %d keys", sh.max)
			}
			if klen > sh.keyMax {
				return fmt.Errorf("key longer than %d bytes", sh.keyMax/rawFactor)
			}
		} else {
			f, ok := sh.fields[string(key)]
			if !ok || klen != len(key) {
				return fmt.Errorf("unknown field %.40q", string(key))
			}
			bit := uint64(1) << sh.order[string(key)]
			if seen&bit != 0 {
				return within(string(key), errors.New("repeated"))
			}
			seen |= bit
			elem = f
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := s.value(elem); err != nil {
			if sh.kind == kMap {
				return within(fmt.Sprintf("[%.40q]", string(key)), err)
			}
			return within(string(key), err)
		}
		if done, err := s.end('}'); done || err != nil {
			return err
		}
	}
}

// array checks an array's length (and its document-wide budget) and each element.
func (s *scanner) array(sh *shape) error {
	s.i++ // '['
	if s.empty(']') {
		return nil
	}
	for n := 0; ; n++ {
		if n >= sh.max {
			return fmt.Errorf("more than %d entries", sh.max)
		}
		if err := s.spend(sh.budget); err != nil {
			return err
		}
		if err := s.value(sh.elem); err != nil {
			return within(fmt.Sprintf("[%d]", n), err)
		}
		if done, err := s.end(']'); done || err != nil {
			return err
		}
	}
}

// spend counts one entry against a document-wide budget.
func (s *scanner) spend(budget *int) error {
	switch budget {
	case budgetNumbers:
		if s.numbers++; s.numbers > maxDocumentNumbers {
			return fmt.Errorf("more than %d numbers in histogram buckets, timeline counts and vus in the document (latency timelines included)", maxDocumentNumbers)
		}
	case budgetSeconds:
		if s.seconds++; s.seconds > maxDocumentSeconds {
			return fmt.Errorf("more than %d fault seconds in the document", maxDocumentSeconds)
		}
	}
	return nil
}

// pathError is a structure error at a field path, e.g. scenarios[3].operations[0].name.
type pathError struct {
	path string
	err  error
}

// Error implements error.
func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }

// Unwrap returns the error at the path.
func (e *pathError) Unwrap() error { return e.err }

// within prefixes err's path with elem (a field name or an [index]).
func within(elem string, err error) error {
	if errors.Is(err, errSyntax) {
		return err
	}
	var pe *pathError
	if errors.As(err, &pe) {
		if pe.path[0] == '[' {
			return &pathError{path: elem + pe.path, err: pe.err}
		}
		return &pathError{path: elem + "." + pe.path, err: pe.err}
	}
	return &pathError{path: elem, err: err}
}
