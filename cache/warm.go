package cache

// warmQueueLen bounds the Warm items waiting for a worker: two of the
// largest windows package fs asks for.
const warmQueueLen = 4096

// WarmItem is a content that a reader is likely to open soon, and where to
// fetch it from.
type WarmItem struct {
	Content Content
	Fetcher Fetcher
	// Filled, if set, is given the content's bytes once a warming fill
	// has them verified (read, or from the disk cache); not if the content
	// was in memory or being filled already. It runs on the fill's
	// goroutine, so it must return at once; the bytes are the cached
	// block's, never changed, so it may keep them.
	Filled func(data []byte)
}

func (it WarmItem) filled(data []byte) {
	if it.Filled != nil {
		it.Filled(data)
	}
}

// warmState is the Warm queue; it is guarded by Cache.mu.
type warmState struct {
	queue        []WarmItem
	queued       map[string]bool // content ids in queue
	pendingBytes int64           // bytes queued or being filled by Warm
	workers      int
}

// Warm fetches (in the background, bounded by the prefetch concurrency,
// lowest priority) every block of contents not yet cached, so a reader
// opening them next finds them in memory. It never blocks and never
// verifies less than Get would (small contents are hash-verified before
// caching, as in a normal fill).
//
// Only contents of one block (1..BlockSize bytes) are warmed, and never at
// the expense of hot data: Warm runs at most Config.WarmConcurrency fills at
// once (half of the prefetch slots by default), beside the prefetches of
// open files, which keep every slot of theirs, and it skips items
// while the bytes it has queued, is filling, or has cached that no reader
// has asked for yet would exceed a quarter of MaxBytes.
func (c *Cache) Warm(items []WarmItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, it := range items {
		if c.shouldWarmLocked(it.Content) {
			if c.warm.queued == nil {
				c.warm.queued = make(map[string]bool)
			}
			c.warm.queue = append(c.warm.queue, it)
			c.warm.queued[it.Content.ID] = true
			c.warm.pendingBytes += it.Content.Size
		}
	}
	limit := c.maxWarmWorkers()
	for n := len(c.warm.queue); n > 0 && c.warm.workers < limit; n-- {
		c.warm.workers++
		go c.warmWorker()
	}
}

// shouldWarmLocked reports whether a content should be queued for warming.
// c.mu must be held.
func (c *Cache) shouldWarmLocked(ct Content) bool {
	if ct.Size <= 0 {
		return false // nothing to fetch
	}
	k := blockKey{ct.ID, 0}
	if c.lru.contains(k) || c.flights[k] != nil || c.warm.queued[ct.ID] {
		return false
	}
	if !c.OneBlock(ct.Size) || len(c.warm.queue) >= warmQueueLen ||
		c.lru.warmBytes+c.warm.pendingBytes+ct.Size > c.warmBudget {
		c.warmSkips.Add(1)
		return false
	}
	return true
}

// warmWorkers is the bound on Warm's workers that cfg asks for.
func warmWorkers(cfg Config) func() int {
	if cfg.WarmConcurrency == nil {
		n := max(1, cfg.PrefetchConcurrency/2)
		return func() int { return n }
	}
	return func() int { return max(1, cfg.WarmConcurrency()) }
}

// warmWorker fills queued items one at a time until the queue is empty.
func (c *Cache) warmWorker() {
	for {
		it, ok := c.nextWarm()
		if !ok {
			return
		}
		c.warmOne(it)
	}
}

// nextWarm pops the oldest queued item; when there is none the calling
// worker is counted out.
func (c *Cache) nextWarm() (WarmItem, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.warm.queue) == 0 {
		c.warm.workers--
		c.warm.queue = nil
		return WarmItem{}, false
	}
	it := c.warm.queue[0]
	c.warm.queue[0] = WarmItem{}
	c.warm.queue = c.warm.queue[1:]
	delete(c.warm.queued, it.Content.ID)
	return it, true
}

// warmOne fills a small content's block through a File, which checks its
// length and hash exactly as a reader's fill does, unless it got cached or
// started filling meanwhile.
func (c *Cache) warmOne(it WarmItem) {
	k := blockKey{it.Content.ID, 0}
	file := c.Open(it.Content, it.Fetcher)
	defer file.Close()
	c.mu.Lock()
	if c.lru.contains(k) || c.flights[k] != nil {
		c.warm.pendingBytes -= it.Content.Size
		c.mu.Unlock()
		return
	}
	f, fill := c.newFillLocked(k, file.fillBlock(0))
	f.warmBytes = it.Content.Size
	c.warms.Add(1)
	c.mu.Unlock()
	fill()
	if f.err == nil {
		it.filled(f.data)
	}
}
