package fs

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kernel's forgets give the heap back once
// the inodes have fallen by a quarter of their peak and by at least min,
// and once for that fall.
func TestForgetsReturnMemory(t *testing.T) {
	tf := newTestFS(t)
	var returned atomic.Int32
	in := &tf.fs.inodes
	in.min, in.settle, in.every = 3, 20*time.Millisecond, 20*time.Millisecond
	in.free = func() { returned.Add(1) }
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
	time.Sleep(100 * time.Millisecond)
	assert.Zero(t, returned.Load(), "2 forgotten: less than min")

	raw.Forget(files[2], 1)
	waitFor(t, "the return", func() bool { return returned.Load() == 1 })
	assert.EqualValues(t, 3, in.live.Load())

	raw.Forget(files[3], 1)
	raw.Forget(sub, 1)
	require.EqualValues(t, 1, in.live.Load())
	assert.Equal(t, 1, tf.fs.nodes.len(), "data, still held")
	time.Sleep(100 * time.Millisecond)
	assert.EqualValues(t, 1, returned.Load(), "2 forgotten since the return: less than min")
}
