package cache

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// minGCHeadroom is the least heap growth allowed between collections. At
// 16 MiB a first grep -r of 20,000 small files ran about 20 collections,
// and a first read of 512 MiB 47; at 32 MiB half as many, and each took
// about 4 % less (medians of 5, interleaved), for 12-15 MiB more at the
// peak of a burst. What a burst leaves is returned once it pauses (below),
// so an idle mount holds no more.
const minGCHeadroom = 32 << 20

// After a burst of reads the heap holds the blocks it evicted, as garbage
// up to the headroom, and the freed memory the runtime keeps for reuse:
// 30 MiB after a 512 MiB file streamed through a 256 MiB cache. No
// collection runs while nothing is allocated, and the runtime returns
// freed memory to the OS only slowly, so an idle mount would hold it for
// good. Once neither a collection nor a reader (Cache.Busy) has been seen
// for idleReturnAfter, the pacer returns it, when there is at least
// idleReturnMin to return: a full collection, a few milliseconds over a
// heap of blocks (they hold no pointers). A slow, steady reader, which
// allocates too little to collect within the second, is not interrupted
// (nor made to grow its heap back page by page). The collection the return
// runs finds nothing more to return, so it returns once per pause.
const (
	idleReturnAfter = time.Second
	idleReturnMin   = 8 << 20
)

// gcPacer keeps cached blocks from being doubled by the GC's headroom. With
// GOGC=100 the heap may grow to twice the live heap before a collection, and
// the live heap is mostly the block cache (--cache-size), so a mount reading
// a large file holds about twice its cache. After every collection the pacer
// sets the GC percent so that the headroom is what GOGC=100 gives the heap
// other than blocks (the catalog, buffers), never less than minGCHeadroom:
// blocks earn no headroom. Collections are cheap over blocks (they hold no
// pointers). A GOGC in the environment turns the pacer off.
type gcPacer struct {
	blocks  func() int64 // bytes of cached blocks now
	sample  []metrics.Sample
	percent int
	idle    *time.Timer          // runs returnIdle once collections pause for after
	after   time.Duration        // idleReturnAfter
	quiet   func() time.Duration // how long no reader has been at work
	free    func()               // debug.FreeOSMemory
	worth   func() int64         // returnable
}

// PaceGC starts pacing the GC after every collection, for the life of the
// process, so that c's cached blocks earn no headroom, and returning a
// read burst's garbage once the reads pause (see gcPacer).
func PaceGC(c *Cache) {
	if os.Getenv("GOGC") != "" {
		return
	}
	newGCPacer(c.MemoryBytes, c.QuietFor, idleReturnAfter, debug.FreeOSMemory, returnable).arm()
}

// newGCPacer is a pacer that calls free once collections and readers have
// paused for after (and there is enough to return).
func newGCPacer(blocks func() int64, quiet func() time.Duration, after time.Duration, free func(), worth func() int64) *gcPacer {
	p := &gcPacer{blocks: blocks, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: 100,
		after: after, quiet: quiet, free: free, worth: worth}
	p.idle = time.AfterFunc(after, p.returnIdle)
	return p
}

// arm runs onGC after the next collection.
func (p *gcPacer) arm() {
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(p *gcPacer) { p.onGC() }, p)
}

func (p *gcPacer) onGC() {
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() == metrics.KindUint64 {
		if pct := gcPercent(int64(p.sample[0].Value.Uint64()), p.blocks()); pct != p.percent {
			debug.SetGCPercent(pct)
			p.percent = pct
		}
	}
	p.collected()
	p.arm()
}

// collected notes a collection: the return waits for a pause after it.
func (p *gcPacer) collected() { p.idle.Reset(p.after) }

// returnIdle gives the OS back the heap's garbage and freed memory, if
// there is at least idleReturnMin of it: collections have paused. While a
// reader is still at work it looks again once it has been quiet for after.
func (p *gcPacer) returnIdle() {
	if q := p.quiet(); q < p.after {
		p.idle.Reset(p.after - q)
		return
	}
	if p.worth() >= idleReturnMin {
		p.free()
	}
}

// returnable is the heap memory a full collection and a return would give
// back: objects no longer live, and free memory not yet returned.
func returnable() int64 {
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	for _, v := range s {
		if v.Value.Kind() != metrics.KindUint64 {
			return 0
		}
	}
	live, objects, free := int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64()), int64(s[2].Value.Uint64())
	return max(0, objects-live) + free
}

// gcPercent is the GC percent that lets a heap of live bytes, blocks of them
// cached blocks, grow by the rest of it (at least minGCHeadroom) before the
// next collection; within [5, 100] and rounded to 5.
func gcPercent(live, blocks int64) int {
	if live <= 0 {
		return 100
	}
	headroom := max(live-blocks, minGCHeadroom)
	pct := int(100 * headroom / live)
	return max(5, min(100, pct/5*5))
}
