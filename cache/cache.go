package cache

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/status"
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
	verifyWholeBelow     int64

	disk           *diskStore // nil without a disk cache
	maxWarmWorkers func() int
	warmBudget     int64

	mu      sync.Mutex
	lru     *byteLRU
	flights map[blockKey]*flight
	warm    warmState // guarded by mu
	wholes  map[string]*wholeFlight

	vers *versions

	hits, misses, fills, fillErrors, prefetches, streamed, drops, warms, warmSkips atomic.Uint64
	lastBusy                                                                       atomic.Int64 // time.Now().UnixNano() of the last Busy

	verifyFailures status.Events // bytes that disagreed with the published length or hash
	// hashed counts the bytes hashed to verify contents (countHashed).
	hashed atomic.Uint64
}

// countHashed adds n bytes hashed for verification to *c, if c is set.
func countHashed(c *atomic.Uint64, n int) {
	if c != nil {
		c.Add(uint64(n))
	}
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
	Hashed     uint64 // bytes hashed to verify contents (each hash of a byte counts)
	Evictions  uint64 // blocks evicted to stay within MaxBytes
	Bytes      int64  // bytes cached now
	Blocks     int    // blocks cached now

	Warms     uint64 // fills started by Warm
	WarmSkips uint64 // Warm items not warmed: too large, over budget or queue full

	DiskLookups    uint64 // blocks asked of the disk: by a fill for a memory miss, a prefetch or a warm
	DiskHits       uint64 // blocks read from disk (of DiskLookups)
	DiskWrites     uint64 // blocks written (block files and records in packs)
	DiskWriteDrops uint64 // block writes dropped: the queue was full, or the block left memory before its turn
	DiskEvictions  uint64 // block files and packs evicted to stay within DiskMaxBytes, and packs left empty
	DiskErrors     uint64 // bad block files and records discarded, failed writes and removals
	DiskBytes      int64  // bytes of the block files and packs known now (headers and tables included)
	DiskBlocks     int    // blocks known now (block files and records in packs)
}

// New returns an empty Cache. If cfg.DiskDir cannot be prepared the error is
// logged and the Cache runs without a disk cache; NewWithDisk reports it.
func New(cfg Config) *Cache {
	c, err := NewWithDisk(cfg)
	if err != nil {
		c.log.Error("running without the disk cache", "err", err)
	}
	return c
}

// NewWithDisk returns a Cache over the disk cache in cfg.DiskDir (if set),
// whose earlier blocks it reuses. On error the Cache is usable without the
// disk cache. The files already in DiskDir are indexed in the background;
// reads find them meanwhile.
func NewWithDisk(cfg Config) (*Cache, error) {
	cfg = cfg.withDefaults()
	c := newMemoryCache(cfg)
	if cfg.DiskDir == "" {
		return c, nil
	}
	// The disk queue holds keys: a block is written from memory once the
	// reads pause (docs/DESIGN.md §5).
	d, err := openDiskStore(cfg.DiskDir, cfg.DiskMaxBytes, cfg.BlockSize, c.peek, cfg.Logger)
	if err != nil {
		return c, fmt.Errorf("cache: disk cache: %w", err)
	}
	c.disk = d
	return c, nil
}

func newMemoryCache(cfg Config) *Cache {
	c := &Cache{
		blockSize:            cfg.BlockSize,
		readAhead:            cfg.ReadAhead,
		maxBytes:             cfg.MaxBytes,
		fillTimeout:          cfg.FillTimeout,
		log:                  cfg.Logger,
		prefetchSlots:        make(chan struct{}, cfg.PrefetchConcurrency),
		maxPendingHashBlocks: 4*cfg.ReadAhead + 64,
		verifyWholeBelow:     cfg.VerifyWholeBelow,
		maxWarmWorkers:       warmWorkers(cfg),
		warmBudget:           cfg.MaxBytes / 4,
		lru:                  newByteLRU(cfg.MaxBytes),
		flights:              make(map[blockKey]*flight),
		wholes:               make(map[string]*wholeFlight),
	}
	c.vers = newVersions(&c.hashed)
	c.lastBusy.Store(time.Now().UnixNano())
	return c
}

// BlockSize returns the size of an aligned block.
func (c *Cache) BlockSize() int { return c.blockSize }

// OneBlock reports whether a content of size bytes fits in one block: it
// is verified whole at its first read, and is small enough to warm.
func (c *Cache) OneBlock(size int64) bool { return size <= int64(c.blockSize) }

// VerifyWholeBelow returns the size up to which a content with a published
// hash is verified whole before its first byte is served.
func (c *Cache) VerifyWholeBelow() int64 { return c.verifyWholeBelow }

// Bad reports whether version id failed verification on every copy: its
// reads fail until the catalog names a new version, or its backoff passes
// (BadRetryBase doubling to BadRetryMax) or RetryBad is called.
func (c *Cache) Bad(id string) bool { return c.vers.badErr(id) != nil }

