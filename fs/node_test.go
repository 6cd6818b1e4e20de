package fs

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/tests/wait"
)

// These tests call the file system's FUSE methods directly, with no
// kernel: what each answers is what the kernel would be told.

func TestLookupFile(t *testing.T) {
	tf := newTestFS(t)
	nid, out := tf.lookup(t, "data", "a.txt")
	a := out.Attr
	assert.Equal(t, uint32(syscall.S_IFREG), a.Mode&syscall.S_IFMT, "a file")
	assert.Equal(t, nid, out.NodeId)
	assert.NotEqual(t, uint64(fuse.FUSE_ROOT_ID), nid)
	assert.Equal(t, uint64(aIno), a.Ino, "inode from the URI")
	assert.Equal(t, uint32(syscall.S_IFREG|0o444), a.Mode)
	assert.Equal(t, uint64(11), a.Size)
	assert.Equal(t, uint64(1), a.Blocks, "11 bytes in 512-byte blocks")
	assert.Equal(t, uint32(4096), a.Blksize)
	assert.Equal(t, uint32(1), a.Nlink)
	assert.Equal(t, uint32(testUID), a.Uid)
	assert.Equal(t, uint32(testGID), a.Gid)
	want := uint64(aMtime.Unix())
	assert.Equal(t, [3]uint64{want, want, want}, [3]uint64{a.Mtime, a.Ctime, a.Atime}, "mtime, ctime and atime are the lastmod")
	assert.Equal(t, [3]uint32{5e8, 5e8, 5e8}, [3]uint32{a.Mtimensec, a.Ctimensec, a.Atimensec})
	assert.Equal(t, testTimeout, out.EntryTimeout())
	assert.Equal(t, testTimeout, out.AttrTimeout())

	again, out2 := tf.lookup(t, "data", "a.txt")
	assert.Equal(t, nid, again, "the same version: the same inode")
	assert.Equal(t, out.Generation, out2.Generation)
}

func TestLookupDirectory(t *testing.T) {
	tf := newTestFS(t)
	_, out := tf.lookup(t, "data")
	assert.Equal(t, uint32(syscall.S_IFDIR), out.Attr.Mode&syscall.S_IFMT, "a directory")
	assert.Equal(t, uint64(dataIno), out.Attr.Ino, "inode from the path")
	assert.Equal(t, uint32(syscall.S_IFDIR|0o555), out.Attr.Mode)
	assert.Equal(t, uint32(3), out.Attr.Nlink, "2 + one subdirectory")
	assert.Equal(t, uint64(aMtime.Unix()), out.Attr.Mtime, "the newest mtime below")
}

// A missing name is answered as a negative entry: OK with node ID 0 and
// the entry timeout, which the kernel keeps (the process sees ENOENT) so
// that a name probed again costs no LOOKUP. No inode is made.
func TestLookupMissingIsANegativeEntry(t *testing.T) {
	tf := newTestFS(t)
	out := fuse.EntryOut{NodeId: 99, Generation: 7}
	h := header(fuse.FUSE_ROOT_ID)
	assert.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, "nothing", &out))
	assert.Zero(t, out.NodeId, "no inode: a negative entry")
	assert.Zero(t, out.Generation)
	assert.Equal(t, testTimeout, out.EntryTimeout(), "kept as long as any entry")
	data := tf.dir(t, "data")
	h = header(data)
	out = fuse.EntryOut{}
	assert.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, "A.txt", &out), "names are case-sensitive")
	assert.Zero(t, out.NodeId)
	assert.Equal(t, testTimeout, out.EntryTimeout())
	assert.Equal(t, 1, tf.fs.nodes.len(), "only data is held: a failed lookup makes no inode")
}

