package resultstest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"time"

	"github.com/benchrun/benchrun/internal/results"
)

// ManyScenarios is a hostile runner's result document as stored (gzip): a valid opening
// followed by empty scenarios until it is about decompressed bytes once decompressed. Of
// 16 MiB it is ~16 KiB of gzip and ~5.6 million scenarios: before results checked a
// document's structure while reading it, decoding it allocated over 12 GiB.
func ManyScenarios(decompressed int) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	head := `{"schemaVersion":2,"runners":["runner-0"],"scenarios":[{}`
	_, _ = zw.Write([]byte(head))
	const chunk = 1 << 16
	piece := []byte(strings.Repeat(",{}", chunk/3))
	for n := len(head); n+len(piece) < decompressed-2; n += len(piece) {
		_, _ = zw.Write(piece)
	}
	_, _ = zw.Write([]byte("]}"))
	_ = zw.Close()
	return b.Bytes()
}

// Normal is an honest runner document as stored (gzip) of about gzipBytes: synthetic
// scenarios of 10 minutes at 60,000 calls/min, as many as fit (the baseline ManyScenarios is
// compared with).
func Normal(gzipBytes int) ([]byte, error) {
	var out []byte
	for n := 1; n <= 32; n++ {
		doc, err := Document(Spec{Runner: "runner-1", Scenarios: n, Duration: 10 * time.Minute,
			CallsPerMinute: 60000, Samples: 20000, Seed: 7, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return nil, err
		}
		gz, err := Gzip(doc)
		if err != nil {
			return nil, err
		}
		if len(gz) > gzipBytes && out != nil {
			break
		}
		out = gz
	}
	return out, nil
}

// Gzip encodes doc and compresses it as a runner stores it.
func Gzip(doc *results.Document) ([]byte, error) {
	var raw bytes.Buffer
	if err := results.Encode(&raw, doc); err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
