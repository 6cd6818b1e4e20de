package fs

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/require"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/resourcesync"
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

// memOrigin serves bodies from memory and counts the requests per URI.
type memOrigin struct {
	mu       sync.Mutex
	bodies   map[string][]byte
	requests map[string]int
}

func newMemOrigin() *memOrigin {
	return &memOrigin{
		bodies:   map[string][]byte{aURI: aBody, badURI: badBody, cURI: cBody, topURI: topBody},
		requests: map[string]int{},
	}
}

func (o *memOrigin) set(uri string, body []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bodies[uri] = body
}

func (o *memOrigin) count(uri string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests[uri]
}

// of returns the cache.Fetcher of one URI.
func (o *memOrigin) of(uri string) cache.Fetcher { return uriOrigin{o, uri} }

type uriOrigin struct {
	o   *memOrigin
	uri string
}

func (u uriOrigin) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	u.o.mu.Lock()
	defer u.o.mu.Unlock()
	u.o.requests[u.uri]++
	body, ok := u.o.bodies[u.uri]
	if !ok || off > int64(len(body)) {
		return nil, false, fmt.Errorf("%s: no bytes at %d", u.uri, off)
	}
	end := min(off+n, int64(len(body)))
	return io.NopCloser(bytes.NewReader(body[off:end])), false, nil
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
func md5Hex(b []byte) string    { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// testCatalog is the sample Source's sealed catalog.
func testCatalog() *catalog.Catalog {
	c := catalog.New(catalog.Options{Origin: testOrigin})
	c.Add(&catalog.Resource{URI: aURI, Length: int64(len(aBody)), Lastmod: aMtime, Type: "text/plain",
		Hashes: []resourcesync.Hash{{Alg: "md5", Value: md5Hex(aBody)}, {Alg: "sha-256", Value: sha256Hex(aBody)}}})
	c.Add(&catalog.Resource{URI: badURI, Length: int64(len(badBody)), Lastmod: aMtime,
		Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: sha256Hex([]byte("what the Source published"))}}})
	c.Add(&catalog.Resource{URI: cURI, Length: int64(len(cBody))})
	c.Add(&catalog.Resource{URI: topURI, Length: int64(len(topBody)), Lastmod: aMtime})
	c.Seal()
	return c
}

// testFS is a file system over the sample Source, with no kernel: its root
// is given a go-fuse bridge (as a mount would) so that nodes can create
// children.
type testFS struct {
	fs     *FS
	cat    *catalog.Catalog
	origin *memOrigin
	root   *dirNode
}

func newTestFS(t *testing.T) *testFS {
	t.Helper()
	tf := newUnmountedFS(t)
	gofs.NewNodeFS(tf.fs.Root(), tf.fs.MountOptions("test", false))
	return tf
}

// newUnmountedFS is a file system over the sample Source whose root has
// no bridge yet: for gofs.Mount.
func newUnmountedFS(t *testing.T) *testFS {
	t.Helper()
	cat := testCatalog()
	origin := newMemOrigin()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	blocks := cache.New(cache.Config{MaxBytes: 1 << 20, BlockSize: 4096, ReadAhead: -1, Logger: quiet})
	t.Cleanup(blocks.Close)
	f := New(Config{
		Catalog: cat,
		Cache:   blocks,
		Fetcher: func(r *catalog.Resource) cache.Fetcher { return origin.of(r.URI) },
		UID:     testUID,
		GID:     testGID,
		Timeout: testTimeout,
		Logger:  quiet,
	})
	t.Cleanup(f.Shutdown)
	return &testFS{fs: f, cat: cat, origin: origin, root: f.root}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// lookup looks path up from the root, one name at a time, through the
// nodes' own Lookup.
func (tf *testFS) lookup(t *testing.T, path ...string) (gofs.InodeEmbedder, fuse.EntryOut) {
	t.Helper()
	var n gofs.InodeEmbedder = tf.root
	var out fuse.EntryOut
	for _, name := range path {
		d, ok := n.(*dirNode)
		require.True(t, ok, "%s: not a directory", name)
		out = fuse.EntryOut{}
		child, errno := d.Lookup(testCtx(t), name, &out)
		require.Equal(t, syscall.Errno(0), errno, "lookup %s", name)
		n = child.Operations()
	}
	return n, out
}

func (tf *testFS) file(t *testing.T, path ...string) *fileNode {
	t.Helper()
	n, _ := tf.lookup(t, path...)
	f, ok := n.(*fileNode)
	require.True(t, ok, "%v is not a file", path)
	return f
}

func (tf *testFS) dir(t *testing.T, path ...string) *dirNode {
	t.Helper()
	n, _ := tf.lookup(t, path...)
	d, ok := n.(*dirNode)
	require.True(t, ok, "%v is not a directory", path)
	return d
}

// readAll reads a whole open file in reads of size chunk.
func readAll(t *testing.T, n *fileNode, fh gofs.FileHandle, chunk int) ([]byte, syscall.Errno) {
	t.Helper()
	var got []byte
	for off := int64(0); ; {
		b, errno := readOnce(t, n, fh, chunk, off)
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
func readOnce(t *testing.T, n *fileNode, fh gofs.FileHandle, size int, off int64) ([]byte, syscall.Errno) {
	t.Helper()
	res, errno := n.Read(testCtx(t), fh, make([]byte, size), off)
	if errno != 0 {
		return nil, errno
	}
	defer res.Done()
	b, status := res.Bytes(make([]byte, size))
	require.Equal(t, fuse.OK, status)
	return b, 0
}

// waitFor polls cond until it holds; the bound only keeps a broken build
// from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
