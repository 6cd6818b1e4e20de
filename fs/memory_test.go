package fs

import (
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/tests/wait"
)

// The kernel's forgets give the heap back once
// the inodes have fallen by a quarter of their peak and by at least min,
// and once for that fall. Whether a forget asks for a return is decided in
// Forget itself (a kick of the returner), so the tests look for the kick
// while nothing can take it, instead of sleeping for a return that should
// not come.
func TestForgetsReturnMemory(t *testing.T) {
	tf := newTestFS(t)
	var returned atomic.Int32
	freeing, release := make(chan struct{}, 4), make(chan struct{})
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock)
	in := &tf.fs.inodes
	in.min, in.settle, in.every = 3, 20*time.Millisecond, 20*time.Millisecond
	in.free = func() {
		returned.Add(1)
		freeing <- struct{}{}
		<-release
	}
	raw := tf.fs

	lookup := func(parent uint64, name string) uint64 {
		var out fuse.EntryOut
		require.Equal(t, fuse.OK, raw.Lookup(nil, &fuse.InHeader{NodeId: parent}, name, &out), name)
		return out.NodeId
	}
	data := lookup(fuse.FUSE_ROOT_ID, "data")
	sub := lookup(data, "sub")
	files := []uint64{lookup(fuse.FUSE_ROOT_ID, "top.txt"), lookup(data, "a.txt"), lookup(data, "bad.bin"), lookup(sub, "c.txt")}
	require.EqualValues(t, 6, in.live.Load(), "2 directories, 4 files")
	require.Equal(t, 6, tf.fs.nodes.len())

	raw.Forget(files[0], 1)
	raw.Forget(files[1], 1)
	assert.False(t, in.started.Load(), "2 forgotten, less than min: no returner started")
	assert.Zero(t, len(in.kick), "2 forgotten, less than min: no return asked for")

	raw.Forget(files[2], 1)
	select {
	case <-freeing:
	case <-time.After(10 * time.Second):
		t.Fatal("3 forgotten: no return within 10 s")
	}
	assert.EqualValues(t, 1, returned.Load())
	assert.EqualValues(t, 3, in.live.Load())

	// The returner is in free, and takes no kick until it is released.
	raw.Forget(files[3], 1)
	raw.Forget(sub, 1)
	require.EqualValues(t, 1, in.live.Load())
	assert.Equal(t, 1, tf.fs.nodes.len(), "data, still held")
	assert.Zero(t, len(in.kick), "2 forgotten since the return, less than min: no return asked for")
	unblock()

	// The last one makes a fall of 3 since the return: returned once more.
	raw.Forget(data, 1)
	select {
	case <-freeing:
	case <-time.After(10 * time.Second):
		t.Fatal("3 forgotten since the return: no return within 10 s")
	}
	assert.EqualValues(t, 2, returned.Load())
	assert.Zero(t, in.live.Load())
}

// A stat of every file makes an inode each in the kernel and an entry each
// in the node table; when the kernel drops its caches it forgets them all,
// and the table falls to the inodes still held: none here.
func TestDropCachesForgetsEveryInode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("drop_caches needs root")
	}
	const files, dirs = 3000, 30
	cat := catalog.New(catalog.Options{Origin: testOrigin})
	for i := range files {
		cat.Add(&catalog.Resource{URI: fmt.Sprintf("%s/d%02d/f%04d.txt", testOrigin, i%dirs, i), Length: 1})
	}
	cat.Seal()
	tf := newTestFSOver(t, cat)
	dir := mountTestFS(t, tf, true)

	stated := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		require.EqualValues(t, 1, fi.Size())
		stated++
		return nil
	}))
	require.Equal(t, files, stated)
	require.GreaterOrEqual(t, tf.fs.nodes.len(), files+dirs, "an inode per file and directory")
	require.Equal(t, 3+1, tf.fs.nodes.pages(), "3,000 files in 3 pages of 1,024, 30 directories in 1")
	require.EqualValues(t, tf.fs.nodes.len(), tf.fs.inodes.live.Load())

	require.NoError(t, os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0))
	wait.For(t, "the kernel's forgets", func() bool { return tf.fs.nodes.len() == 0 })
	assert.Zero(t, tf.fs.inodes.live.Load())
	assert.Zero(t, tf.fs.nodes.pages(), "every page of the table given up")
	tf.fs.nodes.mu.Lock()
	assert.Empty(t, tf.fs.nodes.slots)
	assert.Empty(t, tf.fs.nodes.newer)
	tf.fs.nodes.mu.Unlock()

	// The tree still reads after it: the kernel looks it up again.
	fi, err := os.Stat(filepath.Join(dir, "d07", "f0007.txt"))
	require.NoError(t, err)
	assert.EqualValues(t, 1, fi.Size())
	assert.Equal(t, 2, tf.fs.nodes.len(), "d07 and its file, and nothing else")
}

// TestHeapPerKernelInode measures the heap an inode the kernel holds costs
// rsfs (what a LOOKUP leaves live, and what its FORGET gives back), which
// sets the inodes' fall that is worth a return to the OS (returnMin, from
// inodeHeap): about 48 bytes each where the kernel holds the inodes of a
// walk (catalog IDs dense, pages full), up to a 48 KiB page each where it
// holds one in every 1,024 catalog IDs.
func TestHeapPerKernelInode(t *testing.T) {
	const dirs, perDir = 1000, 200
	cat := catalog.New(catalog.Options{Origin: testOrigin})
	for d := range dirs {
		for i := range perDir {
			cat.Add(&catalog.Resource{URI: fmt.Sprintf("%s/d%04d/f%03d.txt", testOrigin, d, i), Length: 1})
		}
	}
	cat.Seal()
	tf := newTestFSOver(t, cat)
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	lookup := func(parent uint64, name string) uint64 {
		var out fuse.EntryOut
		h := fuse.InHeader{NodeId: parent}
		if st := tf.fs.Lookup(nil, &h, name, &out); st != fuse.OK || out.NodeId == 0 {
			t.Fatalf("lookup %s: %v", name, st)
		}
		return out.NodeId
	}
	walk := func(held []uint64, every int) []uint64 {
		for d := range dirs {
			dir := lookup(fuse.FUSE_ROOT_ID, fmt.Sprintf("d%04d", d))
			held = append(held, dir)
			for i := 0; i < perDir; i++ {
				if (d*perDir+i)%every == 0 {
					held = append(held, lookup(dir, fmt.Sprintf("f%03d.txt", i)))
				}
			}
		}
		return held
	}
	measure := func(name string, every int) (perInode float64) {
		held := make([]uint64, 0, dirs*(perDir+1)) // before base: not counted
		base := heap()
		held = walk(held, every)
		live := heap()
		for _, nid := range held {
			tf.fs.Forget(nid, 1)
		}
		after := heap()
		runtime.KeepAlive(held)
		require.Zero(t, tf.fs.nodes.len())
		perInode = float64(live-base) / float64(len(held))
		t.Logf("%s: %d inodes held, heap +%d bytes (%.1f an inode); forgotten, -%d bytes",
			name, len(held), live-base, perInode, live-after)
		assert.Greater(t, live-after, (live-base)*9/10, "%s: forgetting gives the heap back", name)
		return perInode
	}
	dense := measure("a walk (every file)", 1)
	assert.Less(t, dense, inodeHeap*1.05, "bytes an inode, dense: inodeHeap, and so returnMin, is out of date")
	sparse := measure("one file in 1,024", 1024)
	assert.Greater(t, sparse, 1000.0, "bytes an inode, sparse: a page each")
}
