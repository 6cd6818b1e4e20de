package status

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSinceCountsTheWindowNewestFirst(t *testing.T) {
	clock := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	l := &Events{now: func() time.Time { return clock }}
	l.Add("old")
	clock = clock.Add(2 * time.Hour)
	l.Add("a")
	clock = clock.Add(time.Minute)
	l.Add("b")
	s := l.Since(time.Hour, 1)
	assert.Equal(t, uint64(3), s.Total)
	assert.Equal(t, 2, s.InWindow)
	assert.False(t, s.Capped)
	assert.Equal(t, []Event{{Time: clock, Reason: "b"}}, s.Latest)
}

func TestSinceIsALowerBoundPastTheRing(t *testing.T) {
	var l Events
	for i := range 100 {
		l.Add(fmt.Sprint(i))
	}
	s := l.Since(time.Hour, 2)
	assert.Equal(t, uint64(100), s.Total)
	assert.Equal(t, 64, s.InWindow)
	assert.True(t, s.Capped)
	assert.Equal(t, "99", s.Latest[0].Reason)
	assert.Equal(t, "98", s.Latest[1].Reason)
	assert.Equal(t, Summary{}, (&Events{}).Since(time.Hour, 3))
}

// Capped says the count may be short: only when the ring is full of events
// within the window and more happened than it holds.
func TestCappedOnlyWhenTheRingCannotSayAll(t *testing.T) {
	clock := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	exactly := &Events{now: func() time.Time { return clock }}
	for i := range keep {
		exactly.Add(fmt.Sprint(i))
	}
	s := exactly.Since(time.Hour, 0)
	assert.Equal(t, keep, s.InWindow)
	assert.False(t, s.Capped, "exactly as many as the ring holds: the count is exact")

	old := &Events{now: func() time.Time { return clock }}
	for i := range 100 {
		if i == 50 {
			clock = clock.Add(2 * time.Hour) // the first 50 are out of the window
		}
		old.Add(fmt.Sprint(i))
	}
	s = old.Since(time.Hour, 0)
	assert.Equal(t, 50, s.InWindow)
	assert.False(t, s.Capped, "the ring reaches past the window: the count is exact")
	assert.Equal(t, uint64(100), s.Total)
}
