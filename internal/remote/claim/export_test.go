package claim

import (
	"context"
	"time"
)

// Stale reports how long this machine has watched the task's current claim (or its last
// renewal) on the line, by its own clock; zero when nobody holds the task.
func (c *Claimer) Stale(task string) time.Duration {
	if _, ok := c.holders[task]; !ok {
		return 0
	}
	return c.now().Sub(c.seen[task])
}

// Renew is RenewAll of one task's fence, ErrFenced when it is no longer the task's claim.
func (c *Claimer) Renew(ctx context.Context, task string, fence int64) error {
	return c.one(ctx, "renew", task, fence)
}
