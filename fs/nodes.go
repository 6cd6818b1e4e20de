package fs

import (
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
// Per inode the kernel holds rsfs keeps one entry of a map with no
// pointers: the lookup count and the version the kernel was given. The
// kernel's FORGET deletes it. At millions of inodes that is about 60 bytes
// each, where a go-fuse node tree costs about 500.

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

// nodeTable is the inodes the kernel holds, by node ID.
type nodeTable struct {
	mu   sync.Mutex
	held map[uint64]held
	// slots are the catalog nodes held at more than one version: the
	// highest slot in use.
	slots map[catalog.NodeID]uint32
	// high is the most entries since the map was last made anew: a Go map
	// never shrinks, so after a large forget it is copied (shrink).
	high int
}

func (t *nodeTable) init() {
	t.held = map[uint64]held{}
	t.slots = map[catalog.NodeID]uint32{}
}

// ref counts a lookup of version a of catalog node id and returns the
// inode's node ID, and whether the kernel did not hold it (a new inode).
func (t *nodeTable) ref(id catalog.NodeID, a catalog.Attr) (nid uint64, fresh bool) {
	if id == catalog.RootID {
		return fuse.FUSE_ROOT_ID, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	top := max(t.slots[id], 1)
	free := uint32(0)
	for s := uint32(1); s <= top; s++ {
		nid := nodeID(id, s)
		h, ok := t.held[nid]
		switch {
		case !ok:
			free = cmpOr(free, s)
		case h.gen == a.Gen:
			h.lookups++
			t.held[nid] = h
			return nid, false
		}
	}
	if free == 0 {
		free = top + 1
		t.slots[id] = free
	}
	h := held{lookups: 1, ino: a.Ino, gen: a.Gen, size: a.Size}
	if !a.Mtime.IsZero() {
		h.mtime = a.Mtime.UnixNano()
	}
	nid = nodeID(id, free)
	t.held[nid] = h
	t.high = max(t.high, len(t.held))
	return nid, true
}

func cmpOr(a, b uint32) uint32 {
	if a != 0 {
		return a
	}
	return b
}

// get returns the inode nid if the kernel holds it. The root is always
// held, with no version.
func (t *nodeTable) get(nid uint64) (held, bool) {
	if nid == fuse.FUSE_ROOT_ID {
		return held{lookups: 1}, true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.held[nid]
	return h, ok
}

// forget takes n lookups off inode nid and reports whether the kernel has
// forgotten it, and what it held.
func (t *nodeTable) forget(nid, n uint64) (held, bool) {
	if nid == fuse.FUSE_ROOT_ID {
		return held{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.held[nid]
	if !ok {
		return held{}, false
	}
	if h.lookups > n {
		h.lookups -= n
		t.held[nid] = h
		return held{}, false
	}
	delete(t.held, nid)
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
	return h, true
}

func (t *nodeTable) has(nid uint64) bool {
	_, ok := t.held[nid]
	return ok
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
	for s := uint32(1); s <= max(t.slots[id], 1); s++ {
		if h, ok := t.held[nodeID(id, s)]; ok && h.gen == gen {
			return nodeID(id, s), true
		}
	}
	return 0, false
}

// len is the number of inodes held, the root left out.
func (t *nodeTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.held)
}

// shrink makes the map anew once it holds under a quarter of its peak, so
// that the memory of the entries forgotten can go back to the OS.
func (t *nodeTable) shrink() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if 4*len(t.held) >= t.high {
		return
	}
	m := make(map[uint64]held, len(t.held))
	for nid, h := range t.held {
		m[nid] = h
	}
	t.held, t.high = m, len(m)
}

func timeOfNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
