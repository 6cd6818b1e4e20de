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

// mountSmallFiles mounts small files of the given directories, n in each
// (dir/f000.txt, ...), with sha-256 hashes, counting the READs that reach
// rsfs. It returns the test FS, the counter, the mount's root and the
// files' bodies by path under it.
func mountSmallFiles(t *testing.T, n int, dirs ...string) (*testFS, *readCounter, string, map[string]string) {
	cat := catalog.New(catalog.Options{Origin: testOrigin})
	bodies := map[string]string{}
	for _, d := range dirs {
		for i := range n {
			rel := fmt.Sprintf("%s/f%03d.txt", d, i)
			bodies[rel] = fmt.Sprintf("bytes of %s, %d of them\n", rel, i)
			require.NoError(t, cat.Add(&catalog.Resource{URI: testOrigin + "/" + rel, Length: int64(len(bodies[rel])),
				Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: cachetest.SHA256Hex([]byte(bodies[rel]))}}}))
		}
	}
	require.NoError(t, cat.Seal())
	tf := newTestFSOver(t, cat)
	for rel, body := range bodies {
		tf.origin.Set(testOrigin+"/"+rel, []byte(body))
	}
	c := &readCounter{FS: tf.fs}
	return tf, c, mountRaw(t, tf, c, true, nil), bodies
}

// A walk's first read warms its directory, and the warmed files are handed
// to the kernel's page cache: the reader then reads them with no READ,
// byte for byte, but for the window's refill point, left for rsfs to see.
func TestWarmedFilesAreReadFromThePageCache(t *testing.T) {
	const n = 40 // at least warmRefill: the window has a refill point
	tf, c, root, bodies := mountSmallFiles(t, n, "d")
	dir := filepath.Join(root, "d")
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
	require.Equal(t, bodies["d/f000.txt"], string(got))
	wait.For(t, "the directory to be warmed", func() bool {
		for rel := range bodies {
			if tf.origin.Count(testOrigin+"/"+rel) != 1 {
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
		require.Equal(t, bodies["d/"+name], string(got), name)
	}
	assert.Equal(t, int64(1), c.reads.Load()-before, "READs for %d files, f000 read before: the refill point alone", n)
	for rel := range bodies {
		assert.Equal(t, 1, tf.origin.Count(testOrigin+"/"+rel), rel)
	}
}

// A walk's window runs on into the next directory before its reader lists
// it: the kernel holds none of those files' inodes when they are warmed.
// The listing that gives it them stores their pages before it is answered,
// so the reader reads them with no READ too, but for the refill point.
func TestFilesWarmedBeforeTheirListingAreReadFromThePageCache(t *testing.T) {
	const n = 40 // per directory: the first fill has a refill point
	tf, c, root, bodies := mountSmallFiles(t, n, "a", "b")
	runtime.LockOSThread() // rsfs knows a process by the thread the kernel names
	defer runtime.UnlockOSThread()
	_, err := os.Stat(filepath.Join(root, "a", "f000.txt")) // as grep -r: its listings are answered in full
	require.NoError(t, err)
	_, err = os.ReadDir(filepath.Join(root, "a"))
	require.NoError(t, err)
	read := func(rel string) {
		got, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		require.Equal(t, bodies[rel], string(got), rel)
	}
	fetched := func(d string) func() bool {
		return func() bool {
			for i := range n {
				if tf.origin.Count(fmt.Sprintf("%s/%s/f%03d.txt", testOrigin, d, i)) != 1 {
					return false
				}
			}
			return true
		}
	}
	read("a/f000.txt")
	wait.For(t, "a/ to be warmed", fetched("a"))
	for i := range n { // past the refill point: the window runs on into b/
		read(fmt.Sprintf("a/f%03d.txt", i))
	}
	wait.For(t, "b/ to be warmed before it is listed", fetched("b"))
	stores := tf.fs.pageStores.Load()
	entries, err := os.ReadDir(filepath.Join(root, "b"))
	require.NoError(t, err)
	require.Len(t, entries, n)
	assert.GreaterOrEqual(t, tf.fs.pageStores.Load()-stores, int64(n-1), "b/'s files stored by its listing")
	before := c.reads.Load()
	for i := range n {
		read(fmt.Sprintf("b/f%03d.txt", i))
	}
	assert.Equal(t, int64(1), c.reads.Load()-before, "READs for b/'s %d files: the refill point alone", n)
	for rel := range bodies {
		assert.Equal(t, 1, tf.origin.Count(testOrigin+"/"+rel), rel)
	}
}