func TestGetattr(t *testing.T) {
	tf := newTestFS(t)
	out, st := tf.getattr(t, tf.file(t, "top.txt"))
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, uint32(syscall.S_IFREG|0o444), out.Mode)
	assert.Equal(t, uint64(len(topBody)), out.Size)
	assert.Equal(t, uint64(aMtime.Unix()), out.Mtime)
	assert.Equal(t, testTimeout, out.Timeout())

	out, st = tf.getattr(t, tf.file(t, "data", "sub", "c.txt"))
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, uint64(0), out.Mtime, "no lastmod published: the epoch")
	assert.Equal(t, uint32(0), out.Mtimensec)

	out, st = tf.getattr(t, fuse.FUSE_ROOT_ID)
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, uint32(syscall.S_IFDIR|0o555), out.Mode)
	assert.Equal(t, uint32(testUID), out.Uid)
}

// An inode whose resource is gone answers as an unlinked file held open
// on a local disk does: its own size and mtime, no link. Its bytes, never
// read and not kept (nothing told rsfs to keep them), fail with EIO.
func TestRemovedResourceIsUnlinked(t *testing.T) {
	tf := newTestFS(t)
	top := tf.file(t, "top.txt")
	tf.cat.Remove(topURI)
	out, st := tf.getattr(t, top)
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, uint64(len(topBody)), out.Size)
	assert.Equal(t, uint64(aMtime.Unix()), out.Mtime)
	assert.Equal(t, uint32(0), out.Nlink)
	_, errno := tf.readOnce(t, top, 64, 0)
	assert.Equal(t, syscall.EIO, errno)
	assert.Zero(t, tf.origin.Count(topURI), "nothing fetched for a version that is gone")
}

// An inode is one version: a new version of its resource unlinks it, and a
// lookup by name, while the kernel still holds the old inode, makes another
// inode (another node ID), with the new size and generation and the same
// inode number.
func TestNewVersionIsANewNode(t *testing.T) {
	tf := newTestFS(t)
	old, oldOut := tf.lookup(t, "top.txt")
	body := []byte("the second version\n")
	tf.origin.Set(topURI, body)
	tf.cat.Upsert(&catalog.Resource{URI: topURI, Length: int64(len(body)), Lastmod: aMtime.Add(time.Hour)})
	out, st := tf.getattr(t, old)
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, uint64(len(topBody)), out.Size, "the old inode keeps its size")
	assert.Equal(t, uint32(0), out.Nlink)

	n, newOut := tf.lookup(t, "top.txt")
	assert.NotEqual(t, old, n, "a new version is a new inode")
	assert.NotEqual(t, oldOut.Generation, newOut.Generation)
	assert.Equal(t, oldOut.Attr.Ino, newOut.Attr.Ino, "one inode number per resource")
	assert.Equal(t, uint64(len(body)), newOut.Attr.Size)
	assert.Equal(t, uint32(1), newOut.Attr.Nlink)
	got, errno := tf.readAll(t, n, 64)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, string(body), string(got))

	out, st = tf.getattr(t, old)
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, uint64(len(topBody)), out.Size, "the old inode is unchanged by the new one")
	assert.Equal(t, 2, tf.fs.nodes.len(), "both versions are held")
}

func TestReaddir(t *testing.T) {
	tf := newTestFS(t)
	got := tf.list(t, fuse.FUSE_ROOT_ID)
	require.Len(t, got, 2)
	assert.Equal(t, fuse.DirEntry{Name: "data", Mode: syscall.S_IFDIR, Ino: dataIno, Off: 1}, got[0])
	assert.Equal(t, "top.txt", got[1].Name)
	assert.Equal(t, uint32(syscall.S_IFREG), got[1].Mode)
	assert.Equal(t, uint64(2), got[1].Off)

	got = tf.list(t, tf.dir(t, "data"))
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"a.txt", "bad.bin", "sub"}, names)
	assert.Equal(t, uint64(aIno), got[0].Ino, "the same inode as lookup gives")
}

// names are the names of a READDIR or READDIRPLUS answer.
func names(ls []listed) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

