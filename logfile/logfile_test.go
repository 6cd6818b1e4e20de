package logfile

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mount's default log is named after its mount point as systemd-escape
// --path names units.
func TestDefaultPathEscapesAsSystemd(t *testing.T) {
	for in, want := range map[string]string{
		"/":                "-",
		"/mnt/data":        "mnt-data",
		"/mnt/data/":       "mnt-data",
		"/mnt/my data":     `mnt-my\x20data`,
		"/home/u/.hidden":  "home-u-.hidden",
		"/.hidden":         `\x2ehidden`,
		"/srv/a-b/c.d:e_f": `srv-a\x2db-c.d:e_f`,
	} {
		assert.Equal(t, want, EscapePath(in), in)
	}
	t.Setenv("XDG_CACHE_HOME", "/x")
	p, err := DefaultPath("/mnt/data")
	require.NoError(t, err)
	assert.Equal(t, "/x/rsfs/logs/mnt-data.log", p)
}

// Prune removes the logs last written before the age, never a live
// mount's, and nothing with dryRun.
func TestPruneKeepsTheLiveAndTheRecent(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	dir := filepath.Join(xdg, "rsfs", "logs")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	old := time.Now().Add(-40 * 24 * time.Hour)
	for name, mtime := range map[string]time.Time{"mnt-old.log": old, "mnt-recent.log": time.Now(), "mnt-live.log": old} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
		require.NoError(t, os.Chtimes(p, mtime, mtime))
	}
	got, pruned, err := Prune(30*24*time.Hour, time.Now(), true, []string{"/mnt/live"})
	require.NoError(t, err)
	assert.Equal(t, dir, got)
	require.Len(t, pruned, 1)
	assert.FileExists(t, filepath.Join(dir, "mnt-old.log"), "dry run")
	_, pruned, err = Prune(30*24*time.Hour, time.Now(), false, []string{"/mnt/live"})
	require.NoError(t, err)
	require.Len(t, pruned, 1)
	assert.Equal(t, filepath.Join(dir, "mnt-old.log"), pruned[0].Path)
	assert.NoFileExists(t, pruned[0].Path)
	assert.FileExists(t, filepath.Join(dir, "mnt-live.log"))
	assert.FileExists(t, filepath.Join(dir, "mnt-recent.log"))
}

// The logs go to the file once pointed there, as JSON with durations in
// seconds; Reopen follows a file moved away (logrotate).
func TestOutputToFileAndReopen(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	o := New()
	o.Setup(slog.LevelInfo, true)
	path := filepath.Join(t.TempDir(), "logs", "m.log")
	require.NoError(t, o.ToFile(path, false))
	assert.Equal(t, path, o.File())
	slog.Info("first", "wait", 1500*time.Millisecond)
	require.NoError(t, os.Rename(path, path+".1"))
	o.Reopen()
	slog.Info("second")
	rotated, err := os.ReadFile(path + ".1")
	require.NoError(t, err)
	assert.Contains(t, string(rotated), `"msg":"first","wait":1.5`)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(data), `"msg":"second"`), "%s", data)
}
