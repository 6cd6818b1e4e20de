package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/catalog"
)

// dirNode is a directory of the catalog. Its children are not kept: each
// lookup asks the catalog, and the kernel's forgets free the nodes.
type dirNode struct {
	gofs.Inode
	readOnly
	fsys *FS
	id   catalog.NodeID
}

var (
	_ gofs.NodeLookuper       = (*dirNode)(nil)
	_ gofs.NodeGetattrer      = (*dirNode)(nil)
	_ gofs.NodeOpendirHandler = (*dirNode)(nil)
	_ gofs.NodeStatfser       = (*dirNode)(nil)
	_ gofs.NodeGetxattrer     = (*dirNode)(nil)
	_ gofs.NodeListxattrer    = (*dirNode)(nil)
	_ gofs.NodeOnAdder        = (*dirNode)(nil)
	_ gofs.NodeOnForgetter    = (*dirNode)(nil)
)

// OnAdd counts the inode (memory.go).
func (d *dirNode) OnAdd(context.Context) { d.fsys.inodes.added() }

// OnForget counts the inode forgotten (memory.go).
func (d *dirNode) OnForget() { d.fsys.inodes.forgot(d.fsys) }

// Lookup answers LOOKUP. A process that looks up a file by name is taken to
// stat what it lists (plus.go).
func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	d.fsys.cfg.Cache.Busy() // a tree walk: disk-cache writes wait
	id, a, ok := d.fsys.cfg.Catalog.Lookup(d.id, name)
	if !ok {
		out.SetEntryTimeout(d.fsys.cfg.Timeout)
		return nil, syscall.ENOENT
	}
	if !a.Dir {
		d.fsys.statters.mark(ctx)
	}
	return d.child(ctx, id, a, out), 0
}

func (d *dirNode) child(ctx context.Context, id catalog.NodeID, a catalog.Attr, out *fuse.EntryOut) *gofs.Inode {
	d.fsys.fillEntry(a, out)
	return d.NewInode(ctx, d.fsys.newNode(id, a), stableAttr(a))
}

func (d *dirNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	a, ok := d.fsys.cfg.Catalog.Attr(d.id)
	if !ok {
		return syscall.ENOENT
	}
	d.fsys.fillAttr(a, &out.Attr)
	out.SetTimeout(d.fsys.cfg.Timeout)
	return 0
}

// OpendirHandle lets the kernel cache the listing for a process that does
// not stat what it lists (find): its names are all it needs. For one that
// does, the cached names would cost a LOOKUP per file, one round trip each,
// where a READDIRPLUS answered in full (plus.go) costs one per hundred: its
// open drops the cached listing (go-fuse sets FOPEN_CACHE_DIR and
// FOPEN_KEEP_CACHE together, so it is both or neither) and reads the
// directory through rsfs. The handle snapshots the directory when it is
// first read, so a listing is consistent; an open the kernel answers from
// its cache costs no snapshot.
func (d *dirNode) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	d.fsys.cfg.Cache.Busy() // a tree walk, grep -r's second pass among them: disk-cache writes wait
	if a, ok := d.fsys.cfg.Catalog.Attr(d.id); !ok || !a.Dir {
		return nil, 0, syscall.ENOENT
	}
	open := uint32(fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE)
	if d.fsys.statters.has(ctx) {
		open = 0
	}
	return &dirHandle{dir: d}, open, 0
}

func (d *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	st := d.fsys.cfg.Catalog.Stats()
	out.Bsize = 4096
	out.Frsize = 4096
	out.Blocks = uint64(st.Bytes+4095) / 4096
	out.Files = uint64(st.Resources + st.Directories)
	out.NameLen = 255
	return 0
}

func (d *dirNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return 0, 0
}

type dirEntry struct {
	name string
	id   catalog.NodeID
	attr catalog.Attr
}

// dirHandle is an open directory: a snapshot of its entries, taken at the
// first read. It answers READDIRPLUS lookups from the snapshot, without
// searching the catalog.
type dirHandle struct {
	dir     *dirNode
	loaded  bool
	entries []dirEntry
	next    int
}

// load takes the snapshot once.
func (h *dirHandle) load() syscall.Errno {
	if h.loaded {
		return 0
	}
	ok := h.dir.fsys.cfg.Catalog.ReadDir(h.dir.id, func(name string, id catalog.NodeID, a catalog.Attr) bool {
		h.entries = append(h.entries, dirEntry{name: name, id: id, attr: a})
		return true
	})
	if !ok {
		return syscall.ENOENT
	}
	h.loaded = true
	return 0
}

var (
	_ gofs.FileReaddirenter = (*dirHandle)(nil)
	_ gofs.FileSeekdirer    = (*dirHandle)(nil)
	_ gofs.FileLookuper     = (*dirHandle)(nil)
	_ gofs.FileReleasedirer = (*dirHandle)(nil)
)

func (h *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if errno := h.load(); errno != 0 {
		return nil, errno
	}
	if h.next >= len(h.entries) {
		return nil, 0
	}
	e := &h.entries[h.next]
	h.next++
	mode := uint32(syscall.S_IFREG)
	if e.attr.Dir {
		mode = syscall.S_IFDIR
	}
	return &fuse.DirEntry{Name: e.name, Mode: mode, Ino: e.attr.Ino, Off: uint64(h.next)}, 0
}

func (h *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if errno := h.load(); errno != 0 {
		return errno
	}
	if off > uint64(len(h.entries)) {
		return syscall.EINVAL
	}
	h.next = int(off)
	return 0
}

// errNoPlus is the answer that leaves a READDIRPLUS entry without
// attributes: go-fuse then sends node ID 0, which the kernel takes as a
// plain entry (plus.go).
const errNoPlus = syscall.EAGAIN

// Lookup is called by READDIRPLUS, for the entry Readdirent returned last
// (or, when go-fuse replays an interrupted read, another).
func (h *dirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	fsys := h.dir.fsys
	var id catalog.NodeID
	var a catalog.Attr
	ok := false
	if i := h.next - 1; i >= 0 && i < len(h.entries) && h.entries[i].name == name {
		id = h.entries[i].id
		a, ok = fsys.cfg.Catalog.Attr(id)
	} else {
		id, a, ok = fsys.cfg.Catalog.Lookup(h.dir.id, name)
	}
	switch {
	case !ok:
		return nil, syscall.ENOENT
	case !a.Dir && !fsys.statters.has(ctx):
		return nil, errNoPlus
	}
	return h.dir.child(ctx, id, a, out), 0
}

func (h *dirHandle) Releasedir(ctx context.Context, flags uint32) { h.entries = nil }
