package fs

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
)

// These tests call the nodes' methods directly, with no kernel: what each
// answers is what the kernel would be told.

func TestLookupFile(t *testing.T) {
	tf := newTestFS(t)
	n, out := tf.lookup(t, "data", "a.txt")
	require.IsType(t, &fileNode{}, n)
	a := out.Attr
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
}

func TestLookupDirectory(t *testing.T) {
	tf := newTestFS(t)
	n, out := tf.lookup(t, "data")
	require.IsType(t, &dirNode{}, n)
	assert.Equal(t, uint64(dataIno), out.Attr.Ino, "inode from the path")
	assert.Equal(t, uint32(syscall.S_IFDIR|0o555), out.Attr.Mode)
	assert.Equal(t, uint32(3), out.Attr.Nlink, "2 + one subdirectory")
	assert.Equal(t, uint64(aMtime.Unix()), out.Attr.Mtime, "the newest mtime below")
}

func TestLookupMissingIsENOENTAndCachedNegative(t *testing.T) {
	tf := newTestFS(t)
	var out fuse.EntryOut
	child, errno := tf.root.Lookup(testCtx(t), "nothing", &out)
	assert.Nil(t, child)
	assert.Equal(t, syscall.ENOENT, errno)
	assert.Equal(t, testTimeout, out.EntryTimeout(), "the kernel may cache the negative entry")
	data := tf.dir(t, "data")
	_, errno = data.Lookup(testCtx(t), "A.txt", &out)
	assert.Equal(t, syscall.ENOENT, errno, "names are case-sensitive")
}

func TestGetattr(t *testing.T) {
	tf := newTestFS(t)
	var out fuse.AttrOut
	require.Equal(t, syscall.Errno(0), tf.file(t, "top.txt").Getattr(testCtx(t), nil, &out))
	assert.Equal(t, uint32(syscall.S_IFREG|0o444), out.Mode)
	assert.Equal(t, uint64(len(topBody)), out.Size)
	assert.Equal(t, uint64(aMtime.Unix()), out.Mtime)
	assert.Equal(t, testTimeout, out.Timeout())

	out = fuse.AttrOut{}
	require.Equal(t, syscall.Errno(0), tf.file(t, "data", "sub", "c.txt").Getattr(testCtx(t), nil, &out))
	assert.Equal(t, uint64(0), out.Mtime, "no lastmod published: the epoch")
	assert.Equal(t, uint32(0), out.Mtimensec)

	out = fuse.AttrOut{}
	require.Equal(t, syscall.Errno(0), tf.root.Getattr(testCtx(t), nil, &out))
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
	var out fuse.AttrOut
	require.Equal(t, syscall.Errno(0), top.Getattr(testCtx(t), nil, &out))
	assert.Equal(t, uint64(len(topBody)), out.Size)
	assert.Equal(t, uint64(aMtime.Unix()), out.Mtime)
	assert.Equal(t, uint32(0), out.Nlink)
	_, errno := readOnce(t, top, nil, 64, 0)
	assert.Equal(t, syscall.EIO, errno)
	assert.Zero(t, tf.origin.count(topURI), "nothing fetched for a version that is gone")
}

// A node is one version: a new version of its resource unlinks it, and a
// lookup by name makes another node, with the new size and Gen.
func TestNewVersionIsANewNode(t *testing.T) {
	tf := newTestFS(t)
	old := tf.file(t, "top.txt")
	body := []byte("the second version\n")
	tf.origin.set(topURI, body)
	tf.cat.Upsert(&catalog.Resource{URI: topURI, Length: int64(len(body)), Lastmod: aMtime.Add(time.Hour)})
	var out fuse.AttrOut
	require.Equal(t, syscall.Errno(0), old.Getattr(testCtx(t), nil, &out))
	assert.Equal(t, uint64(len(topBody)), out.Size, "the old node keeps its size")
	assert.Equal(t, uint32(0), out.Nlink)

	n := tf.file(t, "top.txt")
	assert.NotEqual(t, old.StableAttr().Gen, n.StableAttr().Gen)
	assert.Equal(t, old.StableAttr().Ino, n.StableAttr().Ino, "one inode number per resource")
	got, errno := readAll(t, n, nil, 64)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, string(body), string(got))
}

