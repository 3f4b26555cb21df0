package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/flatjson"
)

// This file is how a scenario type's own settings reach benchrun.js without a field of this
// package: the plan passes the API's settings object its descriptor names
// (workload.Descriptor.Settings) as an entry of the scenario's JSON (Scenario.Settings).

// plainScenario is Scenario without its methods: its typed fields.
type plainScenario Scenario

// typedKeys are the JSON names of Scenario's typed fields.
var typedKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[plainScenario]()
	for i := range t.NumField() {
		if name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]; name != "-" {
			keys[name] = true
		}
	}
	return keys
}()

// MarshalJSON writes Settings as entries of their own after the typed fields, by name.
func (s Scenario) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(plainScenario(s))
	if err != nil {
		return nil, err
	}
	entries := make([]flatjson.Entry, 0, len(s.Settings))
	for _, k := range slices.Sorted(maps.Keys(s.Settings)) {
		if typedKeys[k] {
			return nil, fmt.Errorf("plan: scenario %q: settings %q would repeat a typed field", s.Name, k)
		}
		entries = append(entries, flatjson.Entry{Name: k, Value: s.Settings[k]})
	}
	return flatjson.Append(b, entries), nil
}

// UnmarshalJSON reads what MarshalJSON writes: every entry but a typed field's is a setting.
func (s *Scenario) UnmarshalJSON(b []byte) error {
	var plain plainScenario
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	settings, err := flatjson.Extra(b, func(name string) bool { return typedKeys[name] })
	if err != nil {
		return err
	}
	*s = Scenario(plain)
	s.Settings = settings
	return nil
}

// settingsOf is the settings object of scenario s named name (its JSON name in the API's
// Scenario) as the API has it; nil when s has none.
func settingsOf(s v1alpha1.Scenario, name string) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	v, ok := fields[name]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	return map[string]json.RawMessage{name: v}, nil
}
