package fs

import (
	"io"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/cache"
	"rsfs/catalog"
)

// fileRef is one file inode: its node ID, its catalog node and the
// version it was given, whose Gen is the inode's (version.go).
type fileRef struct {
	nid uint64
	id  catalog.NodeID
	gen uint64
}

// file returns the file inode nid, if the kernel holds it.
func (f *FS) file(nid uint64) (fileRef, held, bool) {
	h, ok := f.nodes.get(nid)
	return fileRef{nid: nid, id: catalogID(nid), gen: h.gen}, h, ok && !catalogID(nid).IsDir()
}

// current reports whether version gen of catalog node id is the catalog's.
func (f *FS) current(id catalog.NodeID, gen uint64) bool {
	a, ok := f.cfg.Catalog.Attr(id)
	return ok && a.Gen == gen
}

// fileAttr answers the version the inode was given: linked while current,
// unlinked (as a replaced or deleted file held open is) once not.
func (f *FS) fileAttr(nid uint64, out *fuse.AttrOut) fuse.Status {
	ref, h, ok := f.file(nid)
	if !ok {
		return fuse.ENOENT
	}
	a := h.attr()
	if f.current(ref.id, ref.gen) {
		a.Nlink = 1
	}
	f.fillAttr(a, &out.Attr)
	out.SetTimeout(f.cfg.Timeout)
	return fuse.OK
}

// Open answers ENOSYS where the kernel allows: the inode is the version,
// so an open has nothing to pin, and the kernel stops sending OPEN and
// RELEASE for files. Elsewhere it opens with no handle, keeping the
// kernel's pages, which are always the inode's version.
func (f *FS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if in.Flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC|syscall.O_APPEND) != 0 {
		return fuse.EROFS
	}
	if f.closing.Err() != nil {
		return fuse.EIO
	}
	if f.noOpen.Load() {
		return fuse.ENOSYS
	}
	out.OpenFlags = fuse.FOPEN_KEEP_CACHE
	return fuse.OK
}

func (f *FS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	if f.closing.Err() != nil {
		return nil, fuse.EIO
	}
	ref, _, ok := f.file(in.NodeId)
	if !ok {
		return nil, fuse.EIO
	}
	off := int64(in.Offset)
	file, uri, done, err := f.readVersion(ref)
	if err != nil {
		f.readFailed(in.Caller.Pid, in.NodeId, "", f.cfg.Catalog.Path(ref.id), off, err)
		return nil, fuse.EIO
	}
	ctx, stop := f.opContext(ctxOf(cancel, in.Caller))
	defer stop()
	parts, err := file.ReadRange(ctx, off, len(buf))
	// Only a bare io.EOF is the end of the file: a fetch error may wrap
	// io.EOF (a connection closed early), and taking it for the end would
	// hand the reader a silently truncated file.
	if err != nil && err != io.EOF {
		done()
		if f.closing.Err() != nil {
			return nil, fuse.EIO
		}
		if ctx.Err() != nil {
			return nil, fuse.EINTR
		}
		f.readFailed(in.Caller.Pid, in.NodeId, uri, f.cfg.Catalog.Path(ref.id), off, err)
		if cache.EndsFile(err) {
			f.dropPages(ref.nid) // pages the kernel kept of this version
		}
		return nil, fuse.EIO
	}
	if len(parts) == 0 {
		// go-fuse calls Done only for a reply with a payload.
		done()
		return fuse.ReadResultData(nil), fuse.OK
	}
	return &blockReply{parts: parts, done: done}, fuse.OK
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
func (f *FS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	return fuse.ENOSYS
}