// READDIRPLUS answers a file in full only for a process that has looked a
// file up by name (plus.go), a directory always; a READDIR at offset off
// lists from the entry after the one whose Off is off.
func TestReaddirPlusAndOffsets(t *testing.T) {
	tf := newTestFS(t)
	data := tf.dir(t, "data")
	fh, _ := tf.opendir(t, data, 0)
	got, st := tf.readdir(t, data, fh, 0, 4096, true, 0)
	require.Equal(t, fuse.OK, st)
	require.Equal(t, []string{"a.txt", "bad.bin", "sub"}, names(got))
	assert.Zero(t, got[0].entry.NodeId, "a.txt: no process has looked up a file yet")
	assert.Zero(t, got[1].entry.NodeId, "bad.bin")
	assert.NotZero(t, got[2].entry.NodeId, "sub: a directory, in full")
	assert.Equal(t, uint32(syscall.S_IFDIR), got[2].entry.Attr.Mode&syscall.S_IFMT)

	tf.file(t, "top.txt")
	got, st = tf.readdir(t, data, fh, 0, 4096, true, 0)
	require.Equal(t, fuse.OK, st)
	require.Equal(t, "a.txt", got[0].Name, "offset 0 lists again from the start")
	a := got[0].entry
	require.NotZero(t, a.NodeId, "a.txt, in full now")
	assert.Equal(t, uint32(syscall.S_IFREG), a.Attr.Mode&syscall.S_IFMT)
	assert.Equal(t, uint64(aIno), a.Attr.Ino)
	assert.Equal(t, uint64(len(aBody)), a.Attr.Size)
	assert.Equal(t, testTimeout, a.EntryTimeout())
	nid, _ := tf.lookup(t, "data", "a.txt")
	assert.Equal(t, nid, a.NodeId, "the inode a lookup by name gives")

	got, st = tf.readdir(t, data, fh, 1, 4096, false, 0)
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, []string{"bad.bin", "sub"}, names(got), "offset 1: after a.txt")
	assert.Equal(t, []uint64{2, 3}, []uint64{got[0].Off, got[1].Off})
	got, st = tf.readdir(t, data, fh, 3, 4096, false, 0)
	assert.Equal(t, fuse.OK, st)
	assert.Empty(t, got, "offset 3 is past the last of 3 entries")
	_, st = tf.readdir(t, data, fh, 4, 4096, false, 0)
	assert.Equal(t, fuse.EINVAL, st)
	_, st = tf.readdir(t, data, fh, 4, 4096, true, 0)
	assert.Equal(t, fuse.EINVAL, st, "READDIRPLUS")
}

func TestReaddirIsASnapshot(t *testing.T) {
	tf := newTestFS(t)
	fh, _ := tf.opendir(t, fuse.FUSE_ROOT_ID, 0)
	// A buffer of 32 bytes holds one entry: "data".
	first, st := tf.readdir(t, fuse.FUSE_ROOT_ID, fh, 0, 32, false, 0)
	require.Equal(t, fuse.OK, st)
	require.Equal(t, []string{"data"}, names(first))
	tf.cat.Remove(topURI)
	second, st := tf.readdir(t, fuse.FUSE_ROOT_ID, fh, first[0].Off, 4096, false, 0)
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, []string{"top.txt"}, names(second), "an open listing does not change under its reader")
	assert.Len(t, tf.list(t, fuse.FUSE_ROOT_ID), 1, "a new open sees the change")
}

// openOut answers OPEN for nid with flags, whole.
func (tf *testFS) openOut(nid uint64, flags uint32) (fuse.OpenOut, fuse.Status) {
	var out fuse.OpenOut
	st := tf.fs.Open(nil, &fuse.OpenIn{InHeader: header(nid), Flags: flags}, &out)
	return out, st
}

