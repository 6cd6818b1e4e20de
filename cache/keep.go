package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// keepChunk bounds the contents of a chunk: Keep waits for a chunk's blocks
// to reach the disk before it counts it done, and holds at most half of
// the memory cache in chunks, so no block leaves memory before it is
// written.
const (
	keepChunk = 512
	// keepChunksAtOnce chunks are filled at once (their fills share the
	// warm workers' bound), so one chunk's wait for the disk and the tail
	// of its fills overlap the next one's requests; each is at most
	// 1/(2 × keepChunksAtOnce) of the memory cache.
	keepChunksAtOnce = 4
	keepDiskPoll     = 10 * time.Millisecond
	keepDiskWaitMx   = 2 * time.Minute
)

// ErrNoDisk: Keep needs a disk cache.
var ErrNoDisk = errors.New("cache: no disk cache")

// Keep fills every block of items not on disk into the disk cache, for
// `rsfs warm`: small contents that batch can read together (dump members)
// through WarmBatch's claims, the rest block by block; every fill is
// background work (priority.Deferrable, as a Warm's) that gives way to the
// reads users wait on, runs at most the warm workers' bound at once, and
// gets the checks a reader's fill gets (the exact length; the published
// hash, of a content of more than one block by a whole pass once its
// blocks are in). Small contents go in chunks, four at once, and Keep
// waits for each chunk's blocks to be written, so that the memory cache
// never holds more of them than half its size; a large content goes an
// eighth of it at a time. done is called once per item (from several
// goroutines), with nil when the content is whole on disk. batch may be
// nil.
func (c *Cache) Keep(ctx context.Context, items []WarmItem, batch func(ctx context.Context, which []int) [][]byte, done func(i int, fetched bool, err error)) {
	if c.disk == nil {
		for i := range items {
			done(i, false, ErrNoDisk)
		}
		return
	}
	var small, large []int
	for i, it := range items {
		switch {
		case c.OnDisk(it.Content) >= it.Content.Size:
			done(i, false, nil)
		case it.Content.Size <= int64(c.blockSize):
			small = append(small, i)
		default:
			large = append(large, i)
		}
	}
	budget := max(c.maxBytes/keepChunksAtOnce/2, int64(c.blockSize))
	sem := make(chan struct{}, max(1, c.maxWarmWorkers())) // fills at once, across the chunks
	slots := make(chan struct{}, keepChunksAtOnce)
	var wg sync.WaitGroup
	for len(small) > 0 && ctx.Err() == nil {
		n, bytes := 0, int64(0)
		for n < len(small) && n < keepChunk && bytes+items[small[n]].Content.Size <= budget {
			bytes += items[small[n]].Content.Size
			n++
		}
		chunk := small[:max(n, 1)]
		small = small[len(chunk):]
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			c.keepSmall(ctx, items, chunk, batch, done, sem)
		})
	}
	wg.Wait()
	for _, i := range large {
		err := c.keepLarge(ctx, items[i], budget)
		done(i, err == nil, err)
	}
	for _, i := range small { // ctx ended
		done(i, false, ctx.Err())
	}
}

// keepSmall fills a chunk of one-block contents: in a batch where batch
// can read them, else one by one, then waits for the disk.
func (c *Cache) keepSmall(ctx context.Context, items []WarmItem, chunk []int, batch func(context.Context, []int) [][]byte, done func(int, bool, error), sem chan struct{}) {
	if batch != nil {
		sub := make([]WarmItem, len(chunk))
		for j, i := range chunk {
			sub[j] = items[i]
		}
		claims := c.claimKeep(sub)
		c.readBatch(ctx, sub, claims, func(ctx context.Context, which []int) [][]byte {
			orig := make([]int, len(which))
			for j, w := range which {
				orig[j] = chunk[w]
			}
			return batch(ctx, orig)
		})
	}
	var wg sync.WaitGroup
	for _, i := range chunk {
		sem <- struct{}{}
		wg.Go(func() {
			k := blockKey{items[i].Content.ID, 0}
			file := c.Open(items[i].Content, items[i].Fetcher)
			err := c.keepBlock(ctx, k, file.fillBlock(0))
			file.Close()
			<-sem // the write does not hold a request's place
			if err == nil {
				c.disk.writeNow(k)
				err = c.waitOnDisk(ctx, items[i].Content) // at once, unless another write of it runs
			}
			done(i, true, err)
		})
	}
	wg.Wait()
}

