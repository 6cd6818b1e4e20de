package fs

import (
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/catalog"
)

// Lookup answers LOOKUP from the catalog. A process that looks up a file
// by name is taken to stat what it lists (plus.go). A name that is not
// there is answered as one: OK with node ID 0 and the entry timeout, which
// the kernel keeps as a negative entry (the process sees ENOENT) and asks
// no more about until the timeout or until a change that creates the name
// drops it (notify.go). Compilers, imports, shells and make probe missing
// names all day; plain ENOENT would cost a LOOKUP each.
//
// A file whose list gave no length gets no inode until its length is
// learned (prefetch.Known, one request however many lookups wait): a
// listing answers its name alone (readDir), so every inode the kernel
// holds has its true size, and reads, clipped by the kernel at that size,
// read the file to its end. A length that cannot be learned now fails the
// lookup with EIO and nothing else; the next lookup tries again.
func (f *FS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	f.cfg.Cache.Busy() // a tree walk: disk-cache writes wait
	id, a, ok := f.cfg.Catalog.Lookup(catalogID(h.NodeId), name)
	if !ok {
		*out = fuse.EntryOut{}
		out.SetEntryTimeout(f.cfg.Timeout)
		return fuse.OK
	}
	if !a.Dir {
		f.statters.add(h.Caller.Pid)
	}
	if a.NoSize {
		ctx, stop := f.opContext(ctxOf(cancel, h.Caller))
		defer stop()
		var err error
		if a, err = f.pre.Known(ctx, id, a); err != nil {
			if ctx.Err() != nil {
				return fuse.EINTR
			}
			f.readFailed(h.Caller.Pid, 0, f.uriOf(id), f.cfg.Catalog.Path(id), 0, err) // no inode yet: the path tells retries apart
			return fuse.EIO
		}
	}
	f.entry(id, a, out)
	return fuse.OK
}

// uriOf is file id's URI, "" if it is gone.
func (f *FS) uriOf(id catalog.NodeID) string {
	if r, ok := f.cfg.Catalog.Resource(id); ok {
		return r.URI
	}
	return ""
}

// entry answers a lookup of version a of catalog node id: the kernel holds
// one more reference to its inode.
func (f *FS) entry(id catalog.NodeID, a catalog.Attr, out *fuse.EntryOut) {
	nid, fresh := f.nodes.ref(id, a)
	if fresh {
		f.inodes.added()
	}
	f.fillEntry(nid, a, out)
}

// Forget drops n of the kernel's references to inode nid; at none, the
// inode and the version kept for it go.
func (f *FS) Forget(nid, n uint64) {
	h, gone := f.nodes.forget(nid, n)
	if !gone {
		return
	}
	if id := catalogID(nid); !id.IsDir() {
		f.forget(fileRef{nid: nid, id: id, gen: h.gen})
	}
	f.inodes.forgot(f)
}

func (f *FS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	id := catalogID(in.NodeId)
	if !id.IsDir() {
		return f.fileAttr(in.NodeId, out)
	}
	a, ok := f.cfg.Catalog.Attr(id)
	if !ok {
		return fuse.ENOENT
	}
	f.fillAttr(a, &out.Attr)
	out.SetTimeout(f.cfg.Timeout)
	return fuse.OK
}

// OpenDir lets the kernel cache the listing: a second walk (grep -r again,
// find, rsync) then costs rsfs no operation. The one exception is a
// process that stats what it lists, when the kernel's listing may hold
// files answered plain (plus.go): those cached names would cost it a
// LOOKUP per file, one round trip each, where a READDIRPLUS answered in
// full costs one per hundred, so its open reads the directory through rsfs
// and drops the kernel's copy. A listing answered in full is cached like
// any other. The handle snapshots the directory when it is first read, so
// a listing is consistent; an open the kernel answers from its cache costs
// no snapshot.
func (f *FS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f.cfg.Cache.Busy() // a tree walk, grep -r's second pass among them: disk-cache writes wait
	id := catalogID(in.NodeId)
	if a, ok := f.cfg.Catalog.Attr(id); !ok || !a.Dir {
		return fuse.ENOENT
	}
	out.OpenFlags = fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	if f.statters.has(in.Caller.Pid) && f.plainListings.take(id) {
		out.OpenFlags = 0 // without FOPEN_KEEP_CACHE the kernel drops its listing
	}
	out.Fh = f.dirs.open(id, out.OpenFlags != 0)
	return fuse.OK
}

