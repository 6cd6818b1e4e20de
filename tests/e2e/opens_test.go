package e2e

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// The kernel opens files without asking rsfs (it answers the first OPEN
// with ENOSYS): every file still reads as published, small and
// multi-block alike, and a second pass is served by the kernel's page
// cache, with no OPEN and no request.
func TestFilesOpenWithoutAskingRsfs(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 40, MinSize: 100, MaxSize: 3 << 20})
	addr := freeAddr(t)
	m := mount(t, src.URL(), "--poll-interval", "0", "--metrics-addr", addr)
	files := walkFiles(t, m.dir)
	require.Len(t, files, 40)
	readAll := func(pass string) {
		for uri, path := range files {
			want, ok := src.Body(uri)
			require.True(t, ok, uri)
			got, err := os.ReadFile(path)
			require.NoError(t, err, "%s pass: %s", pass, path)
			require.True(t, bytes.Equal(want, got), "%s pass: %s: %d bytes, want the %d published", pass, path, len(got), len(want))
		}
	}
	readAll("first")
	src.ResetCounters()
	readAll("second")
	assert.Zero(t, src.Counters().ContentGets(), "requests on the second pass")

	metrics, _ := scrape(t, addr)
	opens := metrics[`rsfs_fuse_operation_duration_seconds_count{op="open"}`]
	assert.LessOrEqual(t, opens, 1.0, "OPENs rsfs answered: the kernel asks once, is told ENOSYS, and stops")
}

// A file the Source changes after it was read shows its new version as
// soon as the change is applied: the name leads to a new inode, with none
// of the old version's pages.
func TestReadFileChangeShows(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 2, MinSize: 2 << 20, MaxSize: 2 << 20})
	m := mount(t, src.URL(), pollFlags...)
	files := walkFiles(t, m.dir)
	uri := src.Resources()[0].URI
	old, _ := src.Body(uri)
	got, err := os.ReadFile(files[uri])
	require.NoError(t, err)
	require.True(t, bytes.Equal(old, got), "the first version")
	var before syscall.Stat_t
	require.NoError(t, syscall.Stat(files[uri], &before))

	require.NoError(t, src.Update(uri, newBody))
	start := time.Now()
	// 20 s: several times a poll, and less than the 30 s a stream of a
	// version idles before it is closed.
	waitFor(t, hangBound, "the new version", func() bool {
		got, err := os.ReadFile(files[uri])
		return err == nil && bytes.Equal(got, newBody)
	})
	t.Logf("the new version showed after %s", time.Since(start))
	var after syscall.Stat_t
	require.NoError(t, syscall.Stat(files[uri], &after))
	assert.Equal(t, before.Ino, after.Ino, "one inode number per resource, as rsync and restic expect")
	assert.Equal(t, int64(len(newBody)), after.Size)
	assert.Equal(t, uint64(1), after.Nlink)
}
