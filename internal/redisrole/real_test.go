package redisrole

import (
	"context"
	"net"
	"testing"

	"github.com/benchrun/benchrun/internal/redistest"
)

// TestRoleOfRealServers asks a real master and a real replica (replicaof, with a password).
func TestRoleOfRealServers(t *testing.T) {
	ctx := context.Background()
	master := redistest.Start(t, "--requirepass", "s3cret")
	host, port, _ := net.SplitHostPort(master)
	replica := redistest.Start(t, "--requirepass", "s3cret", "--masterauth", "s3cret", "--replicaof", host, port)
	if role, err := Role(ctx, master, "s3cret"); err != nil || role != "master" {
		t.Fatalf("master: %q, %v", role, err)
	}
	if role, err := Role(ctx, replica, "s3cret"); err != nil || role != "replica" {
		t.Fatalf("replica: %q, %v", role, err)
	}
	if _, err := Role(ctx, master, "wrong"); err == nil {
		t.Fatal("a wrong password was accepted")
	}
}
