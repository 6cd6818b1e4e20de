package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/statedir"
)

// stateDirs makes state directories under $XDG_CACHE_HOME/rsfs, each with
// a file, last used age ago.
func stateDirs(t *testing.T, base string, age time.Duration, names ...string) {
	t.Helper()
	for _, n := range names {
		d := filepath.Join(base, n)
		require.NoError(t, os.MkdirAll(d, 0o755))
		f := filepath.Join(d, "catalog.snap")
		require.NoError(t, os.WriteFile(f, []byte("snapshot"), 0o644))
		old := time.Now().Add(-age)
		require.NoError(t, os.Chtimes(f, old, old))
		require.NoError(t, os.Chtimes(d, old, old))
	}
}

// prune runs rsfs cache prune with args, and returns its exit status and
// what it printed.
func prune(t *testing.T, args ...string) (int, string) {
	t.Helper()
	root := rootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(append([]string{"cache", "prune"}, args...))
	code, _ := exitCode(root.Execute())
	return code, out.String()
}

// --max-size 0 is a size like any other: every state directory no mount
// holds goes, the held one stays.
func TestCachePruneMaxSizeZero(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	base := filepath.Join(xdg, "rsfs")
	stateDirs(t, base, time.Hour, "0000000000000001", "0000000000000002", "0000000000000003")
	held, err := statedir.LockDir(filepath.Join(base, "0000000000000003"), "/mnt/held")
	require.NoError(t, err)
	defer held.Release()

	code, out := prune(t, "--max-size", "0")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "removed 2 state directories")
	assert.NoDirExists(t, filepath.Join(base, "0000000000000001"))
	assert.NoDirExists(t, filepath.Join(base, "0000000000000002"))
	assert.DirExists(t, filepath.Join(base, "0000000000000003"))

	code, _ = prune(t)
	assert.Equal(t, exitUsage, code, "neither flag given")
}

// --older-than prunes the mounts' old log files too, but not the log of a
// mount that holds its state directory (running), however old.
func TestCachePruneOlderThanPrunesLogs(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	base := filepath.Join(xdg, "rsfs")
	logs := filepath.Join(base, "logs")
	require.NoError(t, os.MkdirAll(logs, 0o755))
	old := time.Now().Add(-40 * 24 * time.Hour)
	for name, mtime := range map[string]time.Time{"mnt-old.log": old, "mnt-recent.log": time.Now(), "mnt-live.log": old} {
		p := filepath.Join(logs, name)
		require.NoError(t, os.WriteFile(p, []byte("time=... level=INFO msg=mounted\n"), 0o644))
		require.NoError(t, os.Chtimes(p, mtime, mtime))
	}
	stateDirs(t, base, time.Hour, "00000000000000aa")
	held, err := statedir.LockDir(filepath.Join(base, "00000000000000aa"), "/mnt/live")
	require.NoError(t, err)
	defer held.Release()

	code, out := prune(t, "--older-than", "30d", "--dry-run")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "would remove 1 log files")
	assert.FileExists(t, filepath.Join(logs, "mnt-old.log"), "--dry-run removes nothing")

	code, out = prune(t, "--older-than", "30d")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "removed "+filepath.Join(logs, "mnt-old.log"))
	assert.Contains(t, out, "removed 1 log files")
	assert.NoFileExists(t, filepath.Join(logs, "mnt-old.log"))
	assert.FileExists(t, filepath.Join(logs, "mnt-recent.log"))
	assert.FileExists(t, filepath.Join(logs, "mnt-live.log"), "the log of a running mount")
}
