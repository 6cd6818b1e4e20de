package cache

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Cache holds content blocks in memory, bounded by bytes, and shares
// in-flight fills. It is safe for concurrent use. Returned blocks are shared:
// callers must not modify them.
type Cache struct {
	blockSize            int
	readAhead            int
	maxBytes             int64
	fillTimeout          time.Duration
	log                  *slog.Logger
	prefetchSlots        chan struct{}
	maxPendingHashBlocks int

	mu      sync.Mutex
	lru     *byteLRU
	flights map[blockKey]*flight

	hits, misses, fills, fillErrors, prefetches, streamed, drops atomic.Uint64
}

// Stats counts what a Cache did since it was made.
type Stats struct {
	Hits       uint64 // Get found the block cached
	Misses     uint64 // Get did not find the block cached (it waited on a fill)
	Fills      uint64 // fills started, by Get or prefetch
	FillErrors uint64 // fills that failed
	Prefetches uint64 // fills started by prefetch
	Streamed   uint64 // blocks stored from a stream continuing past its fill
	Drops      uint64 // blocks removed by DropContent
	Evictions  uint64 // blocks evicted to stay within MaxBytes
	Bytes      int64  // bytes cached now
	Blocks     int    // blocks cached now
}

// New returns an empty Cache.
func New(cfg Config) *Cache {
	cfg = cfg.withDefaults()
	return &Cache{
		blockSize:            cfg.BlockSize,
		readAhead:            cfg.ReadAhead,
		maxBytes:             cfg.MaxBytes,
		fillTimeout:          cfg.FillTimeout,
		log:                  cfg.Logger,
		prefetchSlots:        make(chan struct{}, cfg.PrefetchConcurrency),
		maxPendingHashBlocks: 4*cfg.ReadAhead + 64,
		lru:                  newByteLRU(cfg.MaxBytes),
		flights:              make(map[blockKey]*flight),
	}
}

// BlockSize returns the size of an aligned block.
func (c *Cache) BlockSize() int { return c.blockSize }

// Get returns block `block` of content id. On a miss it calls fill exactly
// once however many callers wait; the fill runs on a context detached from
// any single caller, with its own timeout, and its result is cached when it
// succeeds. Each caller stops waiting when its own ctx is done.
func (c *Cache) Get(ctx context.Context, id string, block int64, fill func(ctx context.Context) ([]byte, error)) ([]byte, error) {
	return c.get(ctx, blockKey{id, block}, fill)
}

// Put stores a block, evicting the least recently used ones as needed. A
// block larger than MaxBytes is not stored.
func (c *Cache) Put(id string, block int64, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.add(blockKey{id, block}, data)
}

// DropContent removes every cached block of a content id, and makes fills
// of it that are in flight deliver to their waiters without storing. Its
// cost is proportional to the blocks of that id and the fills in flight.
func (c *Cache) DropContent(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drops.Add(uint64(c.lru.removeID(id)))
	for k, f := range c.flights {
		if k.id == id {
			f.detached = true
			delete(c.flights, k)
		}
	}
}

// Stats returns the counters and current size.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	bytes, blocks, evictions := c.lru.bytes, c.lru.len(), c.lru.evictions
	c.mu.Unlock()
	return Stats{
		Hits:       c.hits.Load(),
		Misses:     c.misses.Load(),
		Fills:      c.fills.Load(),
		FillErrors: c.fillErrors.Load(),
		Prefetches: c.prefetches.Load(),
		Streamed:   c.streamed.Load(),
		Drops:      c.drops.Load(),
		Evictions:  evictions,
		Bytes:      bytes,
		Blocks:     blocks,
	}
}

// peek returns a cached block without touching its recency or the counters.
func (c *Cache) peek(k blockKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.entries[k]
	if !ok {
		return nil, false
	}
	return e.data, true
}

// cachedOrFilling reports whether a block is cached or being filled.
func (c *Cache) cachedOrFilling(k blockKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.contains(k) || c.flights[k] != nil
}