// readdir lists a directory through an open handle, as the kernel does.
func readdir(t *testing.T, d *dirNode) []fuse.DirEntry {
	t.Helper()
	fh, flags, errno := d.OpendirHandle(testCtx(t), 0)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Contains(t, []uint32{0, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE}, flags, "a listing is cached, or not kept (plus_test.go)")
	h := fh.(*dirHandle)
	defer h.Releasedir(testCtx(t), 0)
	var got []fuse.DirEntry
	for {
		e, errno := h.Readdirent(testCtx(t))
		require.Equal(t, syscall.Errno(0), errno)
		if e == nil {
			return got
		}
		got = append(got, *e)
	}
}

func TestReaddir(t *testing.T) {
	tf := newTestFS(t)
	got := readdir(t, tf.root)
	require.Len(t, got, 2)
	assert.Equal(t, fuse.DirEntry{Name: "data", Mode: syscall.S_IFDIR, Ino: dataIno, Off: 1}, got[0])
	assert.Equal(t, "top.txt", got[1].Name)
	assert.Equal(t, uint32(syscall.S_IFREG), got[1].Mode)
	assert.Equal(t, uint64(2), got[1].Off)

	got = readdir(t, tf.dir(t, "data"))
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"a.txt", "bad.bin", "sub"}, names)
	assert.Equal(t, uint64(aIno), got[0].Ino, "the same inode as lookup gives")
}

func TestReaddirSeekAndLookupFromHandle(t *testing.T) {
	tf := newTestFS(t)
	fh, _, errno := tf.dir(t, "data").OpendirHandle(testCtx(t), 0)
	require.Equal(t, syscall.Errno(0), errno)
	h := fh.(*dirHandle)
	first, errno := h.Readdirent(testCtx(t))
	require.Equal(t, syscall.Errno(0), errno)
	require.Equal(t, "a.txt", first.Name)

	// READDIRPLUS looks up the entry just returned: a file in full only for
	// a process that has looked a file up by name (plus.go).
	var out fuse.EntryOut
	_, errno = h.Lookup(testCtx(t), "a.txt", &out)
	require.Equal(t, errNoPlus, errno, "no process has looked up a file yet")
	tf.file(t, "top.txt")
	child, errno := h.Lookup(testCtx(t), "a.txt", &out)
	require.Equal(t, syscall.Errno(0), errno)
	assert.IsType(t, &fileNode{}, child.Operations())
	assert.Equal(t, uint64(aIno), out.Attr.Ino)
	assert.Equal(t, uint64(len(aBody)), out.Attr.Size)
	// Any other name goes to the directory.
	_, errno = h.Lookup(testCtx(t), "sub", &out)
	assert.Equal(t, syscall.Errno(0), errno)
	_, errno = h.Lookup(testCtx(t), "nothing", &out)
	assert.Equal(t, syscall.ENOENT, errno)

	require.Equal(t, syscall.Errno(0), h.Seekdir(testCtx(t), 0))
	again, errno := h.Readdirent(testCtx(t))
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, "a.txt", again.Name, "seek to 0 lists again from the start")
	require.Equal(t, syscall.Errno(0), h.Seekdir(testCtx(t), 3))
	end, errno := h.Readdirent(testCtx(t))
	assert.Equal(t, syscall.Errno(0), errno)
	assert.Nil(t, end, "offset 3 is past the last of 3 entries")
	assert.Equal(t, syscall.EINVAL, h.Seekdir(testCtx(t), 4))
}

