package cache

import (
	"context"
	"crypto/sha256"
	"errors"
)

// wholeFlight is one whole-content verification in progress, shared by
// every File of the content id.
type wholeFlight struct {
	done chan struct{}
	err  error
}

// verifiesWhole reports whether the File's content is verified whole
// before its first byte is served: it has a published hash, more than one
// block, and at most VerifyWholeBelow bytes. (A one-block content is
// always verified before it is served, by its fill.)
func (f *File) verifiesWhole() bool {
	return f.hasDigest && f.lastBlock > 0 && f.content.Size <= f.c.verifyWholeBelow
}

// verifyWhole waits until the content has been verified whole, starting
// the verification unless one is running for the same id. It returns nil
// when the version is verified, an ErrIntegrity when no copy matches, or
// the error that stopped the verification (a failed fetch: no verdict).
func (f *File) verifyWhole(ctx context.Context) error {
	if f.c.vers.verified(f.content.ID) {
		return nil
	}
	w := f.c.startWhole(f, nil)
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startWhole returns the verification of f's content in progress, or
// starts one with f's fetcher. A non-nil failed is the mismatch the copy
// that served last met: the fetcher moves to its next copy first.
func (c *Cache) startWhole(f *File, failed error) *wholeFlight {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.wholes[f.content.ID]; w != nil {
		return w
	}
	w := &wholeFlight{done: make(chan struct{})}
	c.wholes[f.content.ID] = w
	go func() {
		w.err = f.runWhole(failed)
		c.mu.Lock()
		delete(c.wholes, f.content.ID)
		c.mu.Unlock()
		close(w.done)
	}()
	return w
}

// runWhole verifies the content from each copy in turn until one matches
// its published hash (the version is then good) or none is left (it is
// bad). It runs on a context of its own: a reader that goes away does not
// waste the work of the others.
func (f *File) runWhole(failed error) error {
	ctx := context.Background()
	for mismatch := failed; ; {
		if mismatch != nil {
			if err := f.nextCopy(mismatch); err != nil {
				return err
			}
		}
		sums, err := f.hashWhole(ctx)
		if err == nil {
			f.c.vers.markGood(f.content.ID, sums)
			return nil
		}
		if !errors.Is(err, ErrIntegrity) {
			return err
		}
		f.logMismatch(err)
		mismatch = err
	}
}

// nextCopy moves the fetcher past a copy whose bytes mismatched, or marks
// the version bad when no copy is left. The content's blocks are dropped
// after the move: a fill that was registered before it may still have read
// the old copy (its flight is detached, so it is not stored), and every
// fill registered after it reads the next copy.
func (f *File) nextCopy(mismatch error) error {
	moved := f.skipCopy()
	f.c.DropContent(f.content.ID)
	if !moved {
		f.c.vers.markBad(f.content.ID, mismatch)
		return f.c.vers.badErr(f.content.ID)
	}
	f.c.log.Warn("content failed verification; trying the next copy", "uri", f.content.Name, "err", mismatch)
	return nil
}

// skipCopy moves the fetcher to its next copy, if it has one.
func (f *File) skipCopy() bool {
	alt, ok := f.fetcher.(Alternates)
	return ok && alt.SkipCopy()
}

// hashWhole reads every block (through the cache, a few at once) and
// compares the whole content with its published hash. It returns the
// sha-256 of each block.
func (f *File) hashWhole(ctx context.Context) ([][sha256.Size]byte, error) {
	h := f.digest.new()
	sums := make([][sha256.Size]byte, f.lastBlock+1)
	step := int64(1) // the first fill shows whether the fetcher honours Range
	for first := int64(0); first <= f.lastBlock; first += step {
		if first > 0 && !f.rangeIgnored.Load() {
			step = int64(max(2, f.c.readAhead+1))
		}
		last := min(first+step-1, f.lastBlock)
		blocks, err := f.getBlocks(ctx, first, last)
		if err != nil {
			return nil, err
		}
		for i, data := range blocks {
			h.Write(data)
			sums[first+int64(i)] = sha256.Sum256(data)
			countHashed(&f.c.hashed, 2*len(data)) // the published hash, and the block's sum
		}
	}
	return sums, f.digest.check(f.content.Name, h.Sum(nil))
}
