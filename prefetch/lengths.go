package prefetch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"rsfs/catalog"
	"rsfs/priority"
)

// A resource whose list gave no length is in the tree from the start, with
// no request made for it: its length is learned when a process looks it up
// by name (a stat, an open: package fs calls Known), by Config.Length (a
// HEAD through the Source's per-origin limits), and recorded in the catalog
// (catalog.SetLength). A length that cannot be learned now fails that
// lookup and nothing else: the file stays in the tree, and the next lookup
// tries again.
//
// Once the mount serves, LearnLengths learns the others in the background,
// in the order a tree walk (ls -lR, grep -r, rsync) reaches them, a few at
// a time, as requests that give way to any a reader waits on (package
// priority), until a lookup joins one.

// errNoLength is a lookup of a file whose length could not be learned.
var errNoLength = errors.New("its length is not published and could not be learned")

// learning coalesces the lookups of one file whose length is being learned.
type learning struct {
	mu sync.Mutex
	m  map[catalog.NodeID]*learnCall
}

type learnCall struct {
	done   chan struct{}
	joined atomic.Int32 // lookups waiting on it
	a      catalog.Attr
	err    error
}

// Known returns a, file id's attributes, with its length learned if a has
// none: one request per file however many lookups wait on it.
func (p *Prefetcher) Known(ctx context.Context, id catalog.NodeID, a catalog.Attr) (catalog.Attr, error) {
	return p.knownAs(ctx, id, a, false)
}

// knownAs is Known; background marks a request of LearnLengths, deferrable
// until a lookup waits on it.
//
// A lookup's request outlives the lookup: it runs on the Prefetcher's own
// context (ended only by Close), and the lookup waits for it or for its
// own end. The kernel interrupts a lookup whose process takes a signal
// (the Go runtime sends them all day) and the process restarts the
// stat; the restarted lookup finds the request still in flight and joins
// it, so the Source is asked once, not once per interruption.
func (p *Prefetcher) knownAs(ctx context.Context, id catalog.NodeID, a catalog.Attr, background bool) (catalog.Attr, error) {
	if a.Dir || !a.NoSize {
		return a, nil
	}
	if p.cfg.Length == nil {
		return a, nil // nothing can learn it: the file shows 0 bytes
	}
	l := &p.learning
	l.mu.Lock()
	c := l.m[id]
	if c == nil {
		// a may have been read before a lookup that has ended learned the
		// length: the catalog has it then (a learner records it before it
		// leaves l.m), and no request is needed.
		if now, ok := p.cfg.Catalog.Attr(id); ok && !now.NoSize {
			l.mu.Unlock()
			return now, nil
		}
		if l.m == nil {
			l.m = map[catalog.NodeID]*learnCall{}
		}
		c = &learnCall{done: make(chan struct{})}
		l.m[id] = c
		l.mu.Unlock()
		if background {
			p.learnFor(priority.Deferrable(ctx, func() bool { return c.joined.Load() > 0 }), c, id, a)
			return c.a, c.err
		}
		lctx, stop := p.opContext(context.WithoutCancel(ctx))
		go func() {
			defer stop()
			p.learnFor(lctx, c, id, a)
		}()
		return p.await(ctx, c, id, a)
	}
	l.mu.Unlock()
	if background {
		return a, nil // a lookup asks for it already
	}
	c.joined.Add(1)
	return p.await(ctx, c, id, a)
}

// learnFor learns file id's length for call c, then ends c: the length is
// in the catalog before c leaves the map.
func (p *Prefetcher) learnFor(ctx context.Context, c *learnCall, id catalog.NodeID, a catalog.Attr) {
	c.a, c.err = p.learn(ctx, id, a)
	l := &p.learning
	l.mu.Lock()
	delete(l.m, id)
	l.mu.Unlock()
	close(c.done)
}

