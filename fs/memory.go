package fs

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// inodes counts the inodes the kernel holds, and gives the heap back to
// the OS after the kernel forgets many of them (DESIGN §11). The Go runtime
// keeps freed heap for reuse: after a collection it returns to the OS only
// what lies above about twice the live heap, slowly, and no collection
// runs while nothing is allocated. (The node table gives up a page once
// the kernel has forgotten every inode in it: nodes.go.)
type inodes struct {
	live, high atomic.Int64 // inodes now; most since the last return
	forgotten  atomic.Int64 // forgets so far
	started    atomic.Bool  // the returner runs
	kick       chan struct{}

	// Set by New; tests shorten them before the first inode is made.
	min    int64         // the least fall that is returned
	settle time.Duration // forgets stopped this long: the burst is over
	every  time.Duration // at most one return this often
	free   func()
}

// The defaults: a fall of a quarter of the peak, and of at least
// returnMinHeap of inodes, returned once the forgets have stopped for a
// second, at most every 5 s.
//
// An inode the kernel holds costs inodeHeap bytes of heap where the kernel
// holds a walk's inodes (TestHeapPerKernelInode: 48.2 at 201,000 inodes):
// its 40-byte entry, in a page of 1,024 that the allocator rounds up from
// 40,968 bytes to 48 KiB. One held alone in its page costs the whole page;
// a fall frees only the pages it empties. A return costs a full collection
// and, where the mount is busy, the page faults of growing back: below the
// least headroom the heap is given between collections (32 MiB,
// cache/gcpace.go) a busy mount would grow back into it before its next
// collection anyway. So the least fall returned is 16 MiB of entries (half
// that headroom), about 350,000 inodes; a smaller one stays with an idle
// mount.
const (
	inodeHeap     = 48
	returnMinHeap = 16 << 20
	returnMin     = returnMinHeap / inodeHeap
	returnSettle  = time.Second
	returnEvery   = 5 * time.Second
	returnMaxLag  = 5 * time.Second // a burst that goes on is returned meanwhile
)

func (c *inodes) init() {
	c.kick = make(chan struct{}, 1)
	c.min, c.settle, c.every, c.free = returnMin, returnSettle, returnEvery, debug.FreeOSMemory
}

// added counts an inode made.
func (c *inodes) added() {
	l := c.live.Add(1)
	for h := c.high.Load(); l > h && !c.high.CompareAndSwap(h, l); h = c.high.Load() {
	}
}

// forgot counts an inode forgotten, and wakes the returner once
// the count has fallen by a quarter of its peak and by at least min. It
// runs on go-fuse's reader loop: two atomics and a send that does not wait.
func (c *inodes) forgot(f *FS) {
	c.forgotten.Add(1)
	l := c.live.Add(-1)
	h := c.high.Load()
	if fall := h - l; fall < c.min || 4*fall < h {
		return
	}
	if !c.started.Load() && c.started.CompareAndSwap(false, true) {
		go c.returner(f.closing)
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// returner gives the heap back after each large fall: once the forgets
// have stopped for settle (or after returnMaxLag of them), at most every
// every, until closing.
func (c *inodes) returner(closing context.Context) {
	var last time.Time
	for {
		select {
		case <-c.kick:
		case <-closing.Done():
			return
		}
		wait := time.Until(last.Add(c.every))
		start := time.Now()
		for n := c.forgotten.Load(); ; {
			select {
			case <-time.After(max(wait, c.settle)):
			case <-closing.Done():
				return
			}
			wait = 0
			m := c.forgotten.Load()
			if m == n || time.Since(start) >= returnMaxLag {
				break
			}
			n = m
		}
		c.high.Store(c.live.Load())
		select { // a kick for the fall being returned
		case <-c.kick:
		default:
		}
		c.free()
		last = time.Now()
	}
}
