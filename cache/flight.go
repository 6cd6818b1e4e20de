package cache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"rsfs/priority"
)

// errReleased completes a flight whose filler gave up without a result
// (an abandoned prefetch, a stream that stopped early): demanding waiters
// retry with a fill of their own.
var errReleased = errors.New("cache: fill released")

// flight is one fill in progress; waiters block on done.
type flight struct {
	done   chan struct{}
	data   []byte
	err    error
	cancel context.CancelFunc
	// demanded is set when a Get (not only a prefetch) waits: the fill is
	// then never cancelled by a prefetcher going away.
	demanded bool
	// waited mirrors demanded for the HTTP client's pacer, which asks
	// without c.mu whether someone waits for this fill (priority).
	waited atomic.Bool
	// detached is set when the flight left the flights map early
	// (DropContent, abandonment): its result is not stored.
	detached bool
	// fromDisk is set when the block came from the disk cache (it is not
	// written back).
	fromDisk bool
	// warmBytes is the size a Warm counted for this fill (0 for others).
	warmBytes int64
	// keep: a Keep (rsfs warm) fills it and writes it to disk itself, on
	// its own goroutine, not through the disk writer's queue.
	keep bool
}

func newFlight(cancel context.CancelFunc) *flight {
	return &flight{done: make(chan struct{}), cancel: cancel}
}

func (c *Cache) get(ctx context.Context, k blockKey, fill func(context.Context) ([]byte, error)) ([]byte, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cache: block %d of %s: %w", k.block, k.id, err)
		}
		f, data, hit := c.lookupOrStart(k, fill)
		if hit {
			return data, nil
		}
		select {
		case <-f.done:
			if errors.Is(f.err, errReleased) {
				continue
			}
			return f.data, f.err
		case <-ctx.Done():
			return nil, fmt.Errorf("cache: waiting for block %d of %s: %w", k.block, k.id, ctx.Err())
		}
	}
}

// lookupOrStart returns a cached block, or the flight filling it (started
// here if none is).
func (c *Cache) lookupOrStart(k blockKey, fill func(context.Context) ([]byte, error)) (*flight, []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if data, ok := c.lru.get(k); ok {
		c.hits.Add(1)
		return nil, data, true
	}
	c.misses.Add(1)
	f := c.flights[k]
	if f == nil {
		f = c.startLocked(k, fill)
	}
	f.demand()
	return f, nil, false
}

// startLocked registers a flight for k and runs fill in its own goroutine on
// a detached context bounded by the fill timeout, if there is one. c.mu
// must be held.
func (c *Cache) startLocked(k blockKey, fill func(context.Context) ([]byte, error)) *flight {
	f, run := c.newFillLocked(k, fill)
	go run()
	return f
}

// newFillLocked registers a flight for k, and returns it and the function
// that fills it (on a detached context bounded by the fill timeout, if
// there is one) and finishes it, to be called once, without c.mu. c.mu
// must be held. A warm worker calls it itself: its goroutine's stack has
// grown to what a fill needs, where a new goroutine's grows again each
// time (about 5 % of a first pass's CPU).
func (c *Cache) newFillLocked(k blockKey, fill func(context.Context) ([]byte, error)) (*flight, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	if c.fillTimeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), c.fillTimeout)
	}
	f := newFlight(cancel)
	c.flights[k] = f
	// Until a reader waits for it, the fill is background work: it gives
	// way to reads at an origin that paces its requests.
	ctx = priority.Deferrable(ctx, f.waited.Load)
	return f, func() {
		defer cancel()
		data, err := c.load(ctx, k, f, fill)
		c.finish(k, f, data, err)
	}
}

// load reads block k from the disk cache, or else fills it.
func (c *Cache) load(ctx context.Context, k blockKey, f *flight, fill func(context.Context) ([]byte, error)) ([]byte, error) {
	if c.disk != nil {
		if data, ok := c.disk.read(k); ok {
			f.fromDisk = true
			return data, nil
		}
	}
	c.fills.Add(1)
	return fill(ctx)
}

// claimLocked registers a flight for k that the caller completes with
// finish, unless k is already cached or being filled (then it returns nil).
// c.mu must be held.
func (c *Cache) claimLocked(k blockKey) *flight {
	if c.lru.contains(k) || c.flights[k] != nil {
		return nil
	}
	f := newFlight(func() {})
	f.demand()
	c.flights[k] = f
	return f
}

// demand marks f as waited for by a reader. c.mu must be held.
func (f *flight) demand() {
	f.demanded = true
	f.waited.Store(true)
}

// finish completes a flight: it stores a successful result (unless the
// flight was detached), queues a fetched one for the disk cache, and wakes
// the waiters.
func (c *Cache) finish(k blockKey, f *flight, data []byte, err error) {
	c.mu.Lock()
	if c.flights[k] == f {
		delete(c.flights, k)
	}
	store := err == nil && !f.detached
	if store && c.lru.add(k, data) && f.warmBytes > 0 && !f.demanded {
		c.lru.markWarm(k)
	}
	c.warm.pendingBytes -= f.warmBytes
	c.mu.Unlock()
	if store && !f.fromDisk && !f.keep {
		c.writeToDisk(k)
	}
	if err != nil && !errors.Is(err, errReleased) {
		c.fillErrors.Add(1)
	}
	f.data, f.err = data, err
	close(f.done)
}

// prefetch fills k in the background unless it is cached or being filled,
// holding one of the Cache's prefetch slots while the fill runs. When ctx
// ends first, a fill that no Get waits on is cancelled.
func (c *Cache) prefetch(ctx context.Context, k blockKey, fill func(context.Context) ([]byte, error)) {
	select {
	case c.prefetchSlots <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-c.prefetchSlots }()
	c.mu.Lock()
	if c.lru.contains(k) || c.flights[k] != nil {
		c.mu.Unlock()
		return
	}
	f := c.startLocked(k, fill)
	c.prefetches.Add(1)
	c.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		c.abandon(k, f)
	}
}

// abandon cancels a prefetch fill that no Get waits on.
func (c *Cache) abandon(k blockKey, f *flight) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.demanded || f.detached {
		return
	}
	f.detached = true
	if c.flights[k] == f {
		delete(c.flights, k)
	}
	f.cancel()
}
