package fs

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/resourcesync"
)

// unsizedFS is the sample Source with c.txt published without a length,
// whose length lookups learn through length.
func unsizedFS(t *testing.T, length func(context.Context, *catalog.Resource) (int64, error)) *testFS {
	t.Helper()
	c := catalog.New(catalog.Options{Origin: testOrigin})
	require.NoError(t, c.Add(&catalog.Resource{URI: aURI, Length: int64(len(aBody)), Lastmod: aMtime}))
	require.NoError(t, c.Add(&catalog.Resource{URI: cURI, Length: resourcesync.NoLength, Lastmod: aMtime}))
	require.NoError(t, c.Seal())
	return newTestFSWith(t, c, func(cfg *Config) { cfg.Length = length })
}

// A lookup learns the length (package prefetch: one request however many
// lookups wait, TestKnownLearnsALengthOnce), the inode has it, and a read
// reads the file to its end; a second lookup asks nothing.
func TestLookupLearnsALengthOnceAndReadsToTheEnd(t *testing.T) {
	var heads atomic.Int64
	tf := unsizedFS(t, func(ctx context.Context, r *catalog.Resource) (int64, error) {
		heads.Add(1)
		return int64(len(cBody)), nil
	})
	sub := tf.dir(t, "data", "sub")
	h := header(sub)
	var out fuse.EntryOut
	require.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, "c.txt", &out))
	assert.Equal(t, int64(1), heads.Load())
	assert.Equal(t, uint64(len(cBody)), out.Attr.Size)
	got, errno := tf.readAll(t, out.NodeId, 4096)
	require.Zero(t, errno)
	assert.Equal(t, cBody, got)
	var again fuse.EntryOut
	require.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, "c.txt", &again))
	assert.Equal(t, out.NodeId, again.NodeId)
	assert.Equal(t, int64(1), heads.Load(), "a learned length is kept")
}

func TestAFailedLengthFailsTheLookupAndIsTriedAgain(t *testing.T) {
	var heads atomic.Int64
	fail := atomic.Bool{}
	fail.Store(true)
	tf := unsizedFS(t, func(ctx context.Context, r *catalog.Resource) (int64, error) {
		heads.Add(1)
		if fail.Load() {
			return -1, errors.New("429 Too Many Requests")
		}
		return int64(len(cBody)), nil
	})
	sub := tf.dir(t, "data", "sub")
	h := header(sub)
	var out fuse.EntryOut
	assert.Equal(t, fuse.EIO, tf.fs.Lookup(nil, &h, "c.txt", &out))
	names := map[string]bool{}
	for _, e := range tf.list(t, sub) {
		names[e.Name] = true
	}
	assert.True(t, names["c.txt"], "a file whose length could not be learned stays in the tree")
	fail.Store(false)
	require.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, "c.txt", &out))
	assert.Equal(t, uint64(len(cBody)), out.Attr.Size)
	assert.Equal(t, int64(2), heads.Load())
}

func TestReaddirPlusGivesAFileOfUnknownLengthByNameAlone(t *testing.T) {
	var heads atomic.Int64
	tf := unsizedFS(t, func(ctx context.Context, r *catalog.Resource) (int64, error) {
		heads.Add(1)
		return int64(len(cBody)), nil
	})
	sub := tf.dir(t, "data", "sub")
	data := tf.dir(t, "data")
	tf.lookupAs(t, 42, data, "a.txt") // thread 42 stats what it lists
	fh, _ := tf.opendir(t, sub, 42)
	got, st := tf.readdir(t, sub, fh, 0, 4096, true, 42)
	require.Equal(t, fuse.OK, st)
	require.Len(t, got, 1)
	assert.Equal(t, "c.txt", got[0].Name)
	assert.Zero(t, got[0].entry.NodeId, "no inode before the length is known")
	assert.Zero(t, heads.Load(), "a listing makes no request")
}
