package fs

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/require"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/resourcesync"
	"rsfs/tests/cachetest"
)

const (
	testOrigin  = "http://src.example"
	testTimeout = time.Minute
	testUID     = 1234
	testGID     = 5678
)

// The sample Source. a.txt is published with a zone offset, so its lastmod
// xattr must come out in UTC; c.txt is published with nothing but its
// location and length; bad.bin's bytes disagree with its hash.
var (
	aURI   = testOrigin + "/data/a.txt"
	badURI = testOrigin + "/data/bad.bin"
	cURI   = testOrigin + "/data/sub/c.txt"
	topURI = testOrigin + "/top.txt"

	aBody   = []byte("hello world")
	aMtime  = time.Date(2024, 5, 1, 12, 20, 30, 500_000_000, time.FixedZone("", 2*3600))
	badBody = []byte("not the published bytes")
	cBody   = []byte("c")
	topBody = []byte("top of the tree\n")
)

// Golden values, computed outside rsfs:
const (
	// printf %s 'hello world' | sha256sum
	aSHA256 = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
	// printf %s 'hello world' | md5sum
	aMD5 = "5eb63bbbe01eeed093cb22bb8f5acdc3"
	// docs/usage.md: a file's inode is the 64-bit FNV-1a of its URI, a
	// directory's that of "\0dir\0" and its path.
	// printf %s http://src.example/data/a.txt | python3 -c 'import sys;h=0xcbf29ce484222325;[h:=((h^b)*0x100000001b3)%2**64 for b in sys.stdin.buffer.read()];print(h)'
	aIno = 8058127345889444070
	// printf '\0dir\0data' | python3 -c 'import sys;h=0xcbf29ce484222325;[h:=((h^b)*0x100000001b3)%2**64 for b in sys.stdin.buffer.read()];print(h)'
	dataIno = 4954042963635918634
)

// newMemOrigin serves the sample Source's bodies.
func newMemOrigin() *cachetest.Origin {
	return cachetest.NewOrigin(map[string][]byte{aURI: aBody, badURI: badBody, cURI: cBody, topURI: topBody})
}

func md5Hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// testCatalog is the sample Source's sealed catalog.
func testCatalog() *catalog.Catalog {
	c := catalog.New(catalog.Options{Origin: testOrigin})
	c.Add(&catalog.Resource{URI: aURI, Length: int64(len(aBody)), Lastmod: aMtime, Type: "text/plain",
		Hashes: []resourcesync.Hash{{Alg: "md5", Value: md5Hex(aBody)}, {Alg: "sha-256", Value: cachetest.SHA256Hex(aBody)}}})
	c.Add(&catalog.Resource{URI: badURI, Length: int64(len(badBody)), Lastmod: aMtime,
		Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: cachetest.SHA256Hex([]byte("what the Source published"))}}})
	c.Add(&catalog.Resource{URI: cURI, Length: int64(len(cBody))})
	c.Add(&catalog.Resource{URI: topURI, Length: int64(len(topBody)), Lastmod: aMtime})
	c.Seal()
	return c
}

// testFS is a file system over the sample Source, with no kernel: tests
// call its FUSE methods as go-fuse would, from a caller of thread ID 0.
type testFS struct {
	fs     *FS
	cat    *catalog.Catalog
	origin *cachetest.Origin
}

func newTestFS(t *testing.T) *testFS {
	t.Helper()
	return newTestFSOver(t, testCatalog())
}

// newTestFSOver is a file system over cat, with the sample Source's bodies.
func newTestFSOver(t *testing.T, cat *catalog.Catalog) *testFS {
	t.Helper()
	return newTestFSWith(t, cat, nil)
}

