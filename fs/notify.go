package fs

import (
	"strings"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"rsfs/catalog"
)

// inode returns the go-fuse inode of a catalog node if the kernel holds it,
// by walking go-fuse's tree (which holds exactly the nodes the kernel knows)
// along the node's path. No per-inode index is kept: at millions of files
// it would cost more than the inodes.
func (f *FS) inode(id catalog.NodeID) *gofs.Inode {
	n := &f.root.Inode
	if id == catalog.RootID {
		return n
	}
	path := f.cfg.Catalog.Path(id)
	if path == "" {
		return nil
	}
	for _, name := range strings.Split(path, "/") {
		if n = n.GetChild(name); n == nil {
			return nil
		}
	}
	return n
}

// notifier sends kernel notifications from a goroutine of its own, never
// under a lock and never from inside a FUSE callback (that deadlocks). The
// queue is unbounded so the Change List follower never waits on the kernel.
type notifier struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []note
	closed bool
}

// Notify tells the kernel about catalog changes: new and removed entries
// and new versions. It returns at once; a goroutine sends them.
func (f *FS) Notify(effects []catalog.Effect) {
	notes := make([]note, len(effects))
	for i, e := range effects {
		notes[i] = note{effect: e}
	}
	f.enqueue(notes)
}

// note is one kernel notification to send: a catalog effect, or (isDrop)
// the pages the kernel holds of a file whose version failed.
type note struct {
	effect catalog.Effect
	drop   catalog.NodeID
	isDrop bool
}

func (f *FS) enqueue(notes []note) {
	n := &f.notes
	n.mu.Lock()
	n.queue = append(n.queue, notes...)
	n.mu.Unlock()
	n.cond.Broadcast()
}

// dropPages asks the kernel, from the notifier's goroutine, to forget the
// pages it cached of a file: its version failed verification or is gone,
// and no later read may be answered from them.
func (f *FS) dropPages(id catalog.NodeID) {
	f.enqueue([]note{{drop: id, isDrop: true}})
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
		for _, nt := range batch {
			if nt.isDrop {
				f.sendDrop(nt.drop)
				continue
			}
			f.send(nt.effect)
		}
	}
}

func (f *FS) stopNotifier() {
	f.notes.mu.Lock()
	f.notes.closed = true
	f.notes.mu.Unlock()
	f.notes.cond.Broadcast()
}

// send tells the kernel about one effect. A node the kernel does not hold
// needs nothing; ENOENT from the kernel means the same.
func (f *FS) send(e catalog.Effect) {
	parent := f.inode(e.Parent)
	switch e.Kind {
	case catalog.EntryAdded:
		if parent != nil {
			f.check(parent.NotifyEntry(e.Name), e)
			f.check(parent.NotifyContent(0, 0), e) // cached listing and attributes
		}
	case catalog.EntryRemoved:
		if parent == nil {
			return
		}
		if child := parent.GetChild(e.Name); child != nil {
			f.check(parent.NotifyDelete(e.Name, child), e)
		} else {
			f.check(parent.NotifyEntry(e.Name), e)
		}
		f.check(parent.NotifyContent(0, 0), e)
	case catalog.ContentChanged:
		if f.holdBack(e.ID) {
			return // told when the file's last handle closes (pin.go)
		}
		if n := f.inode(e.ID); n != nil {
			f.check(n.NotifyContent(0, 0), e) // pages and attributes
		}
		f.told(e.ID)
		if parent != nil {
			f.check(parent.NotifyEntry(e.Name), e)
		}
	}
}

func (f *FS) sendDrop(id catalog.NodeID) {
	if n := f.inode(id); n != nil {
		f.check(n.NotifyContent(0, 0), catalog.Effect{Kind: catalog.ContentChanged, ID: id})
	}
}

func (f *FS) check(errno syscall.Errno, e catalog.Effect) {
	if errno != 0 && errno != syscall.ENOENT {
		f.log.Debug("kernel notification failed", "effect", e.Kind.String(), "name", e.Name, "errno", errno)
	}
}
