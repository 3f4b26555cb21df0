package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// K6PausedBeforeRun is k6's lib.ExecutionStatusPausedBeforeRun: VUs initialized, waiting for
// the release (`k6 run --paused`).
const K6PausedBeforeRun = 4

// K6Status reads the execution status of the k6 whose REST API listens on address (loopback).
func K6Status(ctx context.Context, address string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+address+"/v1/status", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Data struct {
			Attributes struct {
				Status int `json:"status"`
			} `json:"attributes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	return body.Data.Attributes.Status, nil
}

// K6Resume releases a paused k6: PATCH /v1/status {paused: false} on its REST API.
func K6Resume(ctx context.Context, address string) error {
	body := []byte(`{"data":{"type":"status","id":"default","attributes":{"paused":false}}}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, "http://"+address+"/v1/status", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("k6 REST API: %s", resp.Status)
	}
	return nil
}
