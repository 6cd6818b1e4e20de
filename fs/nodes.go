package fs

import (
	"cmp"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/catalog"
)

// A kernel node ID names one version of a catalog node: the catalog's ID
// in its low 32 bits and a slot in the high ones. Slot 1 is the first
// version of the node the kernel holds; a newer version looked up while
// the kernel still holds an older one (a process has it open) takes the
// next free slot, so that the old inode lives on with its version
// (version.go). The root is node 1, as FUSE requires. Directories have one
// version, so always slot 1.
//
// Per inode the kernel holds rsfs keeps 40 bytes with no pointers: the
// lookup count and the version the kernel was given. Slot 1 inodes (nearly
// all) sit in pages indexed by catalog ID, which the catalog hands out
// densely, so finding one costs no hashing; a page goes once the kernel has
// forgotten all of its inodes. Newer versions (slots 2 and up) sit in a map.
// At millions of inodes that is about 40 bytes each, where a go-fuse node
// tree cost about 500.

// nodeID is the kernel node ID of slot s of catalog node id.
func nodeID(id catalog.NodeID, s uint32) uint64 {
	if id == catalog.RootID {
		return fuse.FUSE_ROOT_ID
	}
	return uint64(s)<<32 | uint64(id)
}

// catalogID is the catalog node a kernel node ID names.
func catalogID(nid uint64) catalog.NodeID {
	if nid == fuse.FUSE_ROOT_ID {
		return catalog.RootID
	}
	return catalog.NodeID(nid)
}

// held is an inode the kernel holds: how many lookups it has not yet
// forgotten, and, for a file, the version it was given, which never
// changes: the kernel keeps its size and cached pages, and they stay true
// after the catalog has moved past it.
type held struct {
	lookups     uint64
	ino, gen    uint64
	size, mtime int64 // mtime in Unix nanoseconds, 0 for none
}

// attr is the held version as the kernel sees it; Nlink is left to the
// caller.
func (h held) attr() catalog.Attr {
	a := catalog.Attr{Ino: h.ino, Size: h.size, Gen: h.gen}
	if h.mtime != 0 {
		a.Mtime = timeOfNanos(h.mtime)
	}
	return a
}

// pageBits sizes the pages of slot 1 inodes: 1,024 (40 KiB) a page.
const pageBits = 10

// page holds the slot 1 inodes of 1,024 consecutive catalog IDs; an entry
// with no lookups is free.
type page struct {
	live int
	h    [1 << pageBits]held
}

// nodeTable is the inodes the kernel holds, by node ID.
type nodeTable struct {
	mu          sync.Mutex
	files, dirs []*page // slot 1, by catalog index
	newer       map[uint64]*held
	// slots are the catalog nodes held at more than one version: the
	// highest slot in use.
	slots map[catalog.NodeID]uint32
	// storing are the inodes pages are being stored in (pinStore), with
	// the version they are of: until the store ends, their node IDs are
	// not given to another version.
	storing map[uint64]storePin
	n       int // inodes held
}

type storePin struct {
	gen uint64
	n   int
}

func (t *nodeTable) init() {
	t.newer = map[uint64]*held{}
	t.slots = map[catalog.NodeID]uint32{}
	t.storing = map[uint64]storePin{}
}

// pinStore returns the node ID of the inode the kernel holds of version gen
// of catalog node id, if it holds one, and keeps that node ID from being
// given to another version until unpinStore: should the kernel forget the
// inode meanwhile and look the node up again at a newer version, the new
// inode gets another node ID, and the pages stored are never of the wrong
// version.
func (t *nodeTable) pinStore(id catalog.NodeID, gen uint64) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	nid, ok := t.versionLocked(id, gen)
	if ok {
		p := t.storing[nid]
		p.gen, p.n = gen, p.n+1
		t.storing[nid] = p
	}
	return nid, ok
}

// unpinStore ends a pinStore of nid.
func (t *nodeTable) unpinStore(nid uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.storing[nid]; p.n > 1 {
		p.n--
		t.storing[nid] = p
	} else {
		delete(t.storing, nid)
	}
}

// pinnedOther reports whether pages of a version other than gen are being
// stored in nid.
func (t *nodeTable) pinnedOther(nid, gen uint64) bool {
	p, ok := t.storing[nid]
	return ok && p.gen != gen
}

// at returns the entry of inode nid, free (no lookups) if the kernel does
// not hold it, or nil; create makes room for it.
func (t *nodeTable) at(nid uint64, create bool) *held {
	id := catalogID(nid)
	if nid>>32 != 1 {
		h := t.newer[nid]
		if h == nil && create {
			h = &held{}
			t.newer[nid] = h
		}
		return h
	}
	pages, pi, i := t.pagesOf(id)
	if pi >= len(*pages) {
		if !create {
			return nil
		}
		*pages = append(*pages, make([]*page, pi+1-len(*pages))...)
	}
	pg := (*pages)[pi]
	if pg == nil {
		if !create {
			return nil
		}
		pg = &page{}
		(*pages)[pi] = pg
	}
	return &pg.h[i]
}

