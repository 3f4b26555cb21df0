// Package runner is the load side of a BenchmarkRun: the Indexed Job of k6 runner pods with
// its ServiceAccount and Role (job.go), the per-runner state and result ConfigMaps and the
// start barrier they share with the operator (state.go), and the in-pod agent (agent.go).
//
// Protocol (no network path from the operator to the pods is needed):
//  1. The operator creates per runner a state ConfigMap (<prefix>-runner-<i>) holding the
//     runner's k6 invocation and an empty result ConfigMap (<prefix>-result-<i>, label
//     component=result), the barrier ConfigMap (<prefix>-barrier), then the Job.
//  2. Runner i reads its invocation, starts k6 paused (`--paused --address 127.0.0.1:6565`),
//     waits until k6 initialized its VUs, and sets state=ready.
//  3. When every runner is ready the operator writes startAt (a few seconds ahead) into the
//     barrier; runners watch it (a single-object watch, re-established with a bounded
//     backoff; never a fixed-rate poll), sleep until startAt, release k6 (PATCH /v1/status
//     paused=false on the loopback REST API) and set state=running with loadStartedAt (the
//     operator derives the start skew from these).
//  4. When k6 exits the runner first stores its result document gzip-compressed in
//     binaryData of its result ConfigMap, then sets state=done (or failed with a reason) and
//     resultBytes (the stored size) in its state ConfigMap. A failed runner stores whatever
//     partial document k6 wrote. The ConfigMaps are owned by the BenchmarkRun, so an
//     operator restart loses nothing and cleanup of the Job keeps the data.
//
// The manager caches state ConfigMaps (small: state, times, usage) but never result
// ConfigMaps: its cache excludes component=result, and it reads one result at a time,
// uncached, when it collects. State ConfigMaps written by an older runner hold the result
// in their own binaryData; the manager still reads those.
//
// The runners' Role allows get/list/watch on the barrier and get/update/patch on their
// state and result ConfigMaps only (resourceNames), nothing else; the
// benchrun-runner-isolation ValidatingAdmissionPolicy (config/admission) further lets the
// pod of index i write only runner i's ConfigMaps, so no runner can forge another's result.
package runner

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/benchrun/benchrun/internal/plan"
	"github.com/benchrun/benchrun/internal/results"
)

// Keys of the runner state ConfigMap and of the barrier ConfigMap.
const (
	// KeyInvocation holds the runner's plan.Invocation as JSON (written by the operator).
	KeyInvocation = "invocation.json"
	// KeyState is the runner state: "", ready, running, done or failed.
	KeyState = "state"
	// KeyReadyAt is when the runner reached the barrier (RFC 3339, ns).
	KeyReadyAt = "readyAt"
	// KeyLoadStartedAt is when the runner actually started k6 after the barrier.
	KeyLoadStartedAt = "loadStartedAt"
	// KeyFinishedAt is when k6 exited.
	KeyFinishedAt = "finishedAt"
	// KeyExitCode is k6's exit code.
	KeyExitCode = "exitCode"
	// KeyReason says why a runner failed.
	KeyReason = "reason"
	// KeyUsage holds the runner's own cgroup CPU and memory usage during the load (JSON Usage).
	KeyUsage = "usage.json"
	// KeyResult holds the gzip-compressed result document (binaryData of the result
	// ConfigMap; of the state ConfigMap for runners of older versions).
	KeyResult = "result.json.gz"
	// KeyResultBytes in the state ConfigMap is the compressed size of the result stored in
	// the result ConfigMap; set once the result is stored there.
	KeyResultBytes = "resultBytes"
	// KeyStartAt in the barrier ConfigMap is when every runner starts the load.
	KeyStartAt = "startAt"
)

// Runner states.
const (
	// StateReady means waiting at the barrier.
	StateReady = "ready"
	// StateRunning means k6 is running.
	StateRunning = "running"
	// StateDone means k6 finished and the result is stored.
	StateDone = "done"
	// StateFailed means k6 failed or could not start; a partial result may be stored.
	StateFailed = "failed"
)

// Usage is a runner's own resource usage during the load, from its cgroup.
type Usage struct {
	// CPUSeconds is the CPU time used between load start and end.
	CPUSeconds float64 `json:"cpuSeconds"`
	// WallSeconds is the load's wall time.
	WallSeconds float64 `json:"wallSeconds"`
	// MemoryPeakBytes is the cgroup's peak memory (memory.peak), 0 when unknown.
	MemoryPeakBytes int64 `json:"memoryPeakBytes"`
}

// State is what a runner state ConfigMap says.
type State struct {
	// Index is the runner index.
	Index int
	// State is "", ready, running, done or failed.
	State string
	// LoadStartedAt is the actual load start, zero when not started.
	LoadStartedAt time.Time
	// Reason says why the runner failed.
	Reason string
	// Usage is the runner's own cgroup usage, nil when not reported.
	Usage *Usage
	// HasResult tells whether a result document is stored.
	HasResult bool
	// ResultInState tells that the result is in the state ConfigMap itself (older runners),
	// not in the result ConfigMap.
	ResultInState bool
}

