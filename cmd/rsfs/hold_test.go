package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fs"
	"rsfs/mountutil"
	"rsfs/status"
)

// fakeMount is a plain directory that answers `rsfs status` as the root of
// a mount by this process does (the status xattr), naming a hold file in a
// directory of its own: hold and release read and write the real files.
type fakeMount struct {
	dir, holdFile string
}

func newFakeMount(t *testing.T) *fakeMount {
	t.Helper()
	m := &fakeMount{dir: t.TempDir(), holdFile: filepath.Join(t.TempDir(), "rsfs", "hold-0123456789abcdef")}
	require.NoError(t, mountutil.PrepareHoldDir(m.holdFile))
	m.show(t)
	return m
}

// show sets the status to show the hold the hold file names now, as a
// mount does when its status is read.
func (m *fakeMount) show(t *testing.T) {
	if err := m.setStatus(); err != nil {
		t.Skipf("user xattrs on %s: %v", m.dir, err)
	}
}

func (m *fakeMount) setStatus() error {
	rep := status.Report{PID: os.Getpid(), HoldFile: m.holdFile}
	if until, ok := mountutil.HeldUntil(m.holdFile); ok {
		rep.Hold = &status.HoldReport{Until: until}
	}
	data, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	return syscall.Setxattr(m.dir, fs.XattrStatus, data, 0)
}

// follow keeps the status up to date with the hold file until the test
// ends, as a live mount does.
func (m *fakeMount) follow(t *testing.T) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				if err := m.setStatus(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

func (m *fakeMount) shown(t *testing.T) *status.Report {
	t.Helper()
	rep, err := readReport(m.dir)
	require.NoError(t, err)
	return rep
}

// A hold against a mount that already shows an earlier hold succeeds once
// the mount shows the new one, and not on the strength of the earlier one:
// a mount that still shows only the earlier hold fails it.
func TestHoldOverAnEarlierHoldWaitsForTheNewOne(t *testing.T) {
	earlier := time.Now().Add(time.Hour).UTC().Truncate(time.Second)

	t.Run("shown", func(t *testing.T) {
		m := newFakeMount(t)
		require.NoError(t, mountutil.WriteHold(m.holdFile, earlier))
		m.show(t)
		require.NotNil(t, m.shown(t).Hold, "the earlier hold is shown")
		m.follow(t)
		code, err := execute(t, "hold", m.dir, "--for", "2h")
		require.NoError(t, err)
		assert.Equal(t, 0, code)
		until, ok := mountutil.HeldUntil(m.holdFile)
		require.True(t, ok)
		assert.WithinDuration(t, time.Now().Add(2*time.Hour), until, time.Minute, "the new hold is written")
		rep := m.shown(t)
		require.NotNil(t, rep.Hold)
		assert.True(t, rep.Hold.Until.Equal(until), "the mount shows the new hold: %s", rep.Hold.Until)
	})

	t.Run("not shown", func(t *testing.T) {
		m := newFakeMount(t)
		require.NoError(t, mountutil.WriteHold(m.holdFile, earlier))
		m.show(t) // and never again: the mount does not see the new hold
		start := time.Now()
		code, err := execute(t, "hold", m.dir, "--for", "2h")
		require.Error(t, err, "a hold the mount does not show is no hold")
		assert.Equal(t, 1, code)
		assert.Contains(t, err.Error(), "does not show the hold")
		assert.Contains(t, err.Error(), "its status says held until "+earlier.Format(time.RFC3339))
		assert.GreaterOrEqual(t, time.Since(start), 2*time.Second, "it waited for the mount to show the new hold")
		until, ok := mountutil.HeldUntil(m.holdFile)
		require.True(t, ok, "the earlier hold, which the mount shows, is not ended by a hold that failed")
		assert.True(t, until.Equal(earlier), "the hold file holds the earlier hold again: %s", until)
	})

	t.Run("none before, not shown", func(t *testing.T) {
		m := newFakeMount(t)
		code, err := execute(t, "hold", m.dir, "--for", "2h")
		require.Error(t, err)
		assert.Equal(t, 1, code)
		_, ok := mountutil.HeldUntil(m.holdFile)
		assert.False(t, ok, "a hold the mount does not show leaves no hold file")
	})
}
