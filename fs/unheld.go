package fs

import (
	"math"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"rsfs/catalog"
)

// unheldMaxBytes bounds the bytes unheldStores refers to: a walk's window
// on a fast network is a few hundred small files; what does not fit is
// read through rsfs as before.
const unheldMaxBytes = 4 << 20

// unheldStores are warmed files whose inode the kernel did not hold when
// their bytes were verified: a walk's window reached their directory before
// its reader listed it. A READDIRPLUS that answers one in full gives the
// kernel its inode, and its store is sent once the kernel has taken that
// answer in, before the handle's next READDIRPLUS or its release is
// answered (the kernel links an answer's entries before the lister's
// getdents returns, and a lister such as grep -r's reads the whole
// directory before it opens a file in it). Its reader then finds the pages, as
// it does for a file warmed after its listing. The bytes are the cache's
// verified block, which never changes; a store goes only into the inode of
// the version they were verified as (nodeTable.pinStore).
type unheldStores struct {
	mu sync.Mutex
	// kept holds the bytes, oldest first; its count bound is never
	// reached: add drops by bytes (as cache/lru.go does).
	kept  *simplelru.LRU[catalog.NodeID, unheld]
	bytes int64
}

type unheld struct {
	gen  uint64
	data []byte
}

// add keeps version gen's bytes of file id, dropping the oldest kept over
// unheldMaxBytes.
func (u *unheldStores) add(id catalog.NodeID, gen uint64, data []byte) {
	if len(data) > unheldMaxBytes {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.kept == nil {
		u.kept, _ = simplelru.NewLRU(math.MaxInt, u.dropped) // errs only for a size <= 0
	}
	u.kept.Remove(id) // kept again: its newest bytes, as the newest
	u.kept.Add(id, unheld{gen: gen, data: data})
	u.bytes += int64(len(data))
	for u.bytes > unheldMaxBytes && u.kept.Len() > 0 {
		u.kept.RemoveOldest()
	}
}

// dropped accounts for bytes leaving kept, whatever the reason.
func (u *unheldStores) dropped(_ catalog.NodeID, w unheld) { u.bytes -= int64(len(w.data)) }

// take returns and forgets what is kept of file id.
func (u *unheldStores) take(id catalog.NodeID) (unheld, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.kept == nil {
		return unheld{}, false
	}
	w, ok := u.kept.Peek(id)
	if ok {
		u.kept.Remove(id)
	}
	return w, ok
}

// listedStore is a kept file a listing answered in full: stored once the
// kernel has taken the answer in.
type listedStore struct {
	id catalog.NodeID
	unheld
}

// takeStores returns and forgets the files h's earlier answers gave the
// kernel, to store (storeListed).
func (h *dirHandle) takeStores() []listedStore {
	h.mu.Lock()
	defer h.mu.Unlock()
	stores := h.stores
	h.stores = nil
	return stores
}

// storeListed stores files a listing gave the kernel, from the handler of
// that handle's next READDIRPLUS (or of its release), before it answers:
// the lister's getdents, and so its reads, wait for the pages. This is the
// one notification rsfs sends from inside a FUSE callback (notify.go sends
// the others from a goroutine of its own): a store takes the file inode's
// page locks and no lock the lister holds (the directory's), and nothing a
// READ of the file waits for waits on this handler. No lock is held.
func (f *FS) storeListed(stores []listedStore) {
	server := f.server.Load()
	if server == nil {
		return
	}
	for _, s := range stores {
		if nid, ok := f.nodes.pinStore(s.id, s.gen); ok {
			f.store(server, nid, s.data)
			f.nodes.unpinStore(nid)
		}
	}
}