func TestOpenAndRead(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "data", "a.txt")
	out, st := tf.openOut(n, syscall.O_RDONLY)
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, uint32(fuse.FOPEN_KEEP_CACHE), out.OpenFlags)
	assert.Zero(t, out.Fh, "the inode is the version: an open has nothing to hold")

	got, errno := tf.readAll(t, n, 4)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, "hello world", string(got))

	b, errno := tf.readOnce(t, n, 5, 6)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, "world", string(b))
	b, errno = tf.readOnce(t, n, 5, 100)
	require.Equal(t, syscall.Errno(0), errno, "past the end is EOF, not an error")
	assert.Empty(t, b)
	assert.Equal(t, 1, tf.origin.Count(aURI), "one block, fetched once")
}

func TestReadOfBytesThatDisagreeIsEIO(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "data", "bad.bin")
	got, errno := tf.readAll(t, n, 64)
	assert.Equal(t, syscall.EIO, errno)
	assert.Empty(t, got, "not one byte that fails the hash")
}

// Where the kernel opens files without asking, OPEN is ENOSYS: the kernel
// stops sending it.
func TestOpenIsENOSYSWhereTheKernelAllows(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "top.txt")
	tf.fs.Mounted(&fuse.InitIn{Flags: fuse.CAP_NO_OPEN_SUPPORT})
	_, st := tf.open(n, syscall.O_RDONLY)
	assert.Equal(t, fuse.ENOSYS, st)
	_, st = tf.open(n, syscall.O_WRONLY)
	assert.Equal(t, fuse.EROFS, st, "writing is refused all the same")
	tf.fs.Mounted(&fuse.InitIn{})
	flags, st := tf.open(n, syscall.O_RDONLY)
	assert.Equal(t, fuse.OK, st, "a kernel that cannot open without asking")
	assert.Equal(t, uint32(fuse.FOPEN_KEEP_CACHE), flags)
}

func TestOpenForWritingIsEROFS(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "top.txt")
	for _, flags := range []int{syscall.O_WRONLY, syscall.O_RDWR, syscall.O_RDONLY | syscall.O_TRUNC, syscall.O_WRONLY | syscall.O_APPEND} {
		out, st := tf.openOut(n, uint32(flags))
		assert.Zero(t, out.Fh)
		assert.Equal(t, fuse.EROFS, st, "flags %#o", flags)
	}
	assert.Zero(t, tf.origin.Count(topURI))
}

func TestShutdownFailsOpenAndRead(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "top.txt")
	tf.fs.Shutdown()
	_, errno := tf.readOnce(t, n, 10, 0)
	assert.Equal(t, syscall.EIO, errno, "a read after shutdown")
	_, st := tf.open(n, syscall.O_RDONLY)
	assert.Equal(t, fuse.EIO, st, "an open after shutdown")
	assert.Zero(t, tf.origin.Count(topURI), "nothing fetched after the shutdown")
}

func TestFirstReadWarmsTheNextSmallFiles(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "data", "a.txt")
	_, errno := tf.readOnce(t, n, 64, 0)
	require.Equal(t, syscall.Errno(0), errno)
	wait.For(t, "bad.bin, next in data/, to be fetched", func() bool { return tf.origin.Count(badURI) > 0 })
}

func TestGetxattr(t *testing.T) {
	tf := newTestFS(t)
	a := tf.file(t, "data", "a.txt")
	want := map[string]string{
		"user.resourcesync.uri":     aURI,
		"user.resourcesync.hash":    "md5:" + aMD5 + " sha-256:" + aSHA256,
		"user.resourcesync.type":    "text/plain",
		"user.resourcesync.lastmod": "2024-05-01T10:20:30.5Z",
	}
	for name, v := range want {
		_, size, errno := tf.getxattr(a, name, 0)
		require.Equal(t, syscall.Errno(0), errno, name)
		assert.Equal(t, uint32(len(v)), size, "%s: an empty buffer asks for the size", name)
		got, size, errno := tf.getxattr(a, name, 200)
		require.Equal(t, syscall.Errno(0), errno, name)
		assert.Equal(t, v, got, name)
		assert.Equal(t, uint32(len(v)), size, name)
		_, _, errno = tf.getxattr(a, name, len(v)-1)
		assert.Equal(t, syscall.ERANGE, errno, "%s: a short buffer", name)
	}
	_, _, errno := tf.getxattr(a, "user.other", 100)
	assert.Equal(t, syscall.ENODATA, errno)

	c := tf.file(t, "data", "sub", "c.txt")
	for _, name := range []string{"user.resourcesync.hash", "user.resourcesync.type", "user.resourcesync.lastmod"} {
		_, _, errno := tf.getxattr(c, name, 100)
		assert.Equal(t, syscall.ENODATA, errno, "%s: not published, so absent", name)
	}
	_, _, errno = tf.getxattr(tf.dir(t, "data"), "user.resourcesync.uri", 100)
	assert.Equal(t, syscall.ENODATA, errno, "a directory has no URI")
}