func (f *FS) ReleaseDir(in *fuse.ReleaseIn) {
	if h := f.dirs.get(in.Fh); h != nil {
		f.storeListed(h.takeStores())
	}
	f.dirs.release(in.Fh)
}

func (f *FS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return f.readDir(in, out, false)
}

// ReadDirPlus answers directories in full, and files in full only to a
// process that stats what it lists (plus.go); a file answered with node ID
// 0 is a plain entry to the kernel.
func (f *FS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return f.readDir(in, out, true)
}

func (f *FS) readDir(in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	h := f.dirs.get(in.Fh)
	if h == nil {
		return fuse.EBADF
	}
	f.storeListed(h.takeStores()) // the kernel has taken the earlier answers in
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded {
		if !f.cfg.Catalog.ReadDir(h.dir, h.add) {
			return fuse.ENOENT
		}
		h.loaded = true
	}
	if in.Offset > uint64(len(h.entries)) {
		return fuse.EINVAL
	}
	files := plus && f.statters.has(in.Caller.Pid)
	plain := false // a file answered without attributes
	defer func() {
		if plain && h.cached {
			f.plainListings.add(h.dir)
		}
	}()
	for i := int(in.Offset); i < len(h.entries); i++ {
		e := &h.entries[i]
		de := fuse.DirEntry{Name: e.name, Mode: syscall.S_IFREG, Ino: e.ino, Off: uint64(i + 1)}
		if e.id.IsDir() {
			de.Mode = syscall.S_IFDIR
		}
		if !plus {
			if !out.AddDirEntry(de) {
				break
			}
			plain = plain || !e.id.IsDir()
			continue
		}
		eo := out.AddDirLookupEntry(de)
		if eo == nil {
			break
		}
		if !e.id.IsDir() && !files {
			plain = true
			continue
		}
		if a, ok := f.cfg.Catalog.Attr(e.id); ok && !a.NoSize { // a file of unknown length: its name alone (Lookup)
			f.entry(e.id, a, eo)
			if w, ok := f.unheld.take(e.id); ok {
				h.stores = append(h.stores, listedStore{id: e.id, unheld: w})
			}
		}
	}
	return fuse.OK
}

func (f *FS) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	st := f.cfg.Catalog.Stats()
	out.Bsize = 4096
	out.Frsize = 4096
	out.Blocks = uint64(st.Bytes+4095) / 4096
	out.Files = uint64(st.Resources + st.Directories)
	out.NameLen = 255
	return fuse.OK
}

// dirHandle is an open directory: a snapshot of its entries, taken at the
// first read. The names point into the catalog's arena (no copy); a
// READDIRPLUS entry answered in full takes its attributes from the catalog
// when it is answered.
type dirHandle struct {
	dir     catalog.NodeID
	cached  bool // opened with FOPEN_CACHE_DIR: what it answers, the kernel keeps
	mu      sync.Mutex
	loaded  bool
	entries []dirEntry
	stores  []listedStore // warmed files its answers gave the kernel, to store (unheld.go)
}

type dirEntry struct {
	name string
	id   catalog.NodeID
	ino  uint64
}

func (h *dirHandle) add(name string, id catalog.NodeID, a catalog.Attr) bool {
	h.entries = append(h.entries, dirEntry{name: name, id: id, ino: a.Ino})
	return true
}

// dirHandles are the open directories, by file handle.
type dirHandles struct {
	mu   sync.Mutex
	m    map[uint64]*dirHandle
	next uint64
}

func (d *dirHandles) open(id catalog.NodeID, cached bool) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[uint64]*dirHandle{}
	}
	d.next++
	d.m[d.next] = &dirHandle{dir: id, cached: cached}
	return d.next
}

func (d *dirHandles) get(fh uint64) *dirHandle {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.m[fh]
}

func (d *dirHandles) release(fh uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.m, fh)
}