// claimKeep claims, as claimBatch does, the contents not in memory nor
// being filled, whatever the warm budget (Keep bounds its own).
func (c *Cache) claimKeep(items []WarmItem) []batchClaim {
	var claims []batchClaim
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, it := range items {
		k := blockKey{it.Content.ID, 0}
		if it.Content.Size <= 0 || c.lru.contains(k) || c.flights[k] != nil {
			continue
		}
		f := newFlight(func() {})
		f.keep = true
		c.flights[k] = f
		claims = append(claims, batchClaim{i, k, f})
	}
	return claims
}

// keepBlock makes sure block k is in memory or on disk, filling it with
// fill (in the background, deferrable) unless it is cached or being
// filled; the caller writes it (diskStore.writeNow).
func (c *Cache) keepBlock(ctx context.Context, k blockKey, fill func(context.Context) ([]byte, error)) error {
	for {
		c.mu.Lock()
		if c.lru.contains(k) {
			c.mu.Unlock()
			return nil
		}
		f := c.flights[k]
		if f == nil {
			f = c.startLocked(k, fill)
			f.keep = true // finish runs after c.mu is let go
		}
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !errors.Is(f.err, errReleased) {
			return f.err
		}
	}
}

// keepLarge fills a content of several blocks, budget bytes of blocks at a
// time, waiting for each group to reach the disk, then reads it whole
// (from memory and disk) to verify its hash.
func (c *Cache) keepLarge(ctx context.Context, it WarmItem, budget int64) error {
	file := c.Open(it.Content, it.Fetcher)
	defer file.Close()
	bs := int64(c.blockSize)
	per := max(budget/bs, 1)
	sem := make(chan struct{}, max(1, c.maxWarmWorkers()))
	for first := int64(0); first <= file.lastBlock; first += per {
		last := min(first+per-1, file.lastBlock)
		errs := make([]error, last-first+1)
		var wg sync.WaitGroup
		for b := first; b <= last; b++ {
			k := blockKey{it.Content.ID, b}
			if c.disk.mayHold(k) {
				continue
			}
			sem <- struct{}{}
			wg.Go(func() {
				errs[b-first] = c.keepBlock(ctx, k, file.fillBlock(b))
				<-sem
				if errs[b-first] == nil {
					c.disk.writeNow(k)
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for b := first; b <= last; b++ {
			if err := c.waitBlockOnDisk(ctx, blockKey{it.Content.ID, b}); err != nil {
				return err
			}
		}
	}
	if file.hasDigest {
		return c.verifyPass(ctx, file)
	}
	return nil
}

// verifyPass reads file whole, which verifies its published hash.
func (c *Cache) verifyPass(ctx context.Context, file *File) error {
	bs := int64(c.blockSize)
	buf := make([]byte, bs)
	for off := int64(0); off < file.content.Size; off += bs {
		n := min(bs, file.content.Size-off)
		if _, err := file.ReadAt(ctx, buf[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}

// waitOnDisk waits until every block of ct is written to disk.
func (c *Cache) waitOnDisk(ctx context.Context, ct Content) error {
	bs := int64(c.blockSize)
	for b := int64(0); b*bs < ct.Size; b++ {
		if err := c.waitBlockOnDisk(ctx, blockKey{ct.ID, b}); err != nil {
			return err
		}
	}
	return nil
}

// waitBlockOnDisk waits until block k's file is written; a block that left
// memory before its turn (its write dropped) is not waited for long.
func (c *Cache) waitBlockOnDisk(ctx context.Context, k blockKey) error {
	dk := c.disk.key(k)
	deadline := time.Now().Add(keepDiskWaitMx)
	for {
		c.disk.mu.Lock()
		written, pending := c.disk.index.knows(dk), c.disk.pending[dk] != nil
		c.disk.mu.Unlock()
		if written {
			return nil
		}
		if !pending {
			c.mu.Lock()
			inMemory := c.lru.contains(k)
			c.mu.Unlock()
			if !inMemory {
				return fmt.Errorf("cache: %s block %d left memory before it was written to disk", k.id, k.block)
			}
			c.disk.writeNow(k)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cache: %s block %d not written to disk within %s", k.id, k.block, keepDiskWaitMx)
		}
		t := time.NewTimer(keepDiskPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}
