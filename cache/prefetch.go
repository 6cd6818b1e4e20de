package cache

// sequence tracks whether a File's reads are sequential.
type sequence struct {
	started bool
	run     int   // sequential reads so far
	end     int64 // end of the reads so far
	issued  int64 // highest block prefetched in this sequential run; -1 for none
}

func (s *sequence) reset() {
	*s = sequence{issued: -1}
}

// isSequential reports whether a read at off continues the previous ones:
// a first read at 0, or one starting within a block of where they ended
// (kernel readahead and async reads arrive slightly out of order).
func (s *sequence) isSequential(off int64, blockSize int64) bool {
	if !s.started {
		return off == 0
	}
	return off >= s.end-blockSize && off <= s.end+blockSize
}

// notePosition records a read of [off, end) and, from the second of a run of
// sequential reads on (the first fill has shown whether the fetcher honours
// Range by then), reads ahead: through one stream (stream.go) that keeps
// streamAhead blocks filled after the read, or, when the next missing block
// is on disk, by prefetching up to ReadAhead blocks after it that are not
// cached or being filled; only one when the fetcher ignores Range, since every
// fill is then a stream from the start that continues. Random reads stop
// reading ahead and end the stream.
func (f *File) notePosition(off, end int64) {
	if f.lastBlock < 1 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.seq.isSequential(off, int64(f.c.blockSize)) {
		f.stopStream()
		f.seq.reset()
		f.seq.started, f.seq.end = true, end
		return
	}
	f.seq.started = true
	f.seq.run++
	f.seq.end = max(f.seq.end, end)
	if f.seq.run >= 2 && !f.closed && f.streams() &&
		f.streamFor(f.blockOf(off), min(f.blockOf(end-1)+f.c.streamAhead(), f.lastBlock)) {
		return
	}
	from := max(f.seq.issued+1, f.blockOf(end-1)+1)
	to := min(f.blockOf(end-1)+int64(f.c.readAhead), f.lastBlock)
	if f.rangeIgnored.Load() {
		to = min(to, from)
	}
	if f.seq.run < 2 || to < from || f.closed {
		return
	}
	f.seq.issued = to
	for b := from; b <= to; b++ {
		f.prefetchBlock(b)
	}
}

// streams reports whether the File's sequential reads are served by a
// stream: read-ahead is on and the fetcher honours Range (when it does not,
// every fill is a stream already).
func (f *File) streams() bool {
	return f.c.readAhead > 0 && !f.rangeIgnored.Load()
}

// prefetchBlock fills block b in the background unless it is cached or being
// filled already. f.mu must be held (so that Close cannot be waiting).
func (f *File) prefetchBlock(b int64) {
	k := blockKey{f.content.ID, b}
	if f.c.cachedOrFilling(k) {
		return
	}
	f.wg.Go(func() { f.c.prefetch(f.ctx, k, f.fillBlock(b)) })
}
