package lifecycle

import (
	"errors"
	"fmt"

	"github.com/benchrun/benchrun/api/v1alpha1"
)

// ConfigMapData reads a ConfigMap's data by name in the run's namespace (the cluster, or the
// run file); found is false when there is no such ConfigMap.
type ConfigMapData func(name string) (data map[string]string, found bool, err error)

// ScriptError is a script scenario whose source cannot be found: the user's error, to report
// as such (not retried).
type ScriptError struct {
	// Scenario is the scenario's name.
	Scenario string
	// ConfigMap is the ConfigMap it names.
	ConfigMap string
	// Key is the key it names (script.js by default).
	Key string
	// NoConfigMap tells that the ConfigMap itself is missing (else: the key).
	NoConfigMap bool
}

// Error implements error.
func (e *ScriptError) Error() string {
	if e.NoConfigMap {
		return fmt.Sprintf("scenario %q: ConfigMap %q not found", e.Scenario, e.ConfigMap)
	}
	return fmt.Sprintf("scenario %q: ConfigMap %q has no data key %q", e.Scenario, e.ConfigMap, e.Key)
}

// ErrNoScriptSource is a script scenario without script.configMapName (CEL rejects it at
// admission; a run file may still hold one).
var ErrNoScriptSource = errors.New("type script needs script.configMapName")

// ScriptSources returns the source of every script scenario of run, by scenario name, read
// through data. A missing ConfigMap or key is a *ScriptError, a scenario without a source
// ErrNoScriptSource; other errors are data's.
func ScriptSources(run *v1alpha1.BenchmarkRun, data ConfigMapData) (map[string]string, error) {
	out := map[string]string{}
	for _, sc := range run.Spec.Load.Scenarios {
		if sc.Type != v1alpha1.ScenarioScript {
			continue
		}
		if sc.Script == nil {
			return nil, fmt.Errorf("scenario %q: %w", sc.Name, ErrNoScriptSource)
		}
		key := sc.Script.Key
		if key == "" {
			key = "script.js"
		}
		d, found, err := data(sc.Script.ConfigMapName)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, &ScriptError{Scenario: sc.Name, ConfigMap: sc.Script.ConfigMapName, Key: key, NoConfigMap: true}
		}
		src, ok := d[key]
		if !ok {
			return nil, &ScriptError{Scenario: sc.Name, ConfigMap: sc.Script.ConfigMapName, Key: key}
		}
		out[sc.Name] = src
	}
	return out, nil
}

// IsScriptError tells whether err is the user's: a *ScriptError or ErrNoScriptSource.
func IsScriptError(err error) bool {
	var se *ScriptError
	return errors.As(err, &se) || errors.Is(err, ErrNoScriptSource)
}
