package fs

import (
	"context"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/catalog"
)

// notifier sends kernel notifications from a goroutine of its own, never
// under a lock and never from inside a FUSE callback (that deadlocks). The
// queue is unbounded so the Change List follower never waits on the kernel.
type notifier struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []note
	closed bool
	// queued and sent count the notes ever queued and sent, so that one
	// can wait for those queued before it (notified).
	queued, sent uint64
}

// Notify tells the kernel about catalog changes: new and removed entries
// and new versions. It returns at once; a goroutine sends them. First,
// before the kernel can look the new version up, it keeps the version a
// change replaced or removed for the inode the kernel holds of it
// (version.go).
func (f *FS) Notify(effects []catalog.Effect) {
	notes := make([]note, len(effects))
	for i, e := range effects {
		notes[i] = note{effect: e}
		if e.Old != nil {
			notes[i].old = f.keepOld(e)
		}
	}
	f.enqueue(notes)
}

// note is one kernel notification to send: a catalog effect, or (drop)
// the pages the kernel holds of a file version that failed.
type note struct {
	effect catalog.Effect
	old    uint64 // the inode of the version the effect replaced or removed, if held
	drop   uint64
	store  uint64 // an inode (pinned) to store data in, from its start (warmed)
	data   []byte
}

// keepOld finds the inode the kernel holds of the version e replaced or
// removed, and keeps that version for it.
func (f *FS) keepOld(e catalog.Effect) uint64 {
	nid, ok := f.nodes.version(e.ID, e.Old.Attr.Gen)
	if !ok {
		return 0
	}
	ref := fileRef{nid: nid, id: e.ID, gen: e.Old.Attr.Gen}
	f.keep(ref, *e.Old, true)
	if h, ok := f.nodes.get(nid); !ok || h.gen != ref.gen {
		f.forget(ref) // forgotten meanwhile: its FORGET may have come first
		return 0
	}
	return nid
}

func (f *FS) enqueue(notes []note) {
	n := &f.notes
	n.mu.Lock()
	n.queue = append(n.queue, notes...)
	n.queued += uint64(len(notes))
	n.mu.Unlock()
	n.cond.Broadcast()
}

// notified waits until the kernel has been told of every note queued
// before the call (or the notifier stops, or ctx ends): `rsfs poll`
// answers only once the changes it applied are what a reader sees.
func (f *FS) notified(ctx context.Context) {
	n := &f.notes
	stop := context.AfterFunc(ctx, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.cond.Broadcast()
	})
	defer stop()
	n.mu.Lock()
	defer n.mu.Unlock()
	for target := n.queued; n.sent < target && !n.closed && ctx.Err() == nil; {
		n.cond.Wait()
	}
}

// warmed hands the bytes of version gen of small file id, warmed ahead of
// its reader and verified, to the kernel's page cache (FUSE_NOTIFY_STORE),
// if the kernel holds that version's inode: the reader then reads them as
// on a second pass, without a READ. An inode's version never changes
// (version.go), so the pages stay true; the node ID is pinned until the
// store is sent. A file whose inode the kernel does not hold yet is kept
// for the listing that gives it one (unheld.go).
func (f *FS) warmed(id catalog.NodeID, gen uint64, data []byte) {
	if nid, ok := f.nodes.pinStore(id, gen); ok {
		f.enqueue([]note{{store: nid, data: data}})
		return
	}
	f.unheld.add(id, gen, data) // stored once a listing gives the kernel its inode (unheld.go)
}

// store sends one warmed file's bytes to the kernel's page cache. ENOENT:
// the kernel forgot the inode meanwhile, and the reader's lookup will make
// another.
func (f *FS) store(server *fuse.Server, nid uint64, data []byte) {
	st := server.InodeNotifyStoreCache(nid, 0, data)
	if st == fuse.OK {
		f.pageStores.Add(1)
	} else if errno := syscall.Errno(st); errno != syscall.ENOENT {
		f.log.Debug("kernel page store failed", "node", nid, "bytes", len(data), "errno", errno)
	}
}

