package e2e

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// mountAt mounts url on dir with a given cache dir and unmounts in
// t.Cleanup.
func mountAt(t *testing.T, url, dir, cacheDir string, extra ...string) *mounted {
	t.Helper()
	needFUSE(t)
	m := &mounted{url: url, dir: dir, logFile: filepath.Join(filepath.Dir(dir), "rsfs.log")}
	args := append([]string{"mount", url, dir, "--log-file", m.logFile, "--cache-dir", cacheDir}, extra...)
	start := time.Now()
	_, stderr, err := run(t, 2*time.Minute, rsfsBin, args...)
	require.NoError(t, err, "rsfs mount: %s", stderr)
	t.Logf("mounted in %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { m.unmount(t) })
	return m
}

func TestRemountFromSnapshotCatchesUp(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 2000, PerList: 500})
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))

	m := mountAt(t, src.URL(), dir, cacheDir, "--poll-interval", "0")
	files := walkFiles(t, m.dir)
	m.unmount(t)
	waitFor(t, hangBound, "the unmount", func() bool { return !isMountPoint(dir) })

	res := src.Resources()
	require.NoError(t, src.Update(res[10].URI, []byte("changed while unmounted\n")))
	require.NoError(t, src.Delete(res[11].URI))
	src.ResetCounters()
	m = mountAt(t, src.URL(), dir, cacheDir, "--poll-interval", "0")
	c := src.Counters()
	assert.Zero(t, c.ListDocs, "no Resource List read: caught up through the Change List")
	assert.LessOrEqual(t, c.OtherDocs, int64(4), "well-known, capability list, change list")

	got, err := os.ReadFile(files[res[10].URI])
	require.NoError(t, err)
	assert.Equal(t, "changed while unmounted\n", string(got), "caught up through the Change List")
	_, err = os.Stat(files[res[11].URI])
	assert.ErrorIs(t, err, os.ErrNotExist)
	after := walkFiles(t, m.dir)
	assert.Len(t, after, src.Len())
	for uri, p := range after {
		assert.Equal(t, files[uri], p, "paths are stable across remounts")
	}
	log, _ := os.ReadFile(m.logFile)
	assert.Contains(t, string(log), "catalog loaded from snapshot")
}

func TestMountFromSnapshotWhileSourceIsDown(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 300})
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	m := mountAt(t, src.URL(), dir, cacheDir)
	files := walkFiles(t, m.dir)
	res := src.Resources()
	read, unread := res[0], res[len(res)-1] // another directory: not warmed
	require.NotEqual(t, filepath.Dir(files[read.URI]), filepath.Dir(files[unread.URI]))
	want, _ := src.Body(read.URI)
	got, err := os.ReadFile(files[read.URI])
	require.NoError(t, err)
	require.Equal(t, want, got)
	m.unmount(t)

	src.Close() // the Source is gone
	m = mountAt(t, src.URL(), dir, cacheDir, "--retries", "0")
	log, _ := os.ReadFile(m.logFile)
	assert.Contains(t, string(log), "mounting from the snapshot")
	after := walkFiles(t, m.dir)
	assert.Len(t, after, len(res), "the whole tree, from the snapshot")
	got, err = os.ReadFile(after[read.URI])
	require.NoError(t, err)
	assert.Equal(t, want, got, "a cached file reads from the disk cache")
	_, err = os.ReadFile(after[unread.URI])
	assert.ErrorIs(t, err, syscall.EIO, "an uncached file fails until the Source is back")
}

func TestRemountFromSnapshotKeepsMirrors(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 20, Mirror: true})
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	m := mountAt(t, src.URL(), dir, cacheDir, "--poll-interval", "0")
	files := walkFiles(t, m.dir)
	m.unmount(t)

	r := src.Resources()[7]
	src.FailPrimary(r.URI, 500)
	m = mountAt(t, src.URL(), dir, cacheDir, "--poll-interval", "0", "--retries", "1")
	got, err := os.ReadFile(files[r.URI])
	require.NoError(t, err, "the mirror the snapshot's catalog names is still allowed")
	want, _ := src.Body(r.URI)
	assert.Equal(t, want, got)
	log, _ := os.ReadFile(m.logFile)
	assert.Contains(t, string(log), "catalog loaded from snapshot")
}
