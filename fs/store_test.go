package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/resourcesync"
	"rsfs/tests/cachetest"
	"rsfs/tests/wait"
)

// While pages of a version are being stored in an inode, its node ID is
// not given to another version, even once the kernel has forgotten it: the
// pages land in the inode of their own version or in none.
func TestStorePinKeepsTheNodeIDForItsVersion(t *testing.T) {
	var nt nodeTable
	nt.init()
	id := catalog.NodeID(7)
	v1, v2, v3 := catalog.Attr{Gen: 1, Size: 10}, catalog.Attr{Gen: 2, Size: 20}, catalog.Attr{Gen: 3, Size: 30}

	_, ok := nt.pinStore(id, 1)
	assert.False(t, ok, "an inode the kernel does not hold")
	nid, _ := nt.ref(id, v1)
	_, ok = nt.pinStore(id, 2)
	assert.False(t, ok, "another version than the one held")
	pinned, ok := nt.pinStore(id, 1)
	require.True(t, ok)
	require.Equal(t, nid, pinned)

	_, gone := nt.forget(nid, 1)
	require.True(t, gone)
	other, fresh := nt.ref(id, v2)
	assert.True(t, fresh)
	assert.NotEqual(t, nid, other, "a new version while the store is pending")
	same, _ := nt.ref(id, v1)
	assert.Equal(t, nid, same, "its own version may have it back")

	nt.unpinStore(nid)
	nt.forget(same, 1)
	nt.forget(other, 1)
	third, _ := nt.ref(id, v3)
	assert.Equal(t, nid, third, "free again once the store is sent")
	assert.Empty(t, nt.storing)
}

// readCounter counts the READs that reach rsfs.
type readCounter struct {
	*FS
	reads atomic.Int64
}

func (c *readCounter) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	c.reads.Add(1)
	return c.FS.Read(cancel, in, buf)
}

// A walk's first read warms its directory, and the warmed files are handed
// to the kernel's page cache: the reader then reads them with no READ,
// byte for byte, but for the window's refill point, left for rsfs to see.
func TestWarmedFilesAreReadFromThePageCache(t *testing.T) {
	const n = 40 // at least warmRefill: the window has a refill point
	cat := catalog.New(catalog.Options{Origin: testOrigin})
	bodies := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("f%03d.txt", i)
		uri := testOrigin + "/d/" + name
		bodies[name] = fmt.Sprintf("bytes of %s, %d of them\n", uri, i)
		require.NoError(t, cat.Add(&catalog.Resource{URI: uri, Length: int64(len(bodies[name])),
			Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: cachetest.SHA256Hex([]byte(bodies[name]))}}}))
	}
	require.NoError(t, cat.Seal())
	tf := newTestFSOver(t, cat)
	for name, body := range bodies {
		tf.origin.Set(testOrigin+"/d/"+name, []byte(body))
	}
	c := &readCounter{FS: tf.fs}
	dir := filepath.Join(mountRaw(t, tf, c, true, nil), "d")
	// As grep -r: a LOOKUP of a file first, so the listing is answered in
	// full (plus.go) and the kernel holds every file's inode. rsfs knows a
	// process by the thread the kernel names.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, err := os.Stat(filepath.Join(dir, "f000.txt"))
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, n)

	got, err := os.ReadFile(filepath.Join(dir, "f000.txt"))
	require.NoError(t, err)
	require.Equal(t, bodies["f000.txt"], string(got))
	wait.For(t, "the directory to be warmed", func() bool {
		for name := range bodies {
			if tf.origin.Count(testOrigin+"/d/"+name) != 1 {
				return false
			}
		}
		return true
	})
	wait.For(t, "the warmed files to be stored", func() bool {
		tf.fs.notified(context.Background())
		tf.fs.notes.mu.Lock()
		defer tf.fs.notes.mu.Unlock()
		return tf.fs.notes.sent >= n-2
	})
	before := c.reads.Load()
	for i := range n {
		name := fmt.Sprintf("f%03d.txt", i)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, bodies[name], string(got), name)
	}
	assert.Equal(t, int64(1), c.reads.Load()-before, "READs for %d files, f000 read before: the refill point alone", n)
	for name := range bodies {
		assert.Equal(t, 1, tf.origin.Count(testOrigin+"/d/"+name), name)
	}
}
