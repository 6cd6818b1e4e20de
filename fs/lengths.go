package fs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"rsfs/catalog"
)

// A resource whose list gave no length is in the tree from the start, with
// no request made for it: its length is learned when a process looks it up
// by name (a stat, an open), by Config.Length (a HEAD through the Source's
// per-origin limits), and recorded in the catalog (catalog.SetLength).
// Until then the kernel is given no inode for it: a listing answers its
// name alone (readDir), so every inode the kernel holds has its true size,
// and reads, clipped by the kernel at that size, read the file to its end.
// A length that cannot be learned now fails that lookup (EIO) and nothing
// else: the file stays in the tree, and the next lookup tries again.

// errNoLength is a lookup of a file whose length could not be learned.
var errNoLength = errors.New("its length is not published and could not be learned")

// learning coalesces the lookups of one file whose length is being learned.
type learning struct {
	mu sync.Mutex
	m  map[catalog.NodeID]*learnCall
}

type learnCall struct {
	done   chan struct{}
	joined int // lookups waiting on it; under learning.mu
	a      catalog.Attr
	err    error
}

// known returns a, file id's attributes, with its length learned if a has
// none: one request per file however many lookups wait on it.
func (f *FS) known(ctx context.Context, id catalog.NodeID, a catalog.Attr) (catalog.Attr, error) {
	if a.Dir || !a.NoSize {
		return a, nil
	}
	if f.cfg.Length == nil {
		return a, nil // nothing can learn it: the file shows 0 bytes
	}
	l := &f.learning
	l.mu.Lock()
	c := l.m[id]
	if c == nil {
		if l.m == nil {
			l.m = map[catalog.NodeID]*learnCall{}
		}
		c = &learnCall{done: make(chan struct{})}
		l.m[id] = c
		l.mu.Unlock()
		c.a, c.err = f.learn(ctx, id, a)
		l.mu.Lock()
		delete(l.m, id)
		l.mu.Unlock()
		close(c.done)
		return c.a, c.err
	}
	c.joined++
	l.mu.Unlock()
	select {
	case <-c.done:
		if c.err != nil && ctx.Err() == nil {
			return f.known(ctx, id, a) // the first caller was interrupted, perhaps: try once more for this one
		}
		return c.a, c.err
	case <-ctx.Done():
		return a, ctx.Err()
	}
}

// learn asks the Source for file id's length and records it.
func (f *FS) learn(ctx context.Context, id catalog.NodeID, a catalog.Attr) (catalog.Attr, error) {
	res, ok := f.cfg.Catalog.Resource(id)
	if !ok {
		return a, fmt.Errorf("%w: the file is gone", errNoLength)
	}
	n, err := f.cfg.Length(ctx, res)
	if err == nil && n < 0 {
		err = errors.New("the Source gave no length either")
	}
	if err != nil {
		return a, fmt.Errorf("%w: %w", errNoLength, err)
	}
	if now, ok := f.cfg.Catalog.SetLength(id, a.Gen, n); ok {
		f.lengthsLearned.Add(1)
		return now, nil
	}
	// The follower moved the file on meanwhile: its version now is what
	// the lookup answers (learned again if it has no length either).
	now, ok := f.cfg.Catalog.Attr(id)
	if !ok {
		return a, fmt.Errorf("%w: the file is gone", errNoLength)
	}
	if now.NoSize && now.Gen == a.Gen {
		return a, fmt.Errorf("%w: the catalog did not take it", errNoLength)
	}
	if now.NoSize {
		return f.learn(ctx, id, now)
	}
	return now, nil
}

// LengthsLearned is how many lengths lookups have learned since the mount.
func (f *FS) LengthsLearned() int64 { return f.lengthsLearned.Load() }

// uriOf is file id's URI, "" if it is gone.
func (f *FS) uriOf(id catalog.NodeID) string {
	if r, ok := f.cfg.Catalog.Resource(id); ok {
		return r.URI
	}
	return ""
}
