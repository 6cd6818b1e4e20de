package cache

import (
	"time"

	"rsfs/status"
)

// VerifyFailures summarises the contents whose bytes disagreed with their
// published length or hash, within window, with the latest n reasons.
func (c *Cache) VerifyFailures(window time.Duration, n int) status.Summary {
	return c.verifyFailures.Since(window, n)
}
