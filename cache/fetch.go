package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// fillBlock returns the fill for block b of the file's content.
func (f *File) fillBlock(b int64) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) { return f.fetchBlock(ctx, b) }
}

// Alternates is a Fetcher that has more than one copy of a content (a
// mirror, a dump member). When the bytes of the copy that answered fail
// verification, SkipCopy moves to the next copy and reports whether there
// is one; the block is then fetched again from it (docs/DESIGN.md §4 rule 4).
type Alternates interface {
	SkipCopy() bool
}

// fetchBlock reads block b from the fetcher and checks it; bytes that fail
// the check are fetched again from the fetcher's next copy, if it has one.
func (f *File) fetchBlock(ctx context.Context, b int64) ([]byte, error) {
	for {
		data, err := f.fetchBlockOnce(ctx, b)
		if err == nil || !errors.Is(err, ErrIntegrity) {
			return data, err
		}
		if !f.skipCopy() {
			var m *hashMismatch
			if errors.As(err, &m) {
				// A one-block content no copy of which matches: bad.
				f.c.vers.markBad(f.content.ID, err)
			}
			return data, err
		}
		f.c.log.Warn("integrity check failed; trying the next copy", "uri", f.content.Name, "block", b, "err", err)
	}
}

// fetchBlockOnce reads block b from the fetcher and checks its length (and,
// for a single-block content, its hash). When the fetcher's stream continues
// past the block, the rest is handed to continueStream.
func (f *File) fetchBlockOnce(ctx context.Context, b int64) ([]byte, error) {
	off, n := f.blockRange(b)
	// The stream gets its own context so that it can outlive this fill when
	// it continues past the block; until then it follows ctx.
	sctx, scancel := context.WithCancel(context.WithoutCancel(ctx))
	unfollow := context.AfterFunc(ctx, scancel)
	rc, toEnd, err := f.fetcher.OpenRange(sctx, off, n)
	if err != nil {
		unfollow()
		scancel()
		return nil, fmt.Errorf("cache: open %s bytes [%d,%d): %w", f.content.Name, off, off+n, err)
	}
	if toEnd {
		f.rangeIgnored.Store(true)
	}
	data, err := f.readBlockFrom(rc, b, !toEnd || b == f.lastBlock, true)
	if err == nil && f.lastBlock == 0 {
		err = f.checkSmall(data)
	} else if errors.Is(err, ErrIntegrity) {
		f.c.verifyFailures.Add(err.Error())
		f.c.log.Error("content length mismatch", "uri", f.content.Name, "block", b, "err", err)
	}
	if err != nil || !toEnd || b == f.lastBlock || !unfollow() {
		unfollow()
		rc.Close()
		scancel()
		return data, err
	}
	claims := f.claimFollowing(b)
	if len(claims) == 0 {
		rc.Close()
		scancel()
		return data, nil
	}
	go f.continueStream(rc, scancel, b+1, claims)
	return data, nil
}

// readBlockFrom reads exactly the bytes of block b from r; when atEnd, the
// stream must end there. A block of a verified version is checked; with
// chained, also against the version's chain (chain.go): a fill of one
// block checks it before it is stored, while a stream's blocks are checked
// beside its reader's reads (checkChained), so that the hash does not slow
// the transfer.
func (f *File) readBlockFrom(r io.Reader, b int64, atEnd, chained bool) ([]byte, error) {
	off, n := f.blockRange(b)
	data := make([]byte, n)
	got, err := io.ReadFull(r, data)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("%w: %s: short body for bytes [%d,%d): got %d of %d bytes (published length %d)",
			ErrIntegrity, f.content.Name, off, off+n, got, n, f.content.Size)
	}
	if err != nil {
		return nil, fmt.Errorf("cache: read %s bytes [%d,%d): %w", f.content.Name, off, off+n, err)
	}
	if atEnd {
		if err := f.expectEnd(r, off+n); err != nil {
			return nil, err
		}
	}
	if err := f.c.vers.checkBlock(f.content.Name, f.content.ID, b, data, chained); err != nil {
		f.c.log.Error("block differs from the verified version", "uri", f.content.Name, "block", b)
		return nil, err
	}
	return data, nil
}

// expectEnd checks that r has no bytes left after offset end.
func (f *File) expectEnd(r io.Reader, end int64) error {
	var one [1]byte
	n, err := io.ReadFull(r, one[:])
	if n > 0 {
		what := "range"
		if end == f.content.Size {
			what = fmt.Sprintf("content (published length %d)", f.content.Size)
		}
		return fmt.Errorf("%w: %s: body longer than the requested %s: more bytes after offset %d",
			ErrIntegrity, f.content.Name, what, end)
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("cache: read %s after offset %d: %w", f.content.Name, end, err)
}

// checkSmall verifies the hash of a content held in one block.
func (f *File) checkSmall(data []byte) error {
	if !f.hasDigest {
		return nil
	}
	countHashed(&f.c.hashed, len(data))
	err := f.digest.checkData(f.content.Name, data)
	if err != nil {
		f.logMismatch(err)
	}
	return err
}

// claimFollowing registers flights for the blocks after b that a continuing
// stream will deliver: up to the end of the content, within half the cache.
// Blocks already cached or being filled get a nil claim (read past).
func (f *File) claimFollowing(b int64) []*flight {
	limit := b + (f.c.maxBytes/2)/int64(f.c.blockSize)
	limit = min(limit, f.lastBlock)
	if limit <= b {
		return nil
	}
	claims := make([]*flight, 0, limit-b)
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	for i := b + 1; i <= limit; i++ {
		claims = append(claims, f.c.claimLocked(blockKey{f.content.ID, i}))
	}
	return claims
}

// continueStream reads blocks first, first+1, ... from a stream that
// continues past its fill and completes their claims; unclaimed blocks are
// read past. Each block must arrive within the fill timeout, if one is set. On failure the
// failing block gets the error (when it is an integrity error) and the rest
// are released so that their waiters fetch them themselves.
func (f *File) continueStream(rc io.ReadCloser, cancel context.CancelFunc, first int64, claims []*flight) {
	var watchdog *time.Timer
	if f.c.fillTimeout > 0 {
		watchdog = time.AfterFunc(f.c.fillTimeout, cancel)
	}
	defer func() {
		if watchdog != nil {
			watchdog.Stop()
		}
		rc.Close()
		cancel()
	}()
	for i, claim := range claims {
		b := first + int64(i)
		if watchdog != nil {
			watchdog.Reset(f.c.fillTimeout)
		}
		data, err := f.readBlockFrom(rc, b, b == f.lastBlock, false)
		if err != nil {
			f.releaseClaims(b, claims[i:], err)
			return
		}
		if claim != nil {
			f.c.finish(blockKey{f.content.ID, b}, claim, data, nil)
			f.c.streamed.Add(1)
		}
	}
}

// releaseClaims fails the first claim with err when it is an integrity
// error, and releases the others.
func (f *File) releaseClaims(first int64, claims []*flight, err error) {
	for i, claim := range claims {
		if claim == nil {
			continue
		}
		k := blockKey{f.content.ID, first + int64(i)}
		if i == 0 && errors.Is(err, ErrIntegrity) {
			f.c.finish(k, claim, nil, err)
			continue
		}
		f.c.finish(k, claim, nil, fmt.Errorf("%w: stream stopped: %v", errReleased, err))
	}
}
