package fs

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
)

// callerCtx is the context of a request from thread pid.
func callerCtx(pid uint32) context.Context {
	return &fuse.Context{Caller: fuse.Caller{Pid: pid}, Cancel: make(chan struct{})}
}

func TestReaddirPlusAnswersFilesInFullOnlyToProcessesThatStat(t *testing.T) {
	tf := newTestFS(t)
	data := tf.dir(t, "data")
	fh, _, errno := data.OpendirHandle(testCtx(t), 0)
	require.Equal(t, syscall.Errno(0), errno)
	h := fh.(*dirHandle)
	plus := func(pid uint32, name string) (fuse.EntryOut, syscall.Errno) {
		// go-fuse sends node ID 0 for an entry whose lookup fails.
		t.Helper()
		require.Equal(t, syscall.Errno(0), h.Seekdir(testCtx(t), 0))
		for {
			e, errno := h.Readdirent(testCtx(t))
			require.Equal(t, syscall.Errno(0), errno)
			require.NotNil(t, e, "%s not listed", name)
			if e.Name == name {
				break
			}
		}
		var out fuse.EntryOut
		child, errno := h.Lookup(callerCtx(pid), name, &out)
		assert.Equal(t, errno == 0, child != nil)
		return out, errno
	}

	_, errno = plus(42, "a.txt")
	assert.Equal(t, errNoPlus, errno, "a file, to a process that has looked up no file")
	out, errno := plus(42, "sub")
	assert.Equal(t, syscall.Errno(0), errno, "directories are always answered in full")
	assert.True(t, out.Attr.IsDir())

	var lookOut fuse.EntryOut
	_, errno = data.Lookup(callerCtx(42), "bad.bin", &lookOut)
	require.Equal(t, syscall.Errno(0), errno)
	out, errno = plus(42, "a.txt")
	require.Equal(t, syscall.Errno(0), errno, "process 42 stats what it lists")
	assert.Equal(t, uint64(aIno), out.Attr.Ino)
	assert.Equal(t, uint64(len(aBody)), out.Attr.Size)
	_, errno = plus(43, "a.txt")
	assert.Equal(t, errNoPlus, errno, "another process has not")
}

func TestListingIsCachedOnlyForProcessesThatDoNotStat(t *testing.T) {
	tf := newTestFS(t)
	data := tf.dir(t, "data")
	_, open, errno := data.OpendirHandle(callerCtx(42), 0)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, uint32(fuse.FOPEN_CACHE_DIR|fuse.FOPEN_KEEP_CACHE), open, "names are all process 42 needs")

	var out fuse.EntryOut
	_, errno = data.Lookup(callerCtx(42), "a.txt", &out)
	require.Equal(t, syscall.Errno(0), errno)
	_, open, _ = data.OpendirHandle(callerCtx(42), 0)
	assert.Zero(t, open, "process 42 stats what it lists: its READDIRPLUS must reach rsfs")
}

// TestFindCreatesNoInodePerFile lists the mount with find, which never
// stats a file, then with ls -l, which stats every one.
func TestFindCreatesNoInodePerFile(t *testing.T) {
	for _, tool := range []string{"find", "ls"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	tf := newUnmountedFS(t)
	dir := mountTestFS(t, tf, true)
	id, a, ok := tf.cat.Lookup(tf.dataID(t), "a.txt")
	require.True(t, ok)

	out, err := exec.Command("find", dir).Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), filepath.Join(dir, "data", "a.txt"))
	assert.Nil(t, tf.fs.inode(id), "find made go-fuse hold an inode for a file")
	assert.NotNil(t, tf.fs.inode(tf.dataID(t)), "find descends into data")
	assert.Zero(t, tf.fs.statters.count(), "find looked up a file by name")

	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(dir, "data", "a.txt"), &st))
	assert.Equal(t, a.Size, st.Size, "the entry find listed carried no stale attributes")

	out, err = exec.Command("ls", "-lR", "--time-style=+", dir).Output()
	require.NoError(t, err)
	sizes := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 6 && strings.HasPrefix(f[0], "-") {
			sizes[f[len(f)-1]] = f[4]
		}
	}
	assert.Equal(t, map[string]string{"a.txt": "11", "bad.bin": "23", "c.txt": "1", "top.txt": "16"}, sizes)
	assert.NotZero(t, tf.fs.statters.count(), "ls -l stats what it lists")
}

// count is the number of processes recorded, read under the lock: the
// mount's server goroutines mark them while the test reads.
func (s *statters) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pids)
}

// dataID is the node ID of the directory data.
func (tf *testFS) dataID(t *testing.T) catalog.NodeID {
	t.Helper()
	id, _, ok := tf.cat.Lookup(catalog.RootID, "data")
	require.True(t, ok)
	return id
}