func TestReaddirIsASnapshot(t *testing.T) {
	tf := newTestFS(t)
	fh, _, _ := tf.root.OpendirHandle(testCtx(t), 0)
	h := fh.(*dirHandle)
	first, _ := h.Readdirent(testCtx(t))
	require.Equal(t, "data", first.Name)
	tf.cat.Remove(topURI)
	second, errno := h.Readdirent(testCtx(t))
	require.Equal(t, syscall.Errno(0), errno)
	require.NotNil(t, second)
	assert.Equal(t, "top.txt", second.Name, "an open listing does not change under its reader")
	assert.Len(t, readdir(t, tf.root), 1, "a new open sees the change")
}

func TestOpenAndRead(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "data", "a.txt")
	fh, flags, errno := n.Open(testCtx(t), syscall.O_RDONLY)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, uint32(fuse.FOPEN_KEEP_CACHE), flags)
	assert.Nil(t, fh, "the inode is the version: an open has nothing to hold")

	got, errno := readAll(t, n, fh, 4)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, "hello world", string(got))

	b, errno := readOnce(t, n, fh, 5, 6)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, "world", string(b))
	b, errno = readOnce(t, n, fh, 5, 100)
	require.Equal(t, syscall.Errno(0), errno, "past the end is EOF, not an error")
	assert.Empty(t, b)
	assert.Equal(t, 1, tf.origin.count(aURI), "one block, fetched once")
}

func TestReadOfBytesThatDisagreeIsEIO(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "data", "bad.bin")
	got, errno := readAll(t, n, nil, 64)
	assert.Equal(t, syscall.EIO, errno)
	assert.Empty(t, got, "not one byte that fails the hash")
}

// Where the kernel opens files without asking, OPEN is ENOSYS: the kernel
// stops sending it.
func TestOpenIsENOSYSWhereTheKernelAllows(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "top.txt")
	tf.fs.Mounted(&fuse.InitIn{Flags: fuse.CAP_NO_OPEN_SUPPORT})
	_, _, errno := n.Open(testCtx(t), syscall.O_RDONLY)
	assert.Equal(t, syscall.ENOSYS, errno)
	_, _, errno = n.Open(testCtx(t), syscall.O_WRONLY)
	assert.Equal(t, syscall.EROFS, errno, "writing is refused all the same")
	tf.fs.Mounted(&fuse.InitIn{})
	_, flags, errno := n.Open(testCtx(t), syscall.O_RDONLY)
	assert.Equal(t, syscall.Errno(0), errno, "a kernel that cannot open without asking")
	assert.Equal(t, uint32(fuse.FOPEN_KEEP_CACHE), flags)
}

func TestOpenForWritingIsEROFS(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "top.txt")
	for _, flags := range []int{syscall.O_WRONLY, syscall.O_RDWR, syscall.O_RDONLY | syscall.O_TRUNC, syscall.O_WRONLY | syscall.O_APPEND} {
		fh, _, errno := n.Open(testCtx(t), uint32(flags))
		assert.Nil(t, fh)
		assert.Equal(t, syscall.EROFS, errno, "flags %#o", flags)
	}
	assert.Zero(t, tf.origin.count(topURI))
}

func TestShutdownFailsOpenAndRead(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "top.txt")
	tf.fs.Shutdown()
	_, errno := readOnce(t, n, nil, 10, 0)
	assert.Equal(t, syscall.EIO, errno, "a read after shutdown")
	_, _, errno = n.Open(testCtx(t), syscall.O_RDONLY)
	assert.Equal(t, syscall.EIO, errno, "an open after shutdown")
	assert.Zero(t, tf.origin.count(topURI), "nothing fetched after the shutdown")
}

