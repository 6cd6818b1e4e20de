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
// and new versions. It returns at once; a goroutine sends them. First,
// before the kernel can look the new version up, it keeps the version a
// change replaced or removed for the inode the kernel holds of it
// (version.go).
func (f *FS) Notify(effects []catalog.Effect) {
	notes := make([]note, len(effects))
	for i, e := range effects {
		notes[i] = note{effect: e}
		if e.Old != nil {
			notes[i].parent, notes[i].old = f.keepOld(e)
		}
	}
	f.enqueue(notes)
}

// note is one kernel notification to send: a catalog effect, or (drop)
// the pages the kernel holds of a file version that failed.
type note struct {
	effect catalog.Effect
	parent *gofs.Inode // the effect's directory, if already found
	old    *fileNode   // the inode of the version the effect replaced or removed
	drop   *gofs.Inode
}

// keepOld finds the inode the kernel holds of the version e replaced or
// removed, and keeps that version for it.
func (f *FS) keepOld(e catalog.Effect) (parent *gofs.Inode, old *fileNode) {
	if parent = f.inode(e.Parent); parent == nil {
		return nil, nil
	}
	child := parent.GetChild(e.Name)
	if child == nil {
		return parent, nil
	}
	old, isFile := child.Operations().(*fileNode)
	if !isFile || old.gen() != e.Old.Attr.Gen {
		return parent, nil
	}
	f.keep(old, *e.Old, true)
	return parent, old
}

func (f *FS) enqueue(notes []note) {
	n := &f.notes
	n.mu.Lock()
	n.queue = append(n.queue, notes...)
	n.mu.Unlock()
	n.cond.Broadcast()
}

// dropPages asks the kernel, from the notifier's goroutine, to forget the
// pages it cached of a file version: it failed verification or is gone,
// and no later read may be answered from them.
func (f *FS) dropPages(n *gofs.Inode) {
	f.enqueue([]note{{drop: n}})
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
			if nt.drop != nil {
				f.check(nt.drop.NotifyContent(0, 0), catalog.Effect{Kind: catalog.ContentChanged})
				continue
			}
			f.send(nt)
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
func (f *FS) send(nt note) {
	e := nt.effect
	parent := nt.parent
	if parent == nil {
		parent = f.inode(e.Parent)
	}
	switch {
	case e.Kind == catalog.EntryAdded:
		if parent != nil {
			f.check(parent.NotifyEntry(e.Name), e)
			f.check(parent.NotifyContent(0, 0), e) // cached listing and attributes
		}
	case nt.old != nil:
		f.unlinkVersion(parent, nt.old, e)
	case e.Kind == catalog.EntryRemoved && parent != nil:
		if child := parent.GetChild(e.Name); child != nil {
			f.check(parent.NotifyDelete(e.Name, child), e)
		} else {
			f.check(parent.NotifyEntry(e.Name), e)
		}
	case e.Kind == catalog.ContentChanged && e.Old != nil && parent != nil:
		// The kernel holds no inode of the old version under the name, or
		// already one of the new: only the name is dropped.
		f.check(parent.NotifyEntry(e.Name), e)
	}
	if e.Kind == catalog.EntryRemoved && parent != nil {
		f.check(parent.NotifyContent(0, 0), e) // the cached listing
	}
}

// unlinkVersion tells the kernel that the name no longer leads to the
// inode of old's version: the file is gone or has a new version. The
// inode is unlinked, as a deleted file held open is on a local disk; it
// lives on, with its version, while a process holds it open, and goes
// with its last close. Where the name already leads elsewhere (the kernel
// looked the new version up first), the inode's attributes are dropped
// instead, so that the kernel asks again and learns it is unlinked.
func (f *FS) unlinkVersion(parent *gofs.Inode, old *fileNode, e catalog.Effect) {
	if parent != nil && parent.NotifyDelete(e.Name, &old.Inode) == 0 {
		return
	}
	if parent != nil {
		f.check(parent.NotifyEntry(e.Name), e)
	}
	f.check(old.NotifyContent(-1, 0), e)
}

func (f *FS) check(errno syscall.Errno, e catalog.Effect) {
	if errno != 0 && errno != syscall.ENOENT {
		f.log.Debug("kernel notification failed", "effect", e.Kind.String(), "name", e.Name, "errno", errno)
	}
}
