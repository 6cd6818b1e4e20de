package e2e

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// TestCacheCommands: one Source spelled two ways is one state directory
// (a second mount is refused); cache list shows it mounted; cache prune
// removes an old unmounted one and never the mounted one.
func TestCacheCommands(t *testing.T) {
	needFUSE(t)
	cacheDir := filepath.Join(t.TempDir(), "cache")
	a := startSource(t, sourcetest.Config{Resources: 30})
	b := startSource(t, sourcetest.Config{Resources: 30, Seed: 2})

	// b, mounted once and idle for 40 days.
	mb := mount(t, b.URL(), "--cache-dir", cacheDir)
	mb.unmount(t)
	old := time.Now().Add(-40 * 24 * time.Hour)
	require.NoError(t, filepath.WalkDir(cacheDir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}))

	ma := mount(t, a.URL(), "--cache-dir", cacheDir)
	// The same Source, spelled otherwise: the same state directory, held.
	other := strings.TrimSuffix(a.URL(), "/") + "/.well-known/resourcesync"
	dir2 := filepath.Join(t.TempDir(), "mnt2")
	require.NoError(t, os.Mkdir(dir2, 0o755))
	_, stderr, err := run(t, time.Minute, rsfsBin, "mount", other, dir2, "--cache-dir", cacheDir, "--log-file", filepath.Join(t.TempDir(), "log"))
	require.Error(t, err)
	assert.Contains(t, stderr, "in use by another rsfs mount")
	assert.False(t, isMountPoint(dir2))

	out, stderr, err := run(t, time.Minute, rsfsBin, "cache", "list", "--cache-dir", cacheDir)
	require.NoError(t, err, stderr)
	t.Logf("rsfs cache list:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, "header, two state directories, total")
	assert.Contains(t, lines[1], a.URL())
	assert.Contains(t, lines[1], "on "+ma.dir)
	assert.Contains(t, lines[2], b.URL())
	assert.Contains(t, lines[2], "40 days ago")
	assert.Contains(t, lines[2], " no ")

	// Neither flag: a wrong command line.
	_, _, err = run(t, time.Minute, rsfsBin, "cache", "prune", "--cache-dir", cacheDir)
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	assert.Equal(t, 2, exit.ExitCode())

	// Everything above 1 byte: only b goes, a is mounted.
	out, stderr, err = run(t, time.Minute, rsfsBin, "cache", "prune", "--cache-dir", cacheDir, "--max-size", "1", "--dry-run")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "would remove 1 state directories")
	out, stderr, err = run(t, time.Minute, rsfsBin, "cache", "prune", "--cache-dir", cacheDir, "--older-than", "30d")
	require.NoError(t, err, stderr)
	t.Logf("rsfs cache prune --older-than 30d:\n%s", out)
	assert.Contains(t, out, b.URL())
	assert.Contains(t, out, "removed 1 state directories")

	out, _, err = run(t, time.Minute, rsfsBin, "cache", "list", "--cache-dir", cacheDir)
	require.NoError(t, err)
	assert.Contains(t, out, a.URL())
	assert.NotContains(t, out, b.URL())
	// The mount still reads.
	_, err = os.ReadDir(ma.path("data"))
	require.NoError(t, err)
}
