package local

import (
	"context"
	"fmt"
	"time"
)

// waitFor calls check every 100 ms until it succeeds, the process exits or ctx ends; the
// error names the last failure.
func waitFor(ctx context.Context, what string, p *Process, check func(context.Context) error) error {
	var last error
	for {
		if last = check(ctx); last == nil {
			return nil
		}
		if p != nil && p.Exited() {
			return fmt.Errorf("%s exited during start (%w): %w%s", what, p.Err(), last, p.logTail())
		}
		select {
		case <-ctx.Done():
			tail := ""
			if p != nil {
				tail = p.logTail()
			}
			return fmt.Errorf("%s not ready: %w%s", what, last, tail)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
