package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// streamIdle ends a stream whose reader has not asked for more within it:
// the connection is not held open for a reader that went quiet.
const streamIdle = 30 * time.Second

// blockStream serves a sequential reader's misses from one request: a range
// from its first block to the end of the content, read block by block into
// the cache a bounded distance ahead of the reader. It claims blocks (shared
// in-flight fills) only as the reader's position allows, stops claiming at
// the first block cached or filled by someone else (a later read starts
// another stream after it), and ends when the File closes, the reader seeks
// away, the reader goes quiet, or the content ends. Every block is checked
// as a fill checks it (readBlockFrom); a block that fails a check is
// released, so its waiters fetch it themselves through the ordinary fill
// (which tries the next copy on an integrity error).
type blockStream struct {
	f      *File
	first  int64
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{} // signalled when claims are added

	mu      sync.Mutex
	next    int64     // block of claims[0]
	claims  []*flight // claimed blocks next, next+1, ..., not read yet
	claimed int64     // highest block claimed
	capped  bool      // met a block cached or being filled: claims no further
	done    bool
}

// streamAhead is how many blocks a stream reads ahead of its reader: enough
// to keep the transfer busy, never more than a quarter of the cache.
func (c *Cache) streamAhead() int64 {
	ahead := max(4*int64(c.readAhead), 16)
	return max(1, min(ahead, c.maxBytes/4/int64(c.blockSize)))
}

// streamFor makes sure a stream serves the reader's blocks from..to (those
// of its read and up to streamAhead after it). It reports false when the
// per-block prefetch should serve them instead: the next missing block is
// in the disk cache. f.mu must be held.
func (f *File) streamFor(from, to int64) bool {
	if s := f.stream; s != nil {
		if s.extend(to) {
			return true
		}
		f.stream = nil // ended: capped, failed, idle or at the end
	}
	first := from
	for first <= to && f.c.cachedOrFilling(blockKey{f.content.ID, first}) {
		first++
	}
	if first > to {
		return true // nothing missing ahead of the reader
	}
	if f.c.onDisk(blockKey{f.content.ID, first}) {
		return false
	}
	s := f.newStream(first)
	if !s.extend(to) || len(s.claims) == 0 {
		s.cancel()
		return true
	}
	f.stream = s
	f.wg.Go(s.run)
	return true
}

// stopStream ends the File's stream, if any; its unread claims are released.
// f.mu must be held.
func (f *File) stopStream() {
	if f.stream != nil {
		f.stream.cancel()
		f.stream = nil
	}
}

func (f *File) newStream(first int64) *blockStream {
	ctx, cancel := context.WithCancel(f.ctx)
	return &blockStream{f: f, first: first, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		next: first, claimed: first - 1}
}

// extend claims the blocks up to `to` that nobody has, stopping at the first
// that is cached or being filled. It reports false once the stream has ended.
func (s *blockStream) extend(to int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	if s.capped || to <= s.claimed {
		return true
	}
	c, id := s.f.c, s.f.content.ID
	c.mu.Lock()
	for b := s.claimed + 1; b <= to; b++ {
		fl := c.claimLocked(blockKey{id, b})
		if fl == nil {
			s.capped = true
			break
		}
		s.claims = append(s.claims, fl)
		s.claimed = b
	}
	c.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// run opens the range and fills the claimed blocks in order until the
// stream ends; whatever is still claimed then is released.
func (s *blockStream) run() {
	defer s.end()
	f := s.f
	off := s.first * int64(f.c.blockSize)
	rc, toEnd, err := f.fetcher.OpenRange(s.ctx, off, f.content.Size-off)
	if err != nil {
		s.logStop(fmt.Errorf("open %s from byte %d: %w", f.content.Name, off, err))
		return
	}
	defer rc.Close()
	if toEnd {
		f.rangeIgnored.Store(true)
	}
	for {
		fl, b, ok := s.pop()
		if !ok {
			return
		}
		if err := s.fill(rc, fl, b); err != nil {
			s.logStop(err)
			return
		}
		if b == f.lastBlock {
			return
		}
	}
}

// fill reads block b from the stream and completes its claim; a block that
// cannot be read or fails its checks is released for its waiters to fetch.
func (s *blockStream) fill(rc io.Reader, fl *flight, b int64) error {
	f := s.f
	k := blockKey{f.content.ID, b}
	var watchdog *time.Timer
	if f.c.fillTimeout > 0 {
		watchdog = time.AfterFunc(f.c.fillTimeout, s.cancel)
		defer watchdog.Stop()
	}
	data, err := f.readBlockFrom(rc, b, b == f.lastBlock, false)
	if err != nil {
		f.c.finish(k, fl, nil, fmt.Errorf("%w: stream stopped: %v", errReleased, err))
		return err
	}
	f.c.finish(k, fl, data, nil)
	f.c.streamed.Add(1)
	return nil
}

// pop takes the next claimed block, waiting for the reader to allow one.
// It returns false when the stream is over.
func (s *blockStream) pop() (*flight, int64, bool) {
	idle := time.NewTimer(streamIdle)
	defer idle.Stop()
	for {
		s.mu.Lock()
		if !s.done && len(s.claims) > 0 {
			fl, b := s.claims[0], s.next
			s.claims[0] = nil
			s.claims = s.claims[1:]
			s.next++
			s.mu.Unlock()
			return fl, b, true
		}
		over := s.done || s.capped
		s.mu.Unlock()
		if over {
			return nil, 0, false
		}
		select {
		case <-s.wake:
		case <-s.ctx.Done():
			return nil, 0, false
		case <-idle.C:
			return nil, 0, false
		}
	}
}

// end marks the stream over and releases the blocks it claimed but did not
// read, so that their waiters fetch them themselves.
func (s *blockStream) end() {
	s.cancel()
	s.mu.Lock()
	s.done = true
	claims, next := s.claims, s.next
	s.claims = nil
	s.mu.Unlock()
	for i, fl := range claims {
		k := blockKey{s.f.content.ID, next + int64(i)}
		s.f.c.finish(k, fl, nil, fmt.Errorf("%w: stream ended", errReleased))
	}
}

func (s *blockStream) logStop(err error) {
	if s.ctx.Err() != nil && !errors.Is(err, ErrIntegrity) {
		return // the reader went away or seeked: not worth a warning
	}
	s.f.c.log.Warn("stream stopped; blocks are fetched one by one", "uri", s.f.content.Name, "err", err)
}
