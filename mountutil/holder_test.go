package mountutil

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeMount answers a hold's status as a mount does, from a hold file in a
// directory of its own: hold and release read and write the real files.
// Until follow, it shows what the hold file held when it was made.
type fakeMount struct {
	dir, holdFile string
	following     atomic.Bool
	shown         HoldStatus
}

func newFakeMount(t *testing.T, earlier time.Time) *fakeMount {
	t.Helper()
	m := &fakeMount{dir: t.TempDir(), holdFile: filepath.Join(t.TempDir(), "rsfs", "hold-0123456789abcdef")}
	require.NoError(t, PrepareHoldDir(m.holdFile))
	if !earlier.IsZero() {
		require.NoError(t, WriteHold(m.holdFile, earlier))
	}
	m.shown = m.read()
	return m
}

func (m *fakeMount) read() HoldStatus {
	st := HoldStatus{File: m.holdFile, PID: os.Getpid()}
	st.Until, _ = HeldUntil(m.holdFile)
	return st
}

// status is the mount's StatusFunc.
func (m *fakeMount) status(string) (HoldStatus, error) {
	if m.following.Load() {
		return m.read(), nil
	}
	return m.shown, nil
}

// A hold against a mount that already shows an earlier hold succeeds once
// the mount shows the new one, and not on the strength of the earlier one:
// a mount that still shows only the earlier hold fails it.
func TestHoldOverAnEarlierHoldWaitsForTheNewOne(t *testing.T) {
	earlier := time.Now().Add(time.Hour).UTC().Truncate(time.Second)

	t.Run("shown", func(t *testing.T) {
		m := newFakeMount(t, earlier)
		m.following.Store(true)
		h, err := FindHolder(m.dir, m.status)
		require.NoError(t, err)
		assert.True(t, h.Held, "the earlier hold is shown")
		until := time.Now().Add(2 * time.Hour).UTC()
		require.NoError(t, h.Hold(until))
		got, ok := HeldUntil(m.holdFile)
		require.True(t, ok)
		assert.True(t, got.Equal(until), "the new hold is written: %s", got)
	})

	t.Run("not shown", func(t *testing.T) {
		m := newFakeMount(t, earlier) // and never again: the mount does not see the new hold
		h, err := FindHolder(m.dir, m.status)
		require.NoError(t, err)
		start := time.Now()
		err = h.Hold(time.Now().Add(2 * time.Hour))
		require.Error(t, err, "a hold the mount does not show is no hold")
		assert.Contains(t, err.Error(), "does not show the hold")
		assert.Contains(t, err.Error(), "its status says held until "+earlier.Format(time.RFC3339))
		assert.GreaterOrEqual(t, time.Since(start), ackWait, "it waited for the mount to show the new hold")
		until, ok := HeldUntil(m.holdFile)
		require.True(t, ok, "the earlier hold, which the mount shows, is not ended by a hold that failed")
		assert.True(t, until.Equal(earlier), "the hold file holds the earlier hold again: %s", until)
	})

	t.Run("none before, not shown", func(t *testing.T) {
		m := newFakeMount(t, time.Time{})
		h, err := FindHolder(m.dir, m.status)
		require.NoError(t, err)
		require.Error(t, h.Hold(time.Now().Add(2*time.Hour)))
		_, ok := HeldUntil(m.holdFile)
		assert.False(t, ok, "a hold the mount does not show leaves no hold file")
	})

	t.Run("release", func(t *testing.T) {
		m := newFakeMount(t, earlier)
		m.following.Store(true)
		h, err := FindHolder(m.dir, m.status)
		require.NoError(t, err)
		require.NoError(t, h.Release())
		assert.NoFileExists(t, m.holdFile)
	})
}
