package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/benchrun/benchrun/api/v1alpha1"
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
	if err != nil || len(s.Settings) == 0 {
		return b, err
	}
	out := bytes.NewBuffer(b[:len(b)-1]) // without its closing brace; never empty (name, type)
	for _, k := range slices.Sorted(maps.Keys(s.Settings)) {
		if typedKeys[k] {
			return nil, fmt.Errorf("plan: scenario %q: settings %q would repeat a typed field", s.Name, k)
		}
		name, _ := json.Marshal(k)
		out.WriteByte(',')
		out.Write(name)
		out.WriteByte(':')
		out.Write(s.Settings[k])
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes: every entry but a typed field's is a setting.
func (s *Scenario) UnmarshalJSON(b []byte) error {
	var plain plainScenario
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(b, &entries); err != nil {
		return err
	}
	*s = Scenario(plain)
	s.Settings = nil
	for k, v := range entries {
		if !typedKeys[k] {
			if s.Settings == nil {
				s.Settings = map[string]json.RawMessage{}
			}
			s.Settings[k] = v
		}
	}
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