// ComponentResult is the component label value of result ConfigMaps, which the manager's
// cache excludes.
const ComponentResult = "result"

// ParseState reads a runner state ConfigMap.
func ParseState(cm *corev1.ConfigMap, index int) State {
	s := State{Index: index, State: cm.Data[KeyState], Reason: boundText(results.OneLine(cm.Data[KeyReason], 4*MaxReasonBytes), MaxReasonBytes)}
	if t, err := time.Parse(time.RFC3339Nano, cm.Data[KeyLoadStartedAt]); err == nil {
		s.LoadStartedAt = t
	}
	if u := cm.Data[KeyUsage]; u != "" {
		var usage Usage
		if json.Unmarshal([]byte(u), &usage) == nil {
			s.Usage = &usage
		}
	}
	_, s.ResultInState = cm.BinaryData[KeyResult]
	s.HasResult = s.ResultInState || cm.Data[KeyResultBytes] != ""
	return s
}

// MaxReasonBytes bounds the failure text a runner writes that the manager copies into
// status, events and reports (a runner or a script may write anything there); the text is
// also made one line without control characters (results.OneLine).
const MaxReasonBytes = 1024

// boundText cuts s to at most n bytes on a UTF-8 boundary, marking the cut.
func boundText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(" …(cut)")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "") + " …(cut)"
}

// EncodeResult gzips a result document file's content.
func EncodeResult(doc []byte) ([]byte, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(doc); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MaxResultBytes bounds a runner's result document once decompressed (the stored gzip is at
// most ~1 MiB, the ConfigMap limit). A larger document is refused before it is decoded: a
// gzip bomb of a few KiB must not make the manager allocate gigabytes.
const MaxResultBytes = 16 << 20

// DecodeResult reads the result document stored in a runner's result ConfigMap (or, from
// older runners, its state ConfigMap), refusing one whose decompressed size exceeds
// MaxResultBytes or whose structure is out of bounds (results.CheckStructure, run while
// the document is decompressed a first time, in constant memory): only a document that
// passes is decompressed again into a buffer and decoded.
func DecodeResult(cm *corev1.ConfigMap) (*results.Document, error) {
	data, ok := cm.BinaryData[KeyResult]
	if !ok {
		return nil, fmt.Errorf("runner %s: no result stored", cm.Name)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("runner %s: %w", cm.Name, err)
	}
	// The gzip trailer states the decompressed size (mod 2^32): refuse at once when it is too
	// large; a forged trailer is still stopped by the limit below.
	if len(data) >= 18 && binary.LittleEndian.Uint32(data[len(data)-4:]) > MaxResultBytes {
		return nil, errTooLarge(cm)
	}
	counted := &countingReader{r: io.LimitReader(zr, MaxResultBytes+1)}
	if err := results.CheckStructure(counted); err != nil {
		if _, _ = io.Copy(io.Discard, counted); counted.n > MaxResultBytes {
			return nil, errTooLarge(cm) // the size is the first reason given
		}
		return nil, fmt.Errorf("runner %s: %w", cm.Name, err)
	}
	if counted.err == nil { // not JSON: stopped early; DecodeBytes names it once the size is known
		_, _ = io.Copy(io.Discard, counted)
	}
	if counted.err != nil && !errors.Is(counted.err, io.EOF) {
		return nil, fmt.Errorf("runner %s: decompressing the result: %w", cm.Name, counted.err)
	}
	if counted.n > MaxResultBytes {
		return nil, errTooLarge(cm)
	}
	if err := zr.Reset(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("runner %s: %w", cm.Name, err)
	}
	var raw bytes.Buffer
	raw.Grow(int(counted.n) + bytes.MinRead) // the size is known now: one allocation
	if _, err := raw.ReadFrom(io.LimitReader(zr, MaxResultBytes+1)); err != nil {
		return nil, fmt.Errorf("runner %s: decompressing the result: %w", cm.Name, err)
	}
	doc, err := results.DecodeBytes(raw.Bytes())
	if err != nil {
		return nil, fmt.Errorf("runner %s: %w", cm.Name, err)
	}
	return doc, nil
}

// countingReader counts the bytes read from r and keeps its first error.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

// Read implements io.Reader.
func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// errTooLarge is the refusal of a result document over MaxResultBytes.
func errTooLarge(cm *corev1.ConfigMap) error {
	return fmt.Errorf("runner %s: result document larger than %d MiB once decompressed (refused unread)", cm.Name, MaxResultBytes>>20)
}

// EncodeInvocation is the JSON stored under KeyInvocation.
func EncodeInvocation(inv plan.Invocation) (string, error) {
	b, err := json.Marshal(inv)
	return string(b), err
}

// DecodeInvocation reads KeyInvocation.
func DecodeInvocation(cm *corev1.ConfigMap) (plan.Invocation, error) {
	var inv plan.Invocation
	if err := json.Unmarshal([]byte(cm.Data[KeyInvocation]), &inv); err != nil {
		return inv, fmt.Errorf("runner %s: invocation: %w", cm.Name, err)
	}
	return inv, nil
}
