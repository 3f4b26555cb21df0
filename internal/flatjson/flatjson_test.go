package flatjson

import (
	"encoding/json"
	"testing"
)

// TestAppendExtra: entries land after the fields in order, and Extra gives back exactly the
// entries the fixed names do not claim.
func TestAppendExtra(t *testing.T) {
	if got := string(Append([]byte(`{"a":1}`), nil)); got != `{"a":1}` {
		t.Errorf("no entries: %s", got)
	}
	if got := string(Append([]byte(`{}`), []Entry{{"x", json.RawMessage(`2`)}})); got != `{"x":2}` {
		t.Errorf("empty object: %s", got)
	}
	b := Append([]byte(`{"a":1}`), []Entry{{"b", json.RawMessage(`{"c":[3]}`)}, {"é\"", json.RawMessage(`"v"`)}})
	if string(b) != `{"a":1,"b":{"c":[3]},"é\"":"v"}` {
		t.Fatalf("append: %s", b)
	}
	extra, err := Extra(b, func(n string) bool { return n == "a" })
	if err != nil || len(extra) != 2 || string(extra["b"]) != `{"c":[3]}` || string(extra[`é"`]) != `"v"` {
		t.Fatalf("extra %v %v", extra, err)
	}
	if extra, err := Extra([]byte(`{"a":1}`), func(n string) bool { return n == "a" }); err != nil || extra != nil {
		t.Errorf("none: %v %v", extra, err)
	}
	if _, err := Extra([]byte(`[1]`), func(string) bool { return false }); err == nil {
		t.Error("not an object: no error")
	}
}