// RetryBad lets every version that failed verification be fetched and
// verified again at its next read, without waiting for its backoff: the
// mount calls it after each poll.
func (c *Cache) RetryBad() { c.vers.retryBad() }

// Get returns block `block` of content id. On a miss it calls fill exactly
// once however many callers wait; the fill runs on a context detached from
// any single caller, with its own timeout, and its result is cached when it
// succeeds. Each caller stops waiting when its own ctx is done.
func (c *Cache) Get(ctx context.Context, id string, block int64, fill func(ctx context.Context) ([]byte, error)) ([]byte, error) {
	return c.get(ctx, blockKey{id, block}, fill)
}

// Put stores a block, evicting the least recently used ones as needed, and
// queues it for the disk cache. A block larger than MaxBytes is not stored
// in memory.
func (c *Cache) Put(id string, block int64, data []byte) {
	c.mu.Lock()
	c.lru.add(blockKey{id, block}, data)
	c.mu.Unlock()
	c.writeToDisk(blockKey{id, block})
}

// DropContent removes every cached block of a content id, and makes fills
// of it that are in flight deliver to their waiters without storing. On disk
// it removes the id's blocks written or read since New and cancels queued
// writes of them; older files of the id stay until evicted (see diskStore).
// Its cost is proportional to the blocks of that id and the fills in flight.
func (c *Cache) DropContent(id string) {
	c.mu.Lock()
	c.drops.Add(uint64(c.lru.removeID(id)))
	for k, f := range c.flights {
		if k.id == id {
			f.detached = true
			delete(c.flights, k)
		}
	}
	c.mu.Unlock()
	if c.disk != nil {
		c.disk.dropID(id)
	}
}

// Close finishes the queued disk writes and stops the disk cache's
// background work; later blocks are kept in memory only. The Cache stays
// usable. Close is a no-op without a disk cache.
func (c *Cache) Close() {
	if c.disk != nil {
		c.disk.close()
	}
}

// writeToDisk queues a block held in memory for the disk cache, if there is
// one.
func (c *Cache) writeToDisk(k blockKey) {
	if c.disk != nil {
		c.disk.enqueue(k)
	}
}

// Bounds returns the most bytes the cache keeps in memory and on disk (0:
// no disk cache), as configured with its defaults applied.
func (c *Cache) Bounds() (memory, disk int64) {
	if c.disk != nil {
		disk = c.disk.maxBytes
	}
	return c.maxBytes, disk
}

// MemoryBytes returns the bytes of the blocks cached in memory now.
func (c *Cache) MemoryBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.bytes
}

// Stats returns the counters and current size.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	bytes, blocks, evictions := c.lru.bytes, c.lru.len(), c.lru.evictions
	c.mu.Unlock()
	var d diskStats
	if c.disk != nil {
		d = c.disk.stats()
	}
	return Stats{
		Warms:          c.warms.Load(),
		WarmSkips:      c.warmSkips.Load(),
		DiskLookups:    d.lookups,
		DiskHits:       d.hits,
		DiskWrites:     d.writes,
		DiskWriteDrops: d.drops,
		DiskEvictions:  d.evictions,
		DiskErrors:     d.errs,
		DiskBytes:      d.bytes,
		DiskBlocks:     d.blocks,
		Hits:           c.hits.Load(),
		Misses:         c.misses.Load(),
		Fills:          c.fills.Load(),
		FillErrors:     c.fillErrors.Load(),
		Prefetches:     c.prefetches.Load(),
		Streamed:       c.streamed.Load(),
		Hashed:         c.hashed.Load(),
		Drops:          c.drops.Load(),
		Evictions:      evictions,
		Bytes:          bytes,
		Blocks:         blocks,
	}
}

// peek returns a cached block without touching its recency or the counters.
func (c *Cache) peek(k blockKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.peek(k)
}

// Busy notes that a reader is at work: an open or a read, or (told by the
// file system) a walk of the tree. Disk-cache writes wait for a pause
// (disk.go, settle).
func (c *Cache) Busy() {
	now := time.Now().UnixNano()
	c.lastBusy.Store(now)
	if c.disk != nil {
		c.disk.lastBusy.Store(now)
	}
}

// QuietFor is how long no reader has been at work (Busy): since the last
// open, read or walk of the tree, or since the cache was made.
func (c *Cache) QuietFor() time.Duration {
	return time.Since(time.Unix(0, c.lastBusy.Load()))
}

// onDisk reports whether the disk cache may hold a block.
func (c *Cache) onDisk(k blockKey) bool {
	return c.disk != nil && c.disk.mayHold(k)
}

// cachedOrFilling reports whether a block is cached or being filled.
func (c *Cache) cachedOrFilling(k blockKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.contains(k) || c.flights[k] != nil
}
