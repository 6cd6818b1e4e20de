package notify

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The renewal schedule, without a clock: the tests against a hub can only
// bound it loosely on a shared machine.

func TestRenewAtFourFifthsOfTheLease(t *testing.T) {
	verified := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for lease, want := range map[time.Duration]time.Duration{
		time.Second:        800 * time.Millisecond,
		10 * time.Hour:     8 * time.Hour,
		5 * 24 * time.Hour: 4 * 24 * time.Hour,
	} {
		sub := &subscription{verified: verified, lease: lease}
		assert.Equal(t, verified.Add(want), sub.renewAt(), "lease %s", lease)
	}
}

func TestRetryAfterFailedRenewal(t *testing.T) {
	// A tenth of the lease, at least 0.1 s and at most 30 s, then doubling
	// up to 5 minutes.
	assert.Equal(t, 100*time.Millisecond, nextRetry(0, time.Second))
	assert.Equal(t, 200*time.Millisecond, nextRetry(100*time.Millisecond, time.Second))
	assert.Equal(t, 100*time.Millisecond, nextRetry(0, 100*time.Millisecond))
	assert.Equal(t, 6*time.Second, nextRetry(0, time.Minute))
	assert.Equal(t, 30*time.Second, nextRetry(0, 10*24*time.Hour))
	assert.Equal(t, 5*time.Minute, nextRetry(4*time.Minute, time.Hour))
}
