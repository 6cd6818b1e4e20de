package fs

import (
	"sync"

	"rsfs/cache"
	"rsfs/catalog"
)

// A file's open handles all read one version: the one current when the
// first of them opened. The kernel decides EOF from i_size and serves
// cached pages before rsfs is asked, so a new version must not reach the
// kernel while a handle reads the old one (a smaller i_size would end the
// reader early, silently, with a short copy). While a file is open, its
// attributes stay those of the pinned version, and the kernel is told of a
// newer one when the last handle closes. Bytes of the pinned version that
// can no longer be had fail with EIO: never a short or mixed copy.
type pin struct {
	content cache.Content
	attr    catalog.Attr
	origin  cache.Origin // shared, so an ETag learned by one handle binds all
	handles int
	stale   bool // the catalog has a newer version; notify on the last close
}

type pins struct {
	mu sync.Mutex
	m  map[catalog.NodeID]*pin
	// unsent holds files whose newer version was released to the kernel
	// but not yet told: an open meanwhile must not keep the old pages.
	unsent map[catalog.NodeID]struct{}
}

// acquire returns the pinned version of node id for a new handle, pinning
// the catalog's current version if no handle is open.
func (f *FS) acquire(id catalog.NodeID) (*pin, bool) {
	p := &f.pins
	p.mu.Lock()
	if cur := p.m[id]; cur != nil {
		cur.handles++
		p.mu.Unlock()
		return cur, true
	}
	p.mu.Unlock()
	fresh, ok := f.current(id)
	if !ok {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[catalog.NodeID]*pin{}
	}
	if cur := p.m[id]; cur != nil { // another open pinned it meanwhile
		fresh = cur
	}
	p.m[id] = fresh
	fresh.handles++
	return fresh, true
}

// current builds a pin of the catalog's current version of id. The
// catalog is read in several calls, so a change applied meanwhile could
// pair one version's id with another's length and hash (and get a good
// version marked bad): the id is read before and after, and the pin built
// again if it moved.
func (f *FS) current(id catalog.NodeID) (*pin, bool) {
	cat := f.cfg.Catalog
	for {
		before := cat.ContentID(id)
		r, ok := cat.Resource(id)
		if !ok {
			return nil, false
		}
		a, ok := cat.Attr(id)
		if !ok {
			return nil, false
		}
		if after := cat.ContentID(id); after != before {
			continue
		}
		content := cache.Content{ID: before, Name: r.URI, Size: r.Length, Hashes: r.Hashes}
		return &pin{content: content, attr: a, origin: f.cfg.Origin(r)}, true
	}
}

// release ends a handle of id; after the last one, a newer version that
// was held back is told to the kernel.
func (f *FS) release(id catalog.NodeID, name string) {
	p := &f.pins
	p.mu.Lock()
	cur := p.m[id]
	if cur == nil {
		p.mu.Unlock()
		return
	}
	cur.handles--
	last := cur.handles <= 0
	if last {
		delete(p.m, id)
		if cur.stale {
			if p.unsent == nil {
				p.unsent = map[catalog.NodeID]struct{}{}
			}
			p.unsent[id] = struct{}{}
		}
	}
	p.mu.Unlock()
	if last && cur.stale {
		parent, _ := f.cfg.Catalog.Parent(id)
		f.Notify([]catalog.Effect{{Kind: catalog.ContentChanged, Parent: parent, Name: name, ID: id}})
	}
}

// pinnedAttr returns the attributes of the version open handles of id
// read, if any is open.
func (f *FS) pinnedAttr(id catalog.NodeID) (catalog.Attr, bool) {
	p := &f.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur := p.m[id]; cur != nil {
		return cur.attr, true
	}
	return catalog.Attr{}, false
}

// holdBack reports whether a new version of id must wait for its open
// handles to close (and marks it to be told then).
func (f *FS) holdBack(id catalog.NodeID) bool {
	p := &f.pins
	p.mu.Lock()
	cur := p.m[id]
	p.mu.Unlock()
	if cur == nil || f.cfg.Catalog.ContentID(id) == cur.content.ID {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m[id] != cur { // closed meanwhile
		return false
	}
	cur.stale = true
	return true
}

// attrOf returns what the kernel should see of id: the pinned version's
// attributes while the file is open, else the catalog's.
func (f *FS) attrOf(id catalog.NodeID, a catalog.Attr) catalog.Attr {
	if a.Dir {
		return a
	}
	if pa, ok := f.pinnedAttr(id); ok {
		return pa
	}
	return a
}

// keepsCache reports whether an open of id may keep the kernel's cached
// pages: not while a newer version is on its way to the kernel.
func (f *FS) keepsCache(id catalog.NodeID) bool {
	p := &f.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	_, waiting := p.unsent[id]
	return !waiting
}

// told records that the kernel was told of id's current version.
func (f *FS) told(id catalog.NodeID) {
	p := &f.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.unsent, id)
}

// pinIsStale reports whether id's pinned version has a newer one waiting.
func (f *FS) pinIsStale(id catalog.NodeID) bool {
	p := &f.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.m[id]
	return cur != nil && cur.stale
}