func TestFirstReadWarmsTheNextSmallFiles(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "data", "a.txt")
	_, errno := readOnce(t, n, nil, 64, 0)
	require.Equal(t, syscall.Errno(0), errno)
	waitFor(t, "bad.bin, next in data/, to be fetched", func() bool { return tf.origin.count(badURI) > 0 })
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
		size, errno := a.Getxattr(testCtx(t), name, nil)
		require.Equal(t, syscall.Errno(0), errno, name)
		assert.Equal(t, uint32(len(v)), size, "%s: an empty buffer asks for the size", name)
		buf := make([]byte, 200)
		size, errno = a.Getxattr(testCtx(t), name, buf)
		require.Equal(t, syscall.Errno(0), errno, name)
		assert.Equal(t, v, string(buf[:size]), name)
		_, errno = a.Getxattr(testCtx(t), name, make([]byte, len(v)-1))
		assert.Equal(t, syscall.ERANGE, errno, "%s: a short buffer", name)
	}
	_, errno := a.Getxattr(testCtx(t), "user.other", make([]byte, 100))
	assert.Equal(t, syscall.ENODATA, errno)

	c := tf.file(t, "data", "sub", "c.txt")
	for _, name := range []string{"user.resourcesync.hash", "user.resourcesync.type", "user.resourcesync.lastmod"} {
		_, errno := c.Getxattr(testCtx(t), name, make([]byte, 100))
		assert.Equal(t, syscall.ENODATA, errno, "%s: not published, so absent", name)
	}
	_, errno = tf.dir(t, "data").Getxattr(testCtx(t), "user.resourcesync.uri", make([]byte, 100))
	assert.Equal(t, syscall.ENODATA, errno, "a directory has no URI")
}

func TestListxattr(t *testing.T) {
	tf := newTestFS(t)
	list := func(n gofs.NodeListxattrer) string {
		size, errno := n.Listxattr(testCtx(t), nil)
		require.Equal(t, syscall.Errno(0), errno)
		buf := make([]byte, size)
		got, errno := n.Listxattr(testCtx(t), buf)
		require.Equal(t, syscall.Errno(0), errno)
		require.Equal(t, size, got)
		return string(buf[:got])
	}
	assert.Equal(t, "user.resourcesync.uri\x00user.resourcesync.hash\x00user.resourcesync.type\x00user.resourcesync.lastmod\x00",
		list(tf.file(t, "data", "a.txt")))
	assert.Equal(t, "user.resourcesync.uri\x00", list(tf.file(t, "data", "sub", "c.txt")))
	assert.Equal(t, "", list(tf.dir(t, "data")))
	_, errno := tf.file(t, "data", "a.txt").Listxattr(testCtx(t), make([]byte, 10))
	assert.Equal(t, syscall.ERANGE, errno)
}

func TestStatfs(t *testing.T) {
	tf := newTestFS(t)
	var out fuse.StatfsOut
	require.Equal(t, syscall.Errno(0), tf.root.Statfs(testCtx(t), &out))
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
	got, errno := readAll(t, tf.file(t, "data", "a.txt"), nil, 4)
	require.Equal(t, syscall.Errno(0), errno)
	require.Equal(t, "hello world", string(got))
	assert.Zero(t, streams(), "a.txt, one block, read")

	// A read at the end has no payload, and go-fuse calls Done only for a
	// reply with one: the read must end without it.
	res, errno := tf.file(t, "data", "a.txt").Read(testCtx(t), nil, make([]byte, 4), 11)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Zero(t, res.Size())
	assert.Zero(t, streams(), "a.txt, read at its end")

	uri := testOrigin + "/data/two-blocks.bin"
	body := bytes.Repeat([]byte("2"), 4096+10)
	tf.origin.set(uri, body)
	tf.cat.Upsert(&catalog.Resource{URI: uri, Length: int64(len(body))})
	n := tf.file(t, "data", "two-blocks.bin")
	res, errno = n.Read(testCtx(t), nil, make([]byte, 4096), 0)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, 1, streams(), "two-blocks.bin, being read")
	res.Done()
	assert.Equal(t, 1, streams(), "two-blocks.bin, half read")
}