// await waits for call c, or for ctx to end. A call that ended because its
// own context did (LearnLengths', which a lookup joined) is tried once more
// for this lookup.
func (p *Prefetcher) await(ctx context.Context, c *learnCall, id catalog.NodeID, a catalog.Attr) (catalog.Attr, error) {
	select {
	case <-c.done:
		if c.err != nil && ctx.Err() == nil && (errors.Is(c.err, context.Canceled) || errors.Is(c.err, context.DeadlineExceeded)) {
			return p.Known(ctx, id, a)
		}
		return c.a, c.err
	case <-ctx.Done():
		return a, ctx.Err()
	}
}

// learn asks the Source for file id's length and records it.
func (p *Prefetcher) learn(ctx context.Context, id catalog.NodeID, a catalog.Attr) (catalog.Attr, error) {
	res, ok := p.cfg.Catalog.Resource(id)
	if !ok {
		return a, fmt.Errorf("%w: the file is gone", errNoLength)
	}
	n, err := p.cfg.Length(ctx, res)
	if err == nil && n < 0 {
		err = errors.New("the Source gave no length either")
	}
	if err != nil {
		return a, fmt.Errorf("%w: %w", errNoLength, err)
	}
	if now, ok := p.cfg.Catalog.SetLength(id, a.Gen, n); ok {
		p.lengthsLearned.Add(1)
		return now, nil
	}
	// The follower moved the file on meanwhile: its version now is what
	// the lookup answers (learned again if it has no length either).
	now, ok := p.cfg.Catalog.Attr(id)
	if !ok {
		return a, fmt.Errorf("%w: the file is gone", errNoLength)
	}
	if now.NoSize && now.Gen == a.Gen {
		return a, fmt.Errorf("%w: the catalog did not take it", errNoLength)
	}
	if now.NoSize {
		return p.learn(ctx, id, now)
	}
	return now, nil
}

// LengthsLearned is how many lengths lookups have learned since the mount.
func (p *Prefetcher) LengthsLearned() int64 { return p.lengthsLearned.Load() }

// LearnLengths learns the lengths of the files that have none, parallel at
// a time, in the tree's depth-first order (each directory's files in name
// order, then its subdirectories), and returns how many it learned and how
// many failed (a later lookup asks for those again), once all are tried
// or ctx ends.
func (p *Prefetcher) LearnLengths(ctx context.Context, parallel int) (learned, failed int64) {
	if p.cfg.Length == nil {
		return 0, 0
	}
	ctx, stop := p.opContext(ctx)
	defer stop()
	ids := make(chan catalog.NodeID)
	var wg sync.WaitGroup
	var ok, bad atomic.Int64
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				a, found := p.cfg.Catalog.Attr(id)
				if !found || !a.NoSize {
					continue
				}
				if now, err := p.knownAs(ctx, id, a, true); err != nil {
					bad.Add(1)
				} else if !now.NoSize {
					ok.Add(1)
				}
			}
		}()
	}
	p.walkUnsized(ctx, catalog.RootID, ids)
	close(ids)
	wg.Wait()
	return ok.Load(), bad.Load()
}

// walkUnsized sends the files of dir and below that have no length, in
// the tree's depth-first order, until ctx ends. A directory is read in the
// catalog's batches, so a million files in one cost no copy of its
// listing.
func (p *Prefetcher) walkUnsized(ctx context.Context, dir catalog.NodeID, ids chan<- catalog.NodeID) {
	var subdirs []catalog.NodeID
	p.cfg.Catalog.ReadDir(dir, func(_ string, id catalog.NodeID, a catalog.Attr) bool {
		switch {
		case a.Dir:
			subdirs = append(subdirs, id)
		case a.NoSize:
			select {
			case ids <- id:
			case <-ctx.Done():
				return false
			}
		}
		return true
	})
	for _, d := range subdirs {
		if ctx.Err() != nil {
			return
		}
		p.walkUnsized(ctx, d, ids)
	}
}
