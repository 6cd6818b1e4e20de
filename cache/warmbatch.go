package cache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"rsfs/priority"
)

// warmBatchDiskReaders is how many block files one WarmBatch reads at once.
const warmBatchDiskReaders = 8

// WarmBatch warms small contents (as Warm does) that read can fetch
// together, e.g. dump members read as runs of one package. It asks the
// cache first: contents in memory, being filled or queued are skipped, and
// those in the disk cache are read from it. The rest are claimed, so a
// reader that asks for one meanwhile waits for the batch instead of
// fetching it again, and read is called once with their indexes into
// items; it returns their bytes in that order, nil where it could not.
// Every content read gets the checks a fill makes (the exact length, then
// the published hash) before it is stored or handed to a waiting reader;
// those that fail or that read did not give are released (waiting readers
// fetch them with ordinary fills) and warmed one by one with Warm. The
// same limits as Warm apply: one block at most, within the warm budget.
// WarmBatch returns once every claim is settled.
func (c *Cache) WarmBatch(ctx context.Context, items []WarmItem, read func(ctx context.Context, which []int) [][]byte) {
	c.ClaimBatch(items)(ctx, read)
}

// ClaimBatch is WarmBatch in two steps: it claims the contents at once, so
// a reader that opens one right after waits for the batch, and returns the
// function that reads them (WarmBatch's read), to be run in the
// background. The function must be called, once.
func (c *Cache) ClaimBatch(items []WarmItem) func(ctx context.Context, read func(ctx context.Context, which []int) [][]byte) {
	claims := c.claimBatch(items)
	return func(ctx context.Context, read func(ctx context.Context, which []int) [][]byte) {
		c.readBatch(ctx, items, claims, read)
	}
}

// batchClaim is one content a batch claimed: its index in the items, its
// block and the flight readers wait on.
type batchClaim struct {
	i int
	k blockKey
	f *flight
}

// claimBatch claims the items that should be warmed.
func (c *Cache) claimBatch(items []WarmItem) []batchClaim {
	var claims []batchClaim
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, it := range items {
		if !c.shouldWarmLocked(it.Content) {
			continue
		}
		k := blockKey{it.Content.ID, 0}
		f := newFlight(func() {})
		f.warmBytes = it.Content.Size
		c.flights[k] = f
		c.warm.pendingBytes += it.Content.Size
		c.warms.Add(1)
		claims = append(claims, batchClaim{i, k, f})
	}
	return claims
}

// readBatch settles a batch's claims: from the disk cache, then read.
func (c *Cache) readBatch(ctx context.Context, items []WarmItem, claims []batchClaim, read func(ctx context.Context, which []int) [][]byte) {
	if len(claims) == 0 {
		return
	}
	// The disk cache first: a remount reads nothing from the network that
	// it holds.
	fetch := claims
	if c.disk != nil {
		onDisk := make([]bool, len(claims))
		var wg sync.WaitGroup
		next := atomic.Int64{}
		for range min(warmBatchDiskReaders, len(claims)) {
			wg.Go(func() {
				for j := int(next.Add(1) - 1); j < len(claims); j = int(next.Add(1) - 1) {
					cl := claims[j]
					if data, ok := c.disk.read(cl.k); ok && int64(len(data)) == items[cl.i].Content.Size {
						cl.f.fromDisk = true
						c.finish(cl.k, cl.f, data, nil)
						onDisk[j] = true
						items[cl.i].filled(data)
					}
				}
			})
		}
		wg.Wait()
		fetch = nil
		for j, cl := range claims {
			if !onDisk[j] {
				fetch = append(fetch, cl)
			}
		}
	}
	if len(fetch) == 0 {
		return
	}
	which := make([]int, len(fetch))
	for j, cl := range fetch {
		which[j] = cl.i
	}
	if c.fillTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.fillTimeout)
		defer cancel()
	}
	// Background work, until a reader waits for one of the contents.
	ctx = priority.Deferrable(ctx, func() bool {
		for _, cl := range fetch {
			if cl.f.waited.Load() {
				return true
			}
		}
		return false
	})
	c.fills.Add(uint64(len(fetch)))
	datas := read(ctx, which)
	var rest []WarmItem
	for j, cl := range fetch {
		var data []byte
		if j < len(datas) {
			data = datas[j]
		}
		if data == nil || c.checkSmall(items[cl.i].Content, data) != nil {
			c.finish(cl.k, cl.f, nil, errReleased)
			rest = append(rest, items[cl.i])
			continue
		}
		c.finish(cl.k, cl.f, data, nil)
		items[cl.i].filled(data)
	}
	if len(rest) > 0 {
		c.Warm(rest)
	}
}

// checkSmall makes a fill's checks of a whole content of one block read
// some other way: the exact length, then the published hash.
func (c *Cache) checkSmall(content Content, data []byte) error {
	if content.Size > int64(c.blockSize) {
		return fmt.Errorf("cache: %s: %d bytes is more than one block", content.Name, content.Size)
	}
	if int64(len(data)) != content.Size {
		return fmt.Errorf("%w: %s: %d bytes, published length %d", ErrIntegrity, content.Name, len(data), content.Size)
	}
	if d, ok := strongestDigest(content.Hashes); ok {
		countHashed(&c.hashed, len(data))
		if err := d.checkData(content.Name, data); err != nil {
			return err
		}
	}
	return nil
}
