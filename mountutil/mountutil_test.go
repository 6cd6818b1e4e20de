package mountutil

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	assert.NoError(t, Prepare(dir, false))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), nil, 0o644))
	err := Prepare(dir, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not empty")
	assert.NoError(t, Prepare(dir, true))
	err = Prepare(filepath.Join(dir, "x"), true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a directory")
	err = Prepare(filepath.Join(dir, "missing"), false)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.False(t, IsStale(dir))
}

func TestHoldAndRelease(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	dir := t.TempDir()
	assert.False(t, Held(dir))
	until, err := Hold(dir, time.Hour)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(time.Hour), until, time.Minute)
	assert.True(t, Held(dir))
	assert.True(t, Held(dir+"/"), "the same mount point, spelled otherwise")
	assert.False(t, Held(t.TempDir()), "another mount point")
	require.NoError(t, Release(dir))
	assert.False(t, Held(dir))
	require.NoError(t, Release(dir), "releasing twice is fine")

	_, err = Hold(dir, -time.Second) // already expired
	require.NoError(t, err)
	assert.False(t, Held(dir))
	_, err = os.Stat(HoldPath(dir))
	assert.ErrorIs(t, err, os.ErrNotExist, "an expired hold is removed")
}
