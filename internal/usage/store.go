package usage

import (
	"encoding/json"
	"time"
)

// Keys of the usage ConfigMap's data.
const (
	keySamples   = "samples.json"
	keyKubelet   = "kubelet.json"
	keySampledAt = "sampledAt"
)

// Store is what the run's usage ConfigMap holds: the samples, the kubelet counters the next
// CPU deltas start from, and when the last sample was taken.
type Store struct {
	// Samples are the accumulated samples.
	Samples Samples
	// Kubelet is what the kubelet path keeps between scrapes.
	Kubelet KubeletState
	// SampledAt is when the last sample was taken (zero: never).
	SampledAt time.Time
}

// KubeletState is what the kubelet path keeps between scrapes.
type KubeletState struct {
	// Counters are the last CPU reading of each container, by "pod/container".
	Counters map[string]*CPUReading `json:"counters,omitempty"`
	// Errors are the nodes whose last scrape failed, with the error.
	Errors map[string]string `json:"errors,omitempty"`
}

// CPUReading is one container's CPU counter and the rate measured when it was read.
type CPUReading struct {
	// Seconds is container_cpu_usage_seconds_total.
	Seconds float64 `json:"s"`
	// Ms is the counter's timestamp in Unix milliseconds.
	Ms int64 `json:"ms"`
	// Start is the container's start time; a new one means a new counter.
	Start float64 `json:"start,omitempty"`
	// Rate is the CPU in cores between the previous reading and this one (nil: none yet).
	Rate *float64 `json:"rate,omitempty"`
}

// Decode reads a Store from the usage ConfigMap's data (nil data: an empty Store).
// Unreadable entries are dropped: sampling starts over rather than failing the run.
func Decode(data map[string]string) *Store {
	s := &Store{Samples: Samples{}}
	_ = json.Unmarshal([]byte(data[keySamples]), &s.Samples)
	_ = json.Unmarshal([]byte(data[keyKubelet]), &s.Kubelet)
	s.SampledAt, _ = time.Parse(time.RFC3339, data[keySampledAt])
	if s.Samples == nil {
		s.Samples = Samples{}
	}
	return s
}

// Encode is the usage ConfigMap's data for s.
func (s *Store) Encode() map[string]string {
	samples, _ := json.Marshal(s.Samples)
	data := map[string]string{keySamples: string(samples), keySampledAt: s.SampledAt.UTC().Format(time.RFC3339)}
	if len(s.Kubelet.Counters) > 0 || len(s.Kubelet.Errors) > 0 {
		kubelet, _ := json.Marshal(s.Kubelet)
		data[keyKubelet] = string(kubelet)
	}
	return data
}
