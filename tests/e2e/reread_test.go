package e2e

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"rsfs/tests/sourcetest"
)

// A large file (streamed: over --verify-whole-below) read whole once and
// verified is not hashed again when it is read whole again from rsfs's
// memory cache, its pages dropped from the kernel's (issue 42): the bytes
// are the same, the READs reach rsfs, and the bytes hashed do not grow.
func TestVerifiedLargeFileReadAgainIsNotHashedAgain(t *testing.T) {
	const size = 4 << 20
	src := startSource(t, sourcetest.Config{Resources: 1, MinSize: size, MaxSize: size, Hashes: []string{"sha-256"}})
	addr := freeAddr(t)
	m := mount(t, src.URL(), "--verify-whole-below", "1MiB", "--metrics-addr", addr)
	var path string
	for _, p := range walkFiles(t, m.dir) {
		path = p
	}
	want, _ := src.Body(src.Resources()[0].URI)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "first read")
	first, _ := scrape(t, addr)
	require.GreaterOrEqual(t, first["rsfs_hashed_bytes_total"], float64(size), "the first read is verified")

	f, err := os.Open(path)
	require.NoError(t, err)
	require.NoError(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED), "drop the file's pages")
	require.NoError(t, f.Close())
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "second read")
	second, _ := scrape(t, addr)
	reads := `rsfs_fuse_operation_duration_seconds_count{op="read"}`
	require.Greater(t, second[reads], first[reads], "the second read reached rsfs")
	assert.Equal(t, first["rsfs_hashed_bytes_total"], second["rsfs_hashed_bytes_total"], "bytes hashed again")
	assert.Zero(t, second["rsfs_verification_failures_total"])
}