// pagesOf returns the pages that hold slot 1 of catalog node id, the index
// of its page and its index in that page.
func (t *nodeTable) pagesOf(id catalog.NodeID) (pages *[]*page, pi, i int) {
	pages = &t.files
	if id.IsDir() {
		pages = &t.dirs
	}
	n := int(id &^ catalog.RootID)
	return pages, n >> pageBits, n & (1<<pageBits - 1)
}

// taken counts a new inode at nid (its entry just given its first lookup).
func (t *nodeTable) taken(nid uint64) {
	t.n++
	if nid>>32 == 1 {
		pages, pi, _ := t.pagesOf(catalogID(nid))
		(*pages)[pi].live++
	}
}

// freed drops inode nid, forgotten.
func (t *nodeTable) freed(nid uint64) {
	t.n--
	if nid>>32 != 1 {
		delete(t.newer, nid)
		return
	}
	pages, pi, _ := t.pagesOf(catalogID(nid))
	pg := (*pages)[pi]
	if pg.live--; pg.live == 0 {
		(*pages)[pi] = nil // no inode left in it
	}
}

// ref counts a lookup of version a of catalog node id and returns the
// inode's node ID, and whether the kernel did not hold it (a new inode).
func (t *nodeTable) ref(id catalog.NodeID, a catalog.Attr) (nid uint64, fresh bool) {
	if id == catalog.RootID {
		return fuse.FUSE_ROOT_ID, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	top := uint32(1)
	if len(t.slots) > 0 {
		top = max(t.slots[id], 1)
	}
	free := uint32(0)
	for s := uint32(1); s <= top; s++ {
		h := t.at(nodeID(id, s), false)
		switch {
		case h == nil || h.lookups == 0:
			if !t.pinnedOther(nodeID(id, s), a.Gen) {
				free = cmp.Or(free, s)
			}
		case h.gen == a.Gen:
			h.lookups++
			return nodeID(id, s), false
		}
	}
	if free == 0 {
		free = top + 1
		t.slots[id] = free
	}
	nid = nodeID(id, free)
	h := t.at(nid, true)
	*h = held{lookups: 1, ino: a.Ino, gen: a.Gen, size: a.Size}
	if !a.Mtime.IsZero() {
		h.mtime = a.Mtime.UnixNano()
	}
	t.taken(nid)
	return nid, true
}

// get returns the inode nid if the kernel holds it. The root is always
// held, with no version.
func (t *nodeTable) get(nid uint64) (held, bool) {
	if nid == fuse.FUSE_ROOT_ID {
		return held{lookups: 1}, true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.at(nid, false); h != nil && h.lookups > 0 {
		return *h, true
	}
	return held{}, false
}

// forget takes n lookups off inode nid and reports whether the kernel has
// forgotten it, and what it held.
func (t *nodeTable) forget(nid, n uint64) (held, bool) {
	if nid == fuse.FUSE_ROOT_ID {
		return held{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.at(nid, false)
	if h == nil || h.lookups == 0 {
		return held{}, false
	}
	if h.lookups > n {
		h.lookups -= n
		return held{}, false
	}
	old := *h
	*h = held{}
	t.freed(nid)
	id := catalogID(nid)
	if top, ok := t.slots[id]; ok {
		for top > 1 && !t.has(nodeID(id, top)) {
			top--
		}
		if top > 1 {
			t.slots[id] = top
		} else {
			delete(t.slots, id)
		}
	}
	return old, true
}

func (t *nodeTable) has(nid uint64) bool {
	h := t.at(nid, false)
	return h != nil && h.lookups > 0
}

// holds reports whether the kernel holds catalog directory id (its only
// version).
func (t *nodeTable) holds(id catalog.NodeID) (uint64, bool) {
	nid := nodeID(id, 1)
	_, ok := t.get(nid)
	return nid, ok
}

// version returns the node ID of the inode of version gen of catalog node
// id, if the kernel holds it.
func (t *nodeTable) version(id catalog.NodeID, gen uint64) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.versionLocked(id, gen)
}

// versionLocked is version with t.mu held.
func (t *nodeTable) versionLocked(id catalog.NodeID, gen uint64) (uint64, bool) {
	for s := uint32(1); s <= max(t.slots[id], 1); s++ {
		if h := t.at(nodeID(id, s), false); h != nil && h.lookups > 0 && h.gen == gen {
			return nodeID(id, s), true
		}
	}
	return 0, false
}

// len is the number of inodes held, the root left out.
func (t *nodeTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// pages is the number of pages of slot 1 inodes in use.
func (t *nodeTable) pages() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, pg := range append(t.files[:len(t.files):len(t.files)], t.dirs...) {
		if pg != nil {
			n++
		}
	}
	return n
}

func timeOfNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