func TestListxattr(t *testing.T) {
	tf := newTestFS(t)
	list := func(nid uint64) string {
		_, size, errno := tf.listxattr(nid, 0)
		require.Equal(t, syscall.Errno(0), errno)
		if size == 0 {
			return ""
		}
		got, n, errno := tf.listxattr(nid, int(size))
		require.Equal(t, syscall.Errno(0), errno)
		require.Equal(t, size, n)
		return got
	}
	assert.Equal(t, "user.resourcesync.uri\x00user.resourcesync.hash\x00user.resourcesync.type\x00user.resourcesync.lastmod\x00",
		list(tf.file(t, "data", "a.txt")))
	assert.Equal(t, "user.resourcesync.uri\x00", list(tf.file(t, "data", "sub", "c.txt")))
	assert.Equal(t, "", list(tf.dir(t, "data")))
	_, _, errno := tf.listxattr(tf.file(t, "data", "a.txt"), 10)
	assert.Equal(t, syscall.ERANGE, errno)
}

func TestStatfs(t *testing.T) {
	tf := newTestFS(t)
	var out fuse.StatfsOut
	h := header(fuse.FUSE_ROOT_ID)
	require.Equal(t, fuse.OK, tf.fs.StatFs(nil, &h, &out))
	assert.Equal(t, uint32(4096), out.Bsize)
	assert.Equal(t, uint64(1), out.Blocks, "11+23+1+16 bytes fit one 4 KiB block")
	assert.Equal(t, uint64(4+3), out.Files, "4 files, 3 directories with the root")
	assert.Equal(t, uint32(255), out.NameLen)
}

// A file of one block holds no stream once its read ends (a grep -r over a
// million small files must not hold one per file); a larger file's stream
// stays for the reads to come.
func TestOnlyMultiBlockFilesKeepAStreamBetweenReads(t *testing.T) {
	tf := newTestFS(t)
	streams := func() int {
		tf.fs.versions.mu.Lock()
		defer tf.fs.versions.mu.Unlock()
		return len(tf.fs.versions.m)
	}
	got, errno := tf.readAll(t, tf.file(t, "data", "a.txt"), 4)
	require.Equal(t, syscall.Errno(0), errno)
	require.Equal(t, "hello world", string(got))
	assert.Zero(t, streams(), "a.txt, one block, read")

	// A read at the end has no payload, and go-fuse calls Done only for a
	// reply with one: the read must end without it.
	res, st := tf.read(tf.file(t, "data", "a.txt"), 4, 11)
	require.Equal(t, fuse.OK, st)
	assert.Zero(t, res.Size())
	assert.Zero(t, streams(), "a.txt, read at its end")

	uri := testOrigin + "/data/two-blocks.bin"
	body := bytes.Repeat([]byte("2"), 4096+10)
	tf.origin.Set(uri, body)
	tf.cat.Upsert(&catalog.Resource{URI: uri, Length: int64(len(body))})
	n := tf.file(t, "data", "two-blocks.bin")
	res, st = tf.read(n, 4096, 0)
	require.Equal(t, fuse.OK, st)
	assert.Equal(t, 4096, res.Size())
	assert.Equal(t, 1, streams(), "two-blocks.bin, being read")
	res.Done()
	assert.Equal(t, 1, streams(), "two-blocks.bin, half read")
}