// dropPages asks the kernel, from the notifier's goroutine, to forget the
// pages it cached of a file version: it failed verification or is gone,
// and no later read may be answered from them.
func (f *FS) dropPages(nid uint64) {
	f.enqueue([]note{{drop: nid}})
}

func (f *FS) runNotifier() {
	n := &f.notes
	for {
		n.mu.Lock()
		for len(n.queue) == 0 && !n.closed {
			n.cond.Wait()
		}
		if n.closed {
			n.mu.Unlock()
			return
		}
		batch := n.queue
		n.queue = nil
		n.mu.Unlock()
		server := f.server.Load()
		for _, nt := range batch {
			switch {
			case server == nil: // not mounted: the kernel holds nothing
			case nt.drop != 0:
				f.check(server.InodeNotify(nt.drop, 0, 0), catalog.Effect{Kind: catalog.ContentChanged})
			case nt.store != 0:
				f.store(server, nt.store, nt.data)
			default:
				f.send(server, nt)
			}
			if nt.store != 0 {
				f.nodes.unpinStore(nt.store)
			}
		}
		n.mu.Lock()
		n.sent += uint64(len(batch))
		n.mu.Unlock()
		n.cond.Broadcast()
	}
}

func (f *FS) stopNotifier() {
	f.notes.mu.Lock()
	f.notes.closed = true
	f.notes.mu.Unlock()
	f.notes.cond.Broadcast()
}

// send tells the kernel about one effect. A node the kernel does not hold
// needs nothing; ENOENT from the kernel means the same. An added name gets
// an EntryNotify before anything else: the kernel may keep a negative entry
// for it (dir.go), for an hour. A change that creates a path adds each
// directory it makes, top down, so the first new one is notified in the
// directory the kernel holds, where a lookup of it found nothing; below it
// the kernel holds nothing and can keep nothing. A LOOKUP answered missing
// just before the change cannot outlive it: the kernel holds the
// directory's lock until that answer is in its cache, and EntryNotify
// waits for the lock (TestCreatedDuringItsLookupShows).
func (f *FS) send(server *fuse.Server, nt note) {
	e := nt.effect
	parent, held := f.nodes.holds(e.Parent)
	switch {
	case !held:
	case e.Kind == catalog.EntryAdded:
		f.check(server.EntryNotify(parent, e.Name), e)
		f.check(server.InodeNotify(parent, 0, 0), e) // cached listing and attributes
	case nt.old != 0:
		f.unlinkVersion(server, parent, nt.old, e)
	case e.Kind == catalog.EntryRemoved && e.ID.IsDir():
		if child, ok := f.nodes.holds(e.ID); ok {
			f.check(server.DeleteNotify(parent, child, e.Name), e)
		} else {
			f.check(server.EntryNotify(parent, e.Name), e)
		}
	case e.Kind == catalog.EntryRemoved || e.Kind == catalog.ContentChanged && e.Old != nil:
		// The kernel holds no inode of the old version under the name, or
		// already one of the new: only the name is dropped.
		f.check(server.EntryNotify(parent, e.Name), e)
	}
	if e.Kind == catalog.EntryRemoved && held {
		f.check(server.InodeNotify(parent, 0, 0), e) // the cached listing
	}
}

// unlinkVersion tells the kernel that the name no longer leads to inode
// old, of the version the effect replaced: the file is gone or has a new
// version. The inode is unlinked, as a deleted file held open is on a
// local disk; it lives on, with its version, while a process holds it
// open, and goes with its last close. Where the name already leads
// elsewhere (the kernel looked the new version up first), the inode's
// attributes are dropped instead, so that the kernel asks again and learns
// it is unlinked.
func (f *FS) unlinkVersion(server *fuse.Server, parent, old uint64, e catalog.Effect) {
	if server.DeleteNotify(parent, old, e.Name) == fuse.OK {
		return
	}
	f.check(server.EntryNotify(parent, e.Name), e)
	f.check(server.InodeNotify(old, -1, 0), e)
}

func (f *FS) check(st fuse.Status, e catalog.Effect) {
	if errno := syscall.Errno(st); errno != 0 && errno != syscall.ENOENT {
		f.log.Debug("kernel notification failed", "effect", e.Kind.String(), "name", e.Name, "errno", errno)
	}
}
