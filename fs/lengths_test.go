package fs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	tf := newTestFSOver(t, c)
	tf.fs.cfg.Length = length
	return tf
}

func TestLookupLearnsALengthOnceAndReadsToTheEnd(t *testing.T) {
	var heads atomic.Int64
	release := make(chan struct{})
	tf := unsizedFS(t, func(ctx context.Context, r *catalog.Resource) (int64, error) {
		heads.Add(1)
		select {
		case <-release:
		case <-time.After(testTimeout):
		}
		return int64(len(cBody)), nil
	})
	sub := tf.dir(t, "data", "sub")
	var wg sync.WaitGroup
	outs := make([]fuse.EntryOut, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := header(sub)
			assert.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, "c.txt", &outs[i]))
		}()
	}
	require.Eventually(t, func() bool { return tf.fs.learningJoined() == len(outs)-1 }, testTimeout, time.Millisecond,
		"one lookup asks, the others wait on it")
	close(release)
	wg.Wait()
	assert.Equal(t, int64(1), heads.Load(), "lookups of one file share one request")
	for _, out := range outs {
		assert.Equal(t, uint64(len(cBody)), out.Attr.Size)
		assert.Equal(t, outs[0].NodeId, out.NodeId)
	}
	got, errno := tf.readAll(t, outs[0].NodeId, 4096)
	require.Zero(t, errno)
	assert.Equal(t, cBody, got)
	assert.Equal(t, int64(1), tf.fs.LengthsLearned())
	h := header(sub)
	var again fuse.EntryOut
	require.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, "c.txt", &again))
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

// learningJoined is how many lookups wait on another's request.
func (f *FS) learningJoined() int {
	f.learning.mu.Lock()
	defer f.learning.mu.Unlock()
	n := 0
	for _, c := range f.learning.m {
		n += int(c.joined.Load())
	}
	return n
}

func TestLearnLengthsInTheBackground(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	tf := unsizedFS(t, func(ctx context.Context, r *catalog.Resource) (int64, error) {
		mu.Lock()
		asked = append(asked, r.URI)
		mu.Unlock()
		if r.URI == cURI {
			return int64(len(cBody)), nil
		}
		return -1, errors.New("HTTP 503")
	})
	require.NotEmpty(t, tf.cat.Upsert(&catalog.Resource{URI: topURI, Length: resourcesync.NoLength}))
	learned, failed := tf.fs.LearnLengths(context.Background(), 4)
	assert.Equal(t, int64(1), learned)
	assert.Equal(t, int64(1), failed)
	assert.ElementsMatch(t, []string{cURI, topURI}, asked, "each file without a length once, and no other")
	sub := tf.dir(t, "data", "sub")
	h := header(sub)
	var out fuse.EntryOut
	require.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, "c.txt", &out))
	assert.Equal(t, uint64(len(cBody)), out.Attr.Size)
	assert.Len(t, asked, 2, "a length learned in the background costs the lookup nothing")
}