// newTestFSWith is newTestFSOver with its Config changed by with, if set.
func newTestFSWith(t *testing.T, cat *catalog.Catalog, with func(*Config)) *testFS {
	t.Helper()
	origin := newMemOrigin()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	blocks := cache.New(cache.Config{MaxBytes: 1 << 20, BlockSize: 4096, ReadAhead: -1, Logger: quiet})
	t.Cleanup(blocks.Close)
	cfg := Config{
		Catalog: cat,
		Cache:   blocks,
		Fetcher: func(r *catalog.Resource) cache.Fetcher { return origin.Of(r.URI) },
		UID:     testUID,
		GID:     testGID,
		Timeout: testTimeout,
		Logger:  quiet,
	}
	if with != nil {
		with(&cfg)
	}
	f := New(cfg)
	t.Cleanup(f.Shutdown)
	return &testFS{fs: f, cat: cat, origin: origin}
}

// header is a request's header for node nid.
func header(nid uint64) fuse.InHeader { return fuse.InHeader{NodeId: nid} }

// lookup looks path up from the root, one name at a time, as the kernel
// does, and returns the last node ID and entry.
func (tf *testFS) lookup(t *testing.T, path ...string) (uint64, fuse.EntryOut) {
	t.Helper()
	nid := uint64(fuse.FUSE_ROOT_ID)
	var out fuse.EntryOut
	for _, name := range path {
		out = fuse.EntryOut{}
		h := header(nid)
		require.Equal(t, fuse.OK, tf.fs.Lookup(nil, &h, name, &out), "lookup %s", name)
		require.NotZero(t, out.NodeId, "lookup %s", name)
		nid = out.NodeId
	}
	return nid, out
}

func (tf *testFS) file(t *testing.T, path ...string) uint64 {
	t.Helper()
	nid, out := tf.lookup(t, path...)
	require.Equal(t, uint32(syscall.S_IFREG), out.Attr.Mode&syscall.S_IFMT, "%v is not a file", path)
	return nid
}

func (tf *testFS) dir(t *testing.T, path ...string) uint64 {
	t.Helper()
	nid, out := tf.lookup(t, path...)
	require.Equal(t, uint32(syscall.S_IFDIR), out.Attr.Mode&syscall.S_IFMT, "%v is not a directory", path)
	return nid
}

// getattr answers GETATTR for nid.
func (tf *testFS) getattr(t *testing.T, nid uint64) (fuse.AttrOut, fuse.Status) {
	t.Helper()
	var out fuse.AttrOut
	st := tf.fs.GetAttr(nil, &fuse.GetAttrIn{InHeader: header(nid)}, &out)
	return out, st
}

// open answers OPEN for nid with flags.
func (tf *testFS) open(nid uint64, flags uint32) (uint32, fuse.Status) {
	var out fuse.OpenOut
	st := tf.fs.Open(nil, &fuse.OpenIn{InHeader: header(nid), Flags: flags}, &out)
	return out.OpenFlags, st
}

// readAll reads a whole file in reads of size chunk.
func (tf *testFS) readAll(t *testing.T, nid uint64, chunk int) ([]byte, syscall.Errno) {
	t.Helper()
	var got []byte
	for off := int64(0); ; {
		b, errno := tf.readOnce(t, nid, chunk, off)
		if errno != 0 {
			return got, errno
		}
		if len(b) == 0 {
			return got, 0
		}
		got = append(got, b...)
		off += int64(len(b))
	}
}

// readOnce reads size bytes at off as go-fuse does: Read, then the
// result's bytes, then Done once they are "written".
func (tf *testFS) readOnce(t *testing.T, nid uint64, size int, off int64) ([]byte, syscall.Errno) {
	t.Helper()
	res, st := tf.read(nid, size, off)
	if st != fuse.OK {
		return nil, syscall.Errno(st)
	}
	defer res.Done()
	b, status := res.Bytes(make([]byte, size))
	require.Equal(t, fuse.OK, status)
	return b, 0
}

// read answers READ for nid; the caller calls Done on a result.
func (tf *testFS) read(nid uint64, size int, off int64) (fuse.ReadResult, fuse.Status) {
	in := &fuse.ReadIn{InHeader: header(nid), Offset: uint64(off), Size: uint32(size)}
	return tf.fs.Read(nil, in, make([]byte, size))
}

