package fs

import (
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

// lookupAs looks name up in directory parent as the process of thread pid.
func (tf *testFS) lookupAs(t *testing.T, pid uint32, parent uint64, name string) fuse.EntryOut {
	t.Helper()
	h := header(parent)
	h.Caller.Pid = pid
	var out fuse.EntryOut
	require.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, name, &out), "lookup %s", name)
	return out
}

// holds reports whether the kernel was given an inode of catalog node id,
// at its current version.
func (tf *testFS) holds(t *testing.T, id catalog.NodeID) bool {
	t.Helper()
	a, ok := tf.cat.Attr(id)
	require.True(t, ok)
	if a.Dir {
		_, ok = tf.fs.nodes.holds(id)
		return ok
	}
	_, ok = tf.fs.nodes.version(id, a.Gen)
	return ok
}

func TestReaddirPlusAnswersFilesInFullOnlyToProcessesThatStat(t *testing.T) {
	tf := newTestFS(t)
	data := tf.dir(t, "data")
	aID, _, ok := tf.cat.Lookup(tf.dataID(t), "a.txt")
	require.True(t, ok)
	fh, _ := tf.opendir(t, data, 42)
	// plus is the entry READDIRPLUS, read from the start, answers for name
	// to the process of thread pid: node ID 0 (and nothing else) is a plain
	// entry, for which the kernel makes no inode.
	plus := func(pid uint32, name string) fuse.EntryOut {
		t.Helper()
		got, st := tf.readdir(t, data, fh, 0, 4096, true, pid)
		require.Equal(t, fuse.OK, st)
		for _, l := range got {
			if l.Name == name {
				if l.entry.NodeId == 0 {
					assert.Equal(t, fuse.EntryOut{}, l.entry, "%s: a plain entry carries no attributes", name)
				}
				return l.entry
			}
		}
		require.Fail(t, "not listed", name)
		return fuse.EntryOut{}
	}

	assert.Zero(t, plus(42, "a.txt").NodeId, "a file, to a process that has looked up no file")
	assert.False(t, tf.holds(t, aID), "no inode made for a.txt")
	out := plus(42, "sub")
	assert.NotZero(t, out.NodeId, "directories are always answered in full")
	assert.True(t, out.Attr.IsDir())

	tf.lookupAs(t, 42, data, "bad.bin")
	out = plus(42, "a.txt")
	require.NotZero(t, out.NodeId, "process 42 stats what it lists")
	assert.Equal(t, uint64(aIno), out.Attr.Ino)
	assert.Equal(t, uint64(len(aBody)), out.Attr.Size)
	assert.Equal(t, uint32(syscall.S_IFREG|0o444), out.Attr.Mode)
	assert.True(t, tf.holds(t, aID), "the kernel holds a.txt's inode")
	assert.Zero(t, plus(43, "a.txt").NodeId, "another process has not")
}

// TestListingIsCachedUnlessItHidesAttributes: the kernel may keep every
// listing, except that a process which stats what it lists must not be
// served one that answered its files plain (a LOOKUP per file): its open
// reads through rsfs and drops the kernel's copy, once.
func TestListingIsCachedUnlessItHidesAttributes(t *testing.T) {
	const cached = uint32(fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE)
	tf := newTestFS(t)
	data := tf.dir(t, "data")
	fh, open := tf.opendir(t, data, 42)
	assert.Equal(t, cached, open, "names are all process 42 needs")

	tf.lookupAs(t, 42, data, "sub")
	_, open = tf.opendir(t, data, 42)
	assert.Equal(t, cached, open, "a lookup of a directory says nothing, and nothing is listed yet")

	tf.lookupAs(t, 42, data, "a.txt")
	_, open = tf.opendir(t, data, 42)
	assert.Equal(t, cached, open, "process 42 stats what it lists, but the kernel holds no listing of data")

	_, st := tf.readdir(t, data, fh, 0, 4096, true, 43) // process 43 has looked up no file
	require.Equal(t, fuse.OK, st)
	_, open = tf.opendir(t, data, 43)
	assert.Equal(t, cached, open, "a plain listing serves process 43")
	_, open = tf.opendir(t, data, 42)
	assert.Zero(t, open, "the kernel's listing is plain: process 42's READDIRPLUS must reach rsfs")
	fh, open = tf.opendir(t, data, 42)
	assert.Equal(t, cached, open, "that open dropped the plain listing")

	_, st = tf.readdir(t, data, fh, 0, 4096, true, 42)
	require.Equal(t, fuse.OK, st)
	_, open = tf.opendir(t, data, 42)
	assert.Equal(t, cached, open, "a listing answered in full serves process 42")

	sub := tf.dir(t, "data", "sub")
	subFh, open := tf.opendir(t, sub, 43)
	require.Equal(t, cached, open)
	_, st = tf.readdir(t, sub, subFh, 0, 4096, true, 43)
	require.Equal(t, fuse.OK, st)
	_, open = tf.opendir(t, data, 42)
	assert.Equal(t, cached, open, "data/sub's plain listing says nothing of data's")
}

