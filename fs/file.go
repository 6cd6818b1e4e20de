package fs

import (
	"context"
	"io"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/cache"
	"rsfs/catalog"
)

// fileNode is one version of a resource (version.go): the one current
// when the kernel looked it up, whose Gen is the inode's.
type fileNode struct {
	gofs.Inode
	readOnly
	fsys *FS
	id   catalog.NodeID
	// The version's size and mtime (Unix nanoseconds), which the kernel
	// was given and keeps: getattr answers them for as long as the inode
	// lives, after the catalog has moved past it too.
	size, mtime int64
}

var (
	_ gofs.NodeGetattrer   = (*fileNode)(nil)
	_ gofs.NodeOpener      = (*fileNode)(nil)
	_ gofs.NodeReader      = (*fileNode)(nil)
	_ gofs.NodeFlusher     = (*fileNode)(nil)
	_ gofs.NodeGetxattrer  = (*fileNode)(nil)
	_ gofs.NodeListxattrer = (*fileNode)(nil)
	_ gofs.NodeOnForgetter = (*fileNode)(nil)
	_ gofs.NodeOnAdder     = (*fileNode)(nil)
)

func newFileNode(f *FS, id catalog.NodeID, a catalog.Attr) *fileNode {
	mtime := int64(0)
	if !a.Mtime.IsZero() {
		mtime = a.Mtime.UnixNano()
	}
	return &fileNode{fsys: f, id: id, size: a.Size, mtime: mtime}
}

// Name is the file's name in its directory ("" once a newer version has
// taken the name).
func (n *fileNode) Name() string {
	name, _ := n.Parent()
	return name
}

// gen is the Gen of the node's version.
func (n *fileNode) gen() uint64 { return n.StableAttr().Gen }

// current reports whether the node's version is the catalog's.
func (n *fileNode) current() bool {
	a, ok := n.fsys.cfg.Catalog.Attr(n.id)
	return ok && a.Gen == n.gen()
}

// attr is the node's version as the kernel sees it: linked while current,
// unlinked (as a replaced or deleted file held open is) once not.
func (n *fileNode) attr() catalog.Attr {
	a := catalog.Attr{Ino: n.StableAttr().Ino, Size: n.size, Gen: n.gen()}
	if n.mtime != 0 {
		a.Mtime = time.Unix(0, n.mtime).UTC()
	}
	if n.current() {
		a.Nlink = 1
	}
	return a
}

func (n *fileNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.fsys.fillAttr(n.attr(), &out.Attr)
	out.SetTimeout(n.fsys.cfg.Timeout)
	return 0
}

// Open answers ENOSYS where the kernel allows: the inode is the version,
// so an open has nothing to pin, and the kernel stops sending OPEN and
// RELEASE for files. Elsewhere it opens with no handle, keeping the
// kernel's pages, which are always the inode's version.
func (n *fileNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC|syscall.O_APPEND) != 0 {
		return nil, 0, syscall.EROFS
	}
	if n.fsys.closing.Err() != nil {
		return nil, 0, syscall.EIO
	}
	if n.fsys.noOpen.Load() {
		return nil, 0, syscall.ENOSYS
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (n *fileNode) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if n.fsys.closing.Err() != nil {
		return nil, syscall.EIO
	}
	file, uri, done, err := n.fsys.readVersion(n)
	if err != nil {
		n.fsys.readFailed("", n.fsys.cfg.Catalog.Path(n.id), off, err)
		return nil, syscall.EIO
	}
	ctx, cancel := n.fsys.opContext(ctx)
	defer cancel()
	parts, err := file.ReadRange(ctx, off, len(dest))
	// Only a bare io.EOF is the end of the file: a fetch error may wrap
	// io.EOF (a connection closed early), and taking it for the end would
	// hand the reader a silently truncated file.
	if err != nil && err != io.EOF {
		done()
		if n.fsys.closing.Err() != nil {
			return nil, syscall.EIO
		}
		if ctx.Err() != nil {
			return nil, syscall.EINTR
		}
		n.fsys.readFailed(uri, n.fsys.cfg.Catalog.Path(n.id), off, err)
		if cache.EndsFile(err) {
			n.fsys.dropPages(&n.Inode) // pages the kernel kept of this version
		}
		return nil, syscall.EIO
	}
	if len(parts) == 0 {
		// go-fuse calls Done only for a reply with a payload.
		done()
		return fuse.ReadResultData(nil), 0
	}
	return &blockReply{parts: parts, done: done}, 0
}

// blockReply answers a READ with slices of the cache's blocks, which go-fuse
// writes to the kernel as they are (a result with Slices goes out by
// writev): no copy in rsfs. Done, called once the reply is written, ends
// the read of the version.
type blockReply struct {
	parts [][]byte
	done  func()
}

// Slices returns the reply's bytes, the same each time.
func (r *blockReply) Slices() ([][]byte, fuse.Status) { return r.parts, fuse.OK }

func (r *blockReply) Size() int {
	n := 0
	for _, p := range r.parts {
		n += len(p)
	}
	return n
}

// Bytes flattens the reply, for a server that cannot write it vectored.
func (r *blockReply) Bytes(buf []byte) ([]byte, fuse.Status) {
	buf = buf[:0]
	for _, p := range r.parts {
		buf = append(buf, p...)
	}
	return buf, fuse.OK
}

func (r *blockReply) Done() { r.done() }

// Flush answers ENOSYS: a read-only file has nothing to flush, and the
// kernel, told so once, stops sending FLUSH on every close (it takes that
// answer as success), which saves a round trip per file for grep and tar.
func (n *fileNode) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	return syscall.ENOSYS
}

// OnAdd counts the inode (memory.go).
func (n *fileNode) OnAdd(context.Context) { n.fsys.inodes.added() }

// OnForget drops the node's version: the kernel forgot the inode.
func (n *fileNode) OnForget() {
	n.fsys.forget(n)
	n.fsys.inodes.forgot(n.fsys)
}