// getxattr answers GETXATTR for nid into a buffer of size bytes.
func (tf *testFS) getxattr(nid uint64, name string, size int) (string, uint32, syscall.Errno) {
	h := header(nid)
	buf := make([]byte, size)
	n, st := tf.fs.GetXAttr(nil, &h, name, buf)
	if st != fuse.OK || size == 0 {
		return "", n, syscall.Errno(st)
	}
	return string(buf[:n]), n, 0
}

// listxattr answers LISTXATTR for nid into a buffer of size bytes.
func (tf *testFS) listxattr(nid uint64, size int) (string, uint32, syscall.Errno) {
	h := header(nid)
	buf := make([]byte, size)
	n, st := tf.fs.ListXAttr(nil, &h, buf)
	if st != fuse.OK || size == 0 {
		return "", n, syscall.Errno(st)
	}
	return string(buf[:n]), n, 0
}

// opendir opens directory nid for the process of thread pid and returns
// the handle and the open flags.
func (tf *testFS) opendir(t *testing.T, nid uint64, pid uint32) (uint64, uint32) {
	t.Helper()
	in := &fuse.OpenIn{InHeader: header(nid)}
	in.Caller.Pid = pid
	var out fuse.OpenOut
	require.Equal(t, fuse.OK, tf.fs.OpenDir(nil, in, &out))
	t.Cleanup(func() { tf.fs.ReleaseDir(&fuse.ReleaseIn{InHeader: header(nid), Fh: out.Fh}) })
	return out.Fh, out.OpenFlags
}

// listed is one entry of a READDIR or READDIRPLUS answer; entry is the
// lookup answer READDIRPLUS gave with it (node ID 0: a plain entry).
type listed struct {
	fuse.DirEntry
	entry fuse.EntryOut
}

// readdir reads handle fh of directory nid from offset off, into a buffer
// of size bytes, as the process of thread pid (plus: READDIRPLUS), and
// decodes what the kernel would be sent.
func (tf *testFS) readdir(t *testing.T, nid, fh, off uint64, size int, plus bool, pid uint32) ([]listed, fuse.Status) {
	t.Helper()
	in := &fuse.ReadIn{InHeader: header(nid), Fh: fh, Offset: off, Size: uint32(size)}
	in.Caller.Pid = pid
	out := fuse.NewDirEntryList(make([]byte, size), off)
	var st fuse.Status
	if plus {
		st = tf.fs.ReadDirPlus(nil, in, out)
	} else {
		st = tf.fs.ReadDir(nil, in, out)
	}
	if st != fuse.OK {
		return nil, st
	}
	var got []listed
	buf := out.Bytes()
	for len(buf) > 0 {
		var l listed
		if plus {
			l.entry = *(*fuse.EntryOut)(unsafe.Pointer(&buf[0]))
			buf = buf[unsafe.Sizeof(fuse.EntryOut{}):]
		}
		ino := binary.LittleEndian.Uint64(buf[0:])
		next := binary.LittleEndian.Uint64(buf[8:])
		n := int(binary.LittleEndian.Uint32(buf[16:]))
		typ := binary.LittleEndian.Uint32(buf[20:])
		l.DirEntry = fuse.DirEntry{Ino: ino, Off: next, Name: string(buf[24 : 24+n]), Mode: typ << 12}
		got = append(got, l)
		buf = buf[(24+n+7)&^7:]
	}
	return got, fuse.OK
}

// list reads the whole of directory nid through a handle of its own, with
// READDIR, as thread 0.
func (tf *testFS) list(t *testing.T, nid uint64) []fuse.DirEntry {
	t.Helper()
	fh, flags := tf.opendir(t, nid, 0)
	require.Contains(t, []uint32{0, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE}, flags, "a listing is cached, or not kept (plus.go)")
	var all []fuse.DirEntry
	for off := uint64(0); ; {
		got, st := tf.readdir(t, nid, fh, off, 4096, false, 0)
		require.Equal(t, fuse.OK, st)
		if len(got) == 0 {
			return all
		}
		for _, l := range got {
			all = append(all, l.DirEntry)
		}
		off = got[len(got)-1].Off
	}
}
