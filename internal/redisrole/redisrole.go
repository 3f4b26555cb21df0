// Package redisrole keeps a Redis pod's role label current, so that the builtin provider's
// master and replica Services follow a sentinel failover. It runs as a small sidecar
// (`benchrun-runner redis-role`) next to each builtin Redis server of an HA or proxy target.
package redisrole

import (
	"context"
	"fmt"
	"strings"

	"github.com/benchrun/benchrun/internal/resp"
)

// Label is the pod label holding the role: master or replica.
const Label = "bench.benchrun.io/redis-role"

// Role asks the Redis server at addr for its role with the ROLE command (after AUTH when
// password is set): master, replica or sentinel.
func Role(ctx context.Context, addr, password string) (string, error) {
	reply, err := resp.Do(ctx, addr, password, "ROLE")
	if err != nil {
		return "", err
	}
	// ROLE answers an array whose first element is the role; resp joins elements with newlines.
	switch role, _, _ := strings.Cut(reply, "\n"); role {
	case "master", "sentinel":
		return role, nil
	case "slave", "replica":
		return "replica", nil
	default:
		return "", fmt.Errorf("ROLE: unknown role %q", role)
	}
}
