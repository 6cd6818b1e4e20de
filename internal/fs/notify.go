package fs

import (
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"rsfs/internal/catalog"
)

// inodes maps the catalog nodes the kernel holds to their go-fuse inodes,
// so that a change can be told to the kernel. Nodes leave on forget.
type inodes struct {
	m sync.Map // catalog.NodeID → *gofs.Inode
}

func (t *inodes) add(id catalog.NodeID, n *gofs.Inode) { t.m.Store(id, n) }

func (t *inodes) get(id catalog.NodeID) *gofs.Inode {
	if v, ok := t.m.Load(id); ok {
		return v.(*gofs.Inode)
	}
	return nil
}

func (t *inodes) forget(id catalog.NodeID, n *gofs.Inode) { t.m.CompareAndDelete(id, n) }

// notifier sends kernel notifications from a goroutine of its own, never
// under a lock and never from inside a FUSE callback (that deadlocks). The
// queue is unbounded so the Change List follower never waits on the kernel.
type notifier struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []catalog.Effect
	closed  bool
	pending int
}

// Notify tells the kernel about catalog changes: new and removed entries
// and new versions. It returns at once; Flush waits until they are sent.
func (f *FS) Notify(effects []catalog.Effect) {
	n := &f.notes
	n.mu.Lock()
	n.queue = append(n.queue, effects...)
	n.pending += len(effects)
	n.mu.Unlock()
	n.cond.Broadcast()
}

// Flush waits until every effect queued so far has been sent.
func (f *FS) Flush() {
	n := &f.notes
	n.mu.Lock()
	defer n.mu.Unlock()
	for n.pending > 0 && !n.closed {
		n.cond.Wait()
	}
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
		for _, e := range batch {
			f.send(e)
		}
		n.mu.Lock()
		n.pending -= len(batch)
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
// needs nothing; ENOENT from the kernel means the same.
func (f *FS) send(e catalog.Effect) {
	parent := f.nodes.get(e.Parent)
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
		if child := f.nodes.get(e.ID); child != nil {
			f.check(parent.NotifyDelete(e.Name, child), e)
		} else {
			f.check(parent.NotifyEntry(e.Name), e)
		}
		f.check(parent.NotifyContent(0, 0), e)
	case catalog.ContentChanged:
		if n := f.nodes.get(e.ID); n != nil {
			f.check(n.NotifyContent(0, 0), e) // pages and attributes
		}
		if parent != nil {
			f.check(parent.NotifyEntry(e.Name), e)
		}
	}
}

func (f *FS) check(errno syscall.Errno, e catalog.Effect) {
	if errno != 0 && errno != syscall.ENOENT {
		f.log.Debug("kernel notification failed", "effect", e.Kind.String(), "name", e.Name, "errno", errno)
	}
}
