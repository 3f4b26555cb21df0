package resp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// WaitPing returns once every server in addrs answers PING with PONG (after AUTH when
// password is set), checking every interval; logf (optional) hears which servers are not
// answering yet, at most every 10 s. It fails only when ctx ends, naming those servers.
func WaitPing(ctx context.Context, addrs []string, password string, interval time.Duration, logf func(format string, args ...any)) error {
	pending := slices.Clone(addrs)
	var lastLog time.Time
	for {
		var errs []string
		pending = slices.DeleteFunc(pending, func(addr string) bool {
			reply, err := Do(ctx, addr, password, "PING")
			if err == nil && reply == "PONG" {
				return true
			}
			if err == nil {
				err = fmt.Errorf("PING answered %q", reply)
			}
			errs = append(errs, addr+": "+err.Error())
			return false
		})
		if len(pending) == 0 {
			return nil
		}
		if logf != nil && time.Since(lastLog) >= 10*time.Second {
			logf("waiting for %s", strings.Join(errs, "; "))
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not answering: %s", strings.Join(errs, "; "))
		case <-time.After(interval):
		}
	}
}