// TestSecondGrepIsTheKernels greps the mount twice: grep looks up the files
// it opens, so rsfs answers its listings in full, and the kernel keeps
// them; the second pass sends no READDIRPLUS and no LOOKUP. Then ls -lR,
// which stats every file, finds every listing and attribute in the
// kernel's caches.
func TestSecondGrepIsTheKernels(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("needs grep")
	}
	tf := newTestFS(t)
	dir, ops := mountLogged(t, tf)
	grep := func() string {
		t.Helper()
		out, _ := exec.Command("grep", "-r", "-l", "o", dir).Output() // bad.bin fails its hash: status 2
		return string(out)
	}
	first := grep()
	require.Contains(t, first, filepath.Join(dir, "data", "a.txt"))
	require.NotZero(t, ops.count("READDIRPLUS"), "the first pass lists through rsfs")
	ops.reset()
	assert.Equal(t, first, grep())
	assert.Zero(t, ops.count("READDIRPLUS"), "the second pass reads the kernel's listings")
	assert.Zero(t, ops.count("LOOKUP"), "and its entries")

	ops.reset()
	out, err := exec.Command("ls", "-lR", dir).Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "a.txt")
	assert.Zero(t, ops.count("READDIRPLUS"), "ls -lR after grep")
	assert.Zero(t, ops.count("LOOKUP"), "ls -lR after grep")
}

// TestFindCreatesNoInodePerFile lists the mount with find, which never
// stats a file, then with ls -l, which stats every one.
func TestFindCreatesNoInodePerFile(t *testing.T) {
	for _, tool := range []string{"find", "ls"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	tf := newTestFS(t)
	dir, ops := mountLogged(t, tf)
	id, a, ok := tf.cat.Lookup(tf.dataID(t), "a.txt")
	require.True(t, ok)

	out, err := exec.Command("find", dir).Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), filepath.Join(dir, "data", "a.txt"))
	assert.False(t, tf.holds(t, id), "find made the kernel hold an inode for a file")
	assert.True(t, tf.holds(t, tf.dataID(t)), "find descends into data")
	assert.Zero(t, tf.fs.statters.len(), "find looked up a file by name")

	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(dir, "data", "a.txt"), &st))
	assert.Equal(t, a.Size, st.Size, "the entry find listed carried no stale attributes")

	ops.reset()
	out, err = exec.Command("ls", "-lR", "--time-style=+", dir).Output()
	require.NoError(t, err)
	// ls stats the top directory's one file with a LOOKUP, over find's
	// plain listing; every later listing is read through rsfs in full.
	assert.Equal(t, 1, ops.count("LOOKUP"), "ls -lR's LOOKUPs after find")
	sizes := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 6 && strings.HasPrefix(f[0], "-") {
			sizes[f[len(f)-1]] = f[4]
		}
	}
	assert.Equal(t, map[string]string{"a.txt": "11", "bad.bin": "23", "c.txt": "1", "top.txt": "16"}, sizes)
	assert.NotZero(t, tf.fs.statters.len(), "ls -l stats what it lists")
}

// dataID is the catalog node ID of the directory data.
func (tf *testFS) dataID(t *testing.T) catalog.NodeID {
	t.Helper()
	id, _, ok := tf.cat.Lookup(catalog.RootID, "data")
	require.True(t, ok)
	return id
}
