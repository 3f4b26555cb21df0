// Package flatjson writes and reads JSON objects that hold a struct's fields and, flattened
// beside them, entries of a map: the runner protocol's BENCHRUN_PLAN scenarios (a type's own
// settings) and BENCHRUN_TARGET (the stream addresses) keep the JSON older runners read.
package flatjson

import (
	"bytes"
	"encoding/json"
)

// Entry is one flattened entry: its JSON name and value.
type Entry struct {
	// Name is the entry's JSON name.
	Name string
	// Value is its JSON value.
	Value json.RawMessage
}

// Append writes entries, in order, after the fields of obj (a JSON object as json.Marshal
// writes it): {"a":1} and b=2 give {"a":1,"b":2}.
func Append(obj []byte, entries []Entry) []byte {
	if len(entries) == 0 {
		return obj
	}
	out := bytes.NewBuffer(obj[:len(obj)-1]) // without its closing brace
	for _, e := range entries {
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		name, _ := json.Marshal(e.Name)
		out.Write(name)
		out.WriteByte(':')
		out.Write(e.Value)
	}
	out.WriteByte('}')
	return out.Bytes()
}

// Extra is every entry of the JSON object b that fixed does not claim, by name; nil when none.
func Extra(b []byte, fixed func(name string) bool) (map[string]json.RawMessage, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, err
	}
	var extra map[string]json.RawMessage
	for name, v := range entries {
		if fixed(name) {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[name] = v
	}
	return extra, nil
}
