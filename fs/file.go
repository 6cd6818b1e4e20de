package fs

import (
	"context"
	"io"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/cache"
	"rsfs/catalog"
)

// fileNode is a resource.
type fileNode struct {
	gofs.Inode
	readOnly
	fsys *FS
	id   catalog.NodeID
}

var (
	_ gofs.NodeGetattrer   = (*fileNode)(nil)
	_ gofs.NodeOpener      = (*fileNode)(nil)
	_ gofs.NodeReader      = (*fileNode)(nil)
	_ gofs.NodeReleaser    = (*fileNode)(nil)
	_ gofs.NodeFlusher     = (*fileNode)(nil)
	_ gofs.NodeGetxattrer  = (*fileNode)(nil)
	_ gofs.NodeListxattrer = (*fileNode)(nil)
)

// Name is the file's name in its directory.
func (n *fileNode) Name() string {
	name, _ := n.Parent()
	return name
}

func (n *fileNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	a, ok := n.fsys.pinnedAttr(n.id)
	if !ok {
		if a, ok = n.fsys.cfg.Catalog.Attr(n.id); !ok {
			return syscall.ENOENT
		}
	}
	n.fsys.fillAttr(a, &out.Attr)
	out.SetTimeout(n.fsys.cfg.Timeout)
	return 0
}

// fileHandle is an open resource: its pinned version (pin.go), read
// through the cache.
type fileHandle struct {
	file      *cache.File
	uri       string
	contentID string
}

func (n *fileNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC|syscall.O_APPEND) != 0 {
		return nil, 0, syscall.EROFS
	}
	if n.fsys.closing.Err() != nil {
		return nil, 0, syscall.EIO
	}
	if n.fsys.cfg.NoOpen {
		// The kernel stops sending OPEN and RELEASE for files; reads come
		// without a handle (noopen.go).
		return nil, 0, syscall.ENOSYS
	}
	h, ok := n.fsys.openHandle(n.id, n.Name())
	if !ok {
		return nil, 0, syscall.ENOENT
	}
	openFlags := uint32(fuse.FOPEN_KEEP_CACHE)
	if n.fsys.cfg.Cache.Bad(h.contentID) || !n.fsys.keepsCache(n.id) {
		// The kernel drops the pages it kept: of a bad version, or of an
		// older one it has not yet been told is gone.
		openFlags = 0
	}
	return h, openFlags, 0
}

// openHandle pins node id's version and opens it through the cache,
// warming its small siblings if it is small.
func (f *FS) openHandle(id catalog.NodeID, name string) (*fileHandle, bool) {
	p, ok := f.acquire(id)
	if !ok {
		return nil, false
	}
	blocks := f.cfg.Cache
	file := blocks.Open(p.content, p.origin)
	if p.content.Size <= int64(blocks.BlockSize()) {
		f.warmSiblings(id, name)
	}
	return &fileHandle{file: file, uri: p.content.Name, contentID: p.content.ID}, true
}

// closeHandle closes a handle from openHandle and releases its pin.
func (f *FS) closeHandle(id catalog.NodeID, name string, h *fileHandle) {
	h.file.Close()
	f.release(id, name)
}

func (n *fileNode) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if n.fsys.closing.Err() != nil {
		return nil, syscall.EIO
	}
	h, ok := fh.(*fileHandle)
	if fh == nil && n.fsys.cfg.NoOpen {
		var done func()
		if h, done, ok = n.fsys.sharedRead(n.id, n.Name()); !ok {
			return nil, syscall.ENOENT
		}
		defer done()
	}
	if !ok {
		return nil, syscall.EBADF
	}
	ctx, done := n.fsys.opContext(ctx)
	defer done()
	got, err := h.file.ReadAt(ctx, dest, off)
	// Only a bare io.EOF is the end of the file: a fetch error may wrap
	// io.EOF (a connection closed early), and taking it for the end would
	// hand the reader a silently truncated file.
	if err != nil && err != io.EOF {
		if n.fsys.closing.Err() != nil {
			return nil, syscall.EIO
		}
		if ctx.Err() != nil {
			return nil, syscall.EINTR
		}
		n.fsys.readFailed(h.uri, n.fsys.cfg.Catalog.Path(n.id), off, err)
		if cache.EndsFile(err) {
			n.fsys.dropPages(n.id) // pages the kernel kept of this version
		}
		return nil, syscall.EIO
	}
	return fuse.ReadResultData(dest[:got]), 0
}

// Flush answers ENOSYS: a read-only file has nothing to flush, and the
// kernel, told so once, stops sending FLUSH on every close (it takes that
// answer as success), which saves a round trip per file for grep and tar.
func (n *fileNode) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	return syscall.ENOSYS
}

func (n *fileNode) Release(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	if h, ok := fh.(*fileHandle); ok {
		n.fsys.closeHandle(n.id, n.Name(), h)
	}
	return 0
}
