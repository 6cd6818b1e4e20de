package cache

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// minGCHeadroom is the least heap growth allowed between collections.
const minGCHeadroom = 16 << 20

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
}

// PaceGC starts pacing the GC after every collection, for the life of the
// process, so that the blocks cached (blocks, e.g. Cache.MemoryBytes) earn
// no headroom (see gcPacer).
func PaceGC(blocks func() int64) {
	if os.Getenv("GOGC") != "" {
		return
	}
	p := &gcPacer{blocks: blocks, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: 100}
	p.arm()
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
	p.arm()
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
