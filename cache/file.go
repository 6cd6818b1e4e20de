package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// errClosed is returned by reads on a closed File.
var errClosed = errors.New("cache: file closed")

// File is one open file: it reads a Content through the Cache from a Fetcher.
// It is safe for concurrent use.
type File struct {
	c         *Cache
	content   Content
	fetcher   Fetcher
	lastBlock int64 // index of the last block; -1 for an empty content
	digest    digest
	hasDigest bool

	rangeIgnored atomic.Bool // a fill got a stream continuing past its block

	ctx    context.Context // ends on Close; prefetches run on it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	verify   *verifier   // nil unless a multi-block content has a known hash
	checks   *chainCheck // blocks of a chained version checked beside the reads
	seq      sequence
	stream   *blockStream // the sequential reader's stream, if one runs
	emptyErr error
	emptyOK  bool
	// failed ends the File: once a read met bytes that disagree with the
	// published content, or found the version gone, every later read fails
	// with the same error, so a reader never gets a mixed copy (the
	// kernel retries a failed read ahead; that retry must fail too).
	failed error
}

// Open returns a File reading content from fetcher through the cache.
func (c *Cache) Open(content Content, fetcher Fetcher) *File {
	c.Busy()
	ctx, cancel := context.WithCancel(context.Background())
	f := &File{
		c:         c,
		content:   content,
		fetcher:   fetcher,
		lastBlock: (content.Size+int64(c.blockSize)-1)/int64(c.blockSize) - 1,
		ctx:       ctx,
		cancel:    cancel,
	}
	f.digest, f.hasDigest = strongestDigest(content.Hashes)
	if f.hasDigest && f.lastBlock > 0 {
		f.verify = newVerifier(f.digest, content.Name, f.lastBlock, c.maxPendingHashBlocks, f.cachedBlock, &c.hashed)
	}
	f.seq.reset()
	return f
}

// ReadAt reads len(p) bytes at off, like io.ReaderAt: fewer bytes come with
// io.EOF, and a read at or after the end returns 0, io.EOF. Errors for bytes
// that disagree with the published Content wrap ErrIntegrity; the read that
// completes a whole pass over a content whose hash does not match fails.
func (f *File) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	parts, err := f.ReadRange(ctx, off, len(p))
	return copyParts(p, parts), err
}

// ReadRange reads like ReadAt, but returns the bytes as slices of the
// cache's blocks instead of copying them: blocks never change, so the
// caller may hand the slices out as they are.
func (f *File) ReadRange(ctx context.Context, off int64, n int) ([][]byte, error) {
	if off < 0 {
		return nil, fmt.Errorf("cache: read %s at negative offset %d", f.content.Name, off)
	}
	if f.isClosed() {
		return nil, fmt.Errorf("cache: read %s: %w", f.content.Name, errClosed)
	}
	f.c.Busy()
	parts, err := f.readRange(ctx, off, int64(n))
	if err != nil && EndsFile(err) {
		f.fail(err)
	}
	return parts, err
}

func (f *File) readRange(ctx context.Context, off, n int64) ([][]byte, error) {
	if err := f.failure(); err != nil {
		return nil, err
	}
	if err := f.c.vers.badErr(f.content.ID); err != nil {
		return nil, fmt.Errorf("cache: read %s: %w", f.content.Name, err)
	}
	if f.content.Size == 0 {
		if err := f.checkEmpty(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	if off >= f.content.Size {
		return nil, io.EOF
	}
	if n == 0 {
		return nil, nil
	}
	whole := f.verifiesWhole()
	if whole {
		if err := f.verifyWhole(ctx); err != nil {
			return nil, fmt.Errorf("cache: read %s: %w", f.content.Name, err)
		}
	}
	end := min(off+n, f.content.Size)
	first, last := f.blockOf(off), f.blockOf(end-1)
	f.notePosition(off, end)
	blocks, err := f.getBlocks(ctx, first, last)
	if err != nil {
		return nil, err
	}
	if !whole {
		if err := f.verifyPass(first, blocks, end == f.content.Size); err != nil {
			return nil, err
		}
	}
	parts := rangeOf(blocks, off-first*int64(f.c.blockSize), end-off)
	if end-off < n {
		return parts, io.EOF
	}
	return parts, nil
}

// fail ends the File with err (the first such error is kept) and its
// stream: no more bytes of a copy that failed are read ahead.
func (f *File) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed == nil {
		f.failed = err
	}
	f.stopStream()
}

func (f *File) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// Close stops the File's prefetches. Reads after Close fail.
func (f *File) Close() {
	f.mu.Lock()
	f.closed = true
	if f.verify != nil {
		f.verify.stop() // ends a pass in progress, and its hashing goroutine
	}
	if f.checks != nil {
		f.checks.abort() // ends the checks' goroutine
		f.checks = nil
	}
	f.mu.Unlock()
	f.cancel()
	f.wg.Wait()
}

func (f *File) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// getBlocks returns blocks first..last, fetching missing ones in parallel.
func (f *File) getBlocks(ctx context.Context, first, last int64) ([][]byte, error) {
	blocks := make([][]byte, last-first+1)
	errs := make([]error, len(blocks))
	if len(blocks) == 1 {
		blocks[0], errs[0] = f.getBlock(ctx, first)
		return blocks, errs[0]
	}
	var wg sync.WaitGroup
	for i := range blocks {
		wg.Go(func() { blocks[i], errs[i] = f.getBlock(ctx, first+int64(i)) })
	}
	wg.Wait()
	return blocks, errors.Join(errs...)
}

// getBlock returns block b through the cache, checking its length.
func (f *File) getBlock(ctx context.Context, b int64) ([]byte, error) {
	data, err := f.c.Get(ctx, f.content.ID, b, f.fillBlock(b))
	if err != nil {
		return nil, fmt.Errorf("cache: read %s block %d: %w", f.content.Name, b, err)
	}
	if _, n := f.blockRange(b); int64(len(data)) != n {
		f.c.DropContent(f.content.ID)
		return nil, fmt.Errorf("%w: %s: cached block %d has %d bytes, want %d", ErrIntegrity, f.content.Name, b, len(data), n)
	}
	return data, nil
}

// rangeOf returns the n bytes of consecutive blocks that start skip bytes
// into the first, as slices of the blocks.
func rangeOf(blocks [][]byte, skip, n int64) [][]byte {
	parts := make([][]byte, 0, len(blocks))
	for _, data := range blocks {
		part := data[skip:min(int64(len(data)), skip+n)]
		parts = append(parts, part)
		n -= int64(len(part))
		skip = 0
	}
	return parts
}

// copyParts copies parts into p and returns the bytes copied.
func copyParts(p []byte, parts [][]byte) int {
	n := 0
	for _, part := range parts {
		n += copy(p[n:], part)
	}
	return n
}

// verifyPass feeds the verifier; on a mismatch it drops the content's blocks,
// logs, and returns the ErrIntegrity.
func (f *File) verifyPass(first int64, blocks [][]byte, reachesEnd bool) error {
	if f.verify == nil {
		return nil
	}
	if c := f.c.vers.chainOf(f.content.ID); c != nil {
		return f.checkChained(c, first, blocks, reachesEnd)
	}
	f.mu.Lock()
	done, err := f.verify.observe(first, blocks, reachesEnd)
	passed := f.verify.takeChain()
	f.mu.Unlock()
	if !done || err == nil {
		f.c.vers.markChained(f.content.ID, passed)
		return err
	}
	f.c.DropContent(f.content.ID)
	f.logMismatch(err)
	// This reader has had bytes of the bad copy: its File fails from now
	// on. The other copies are verified whole for the next readers; with
	// none left, the version is bad.
	f.c.startWhole(f, err)
	return err
}

// checkChained checks the blocks a read covered against the chain a pass
// left (chain.go): a block already found good costs nothing; any other is
// checked on its own, beside the reads (chainCheck), and the read that
// reaches the end waits for those checks. No pass is needed (one in
// progress is ended). A block that differs drops the content's blocks
// (chainMismatch) and fails the File's next read.
func (f *File) checkChained(c *chain, first int64, blocks [][]byte, reachesEnd bool) error {
	f.mu.Lock()
	f.verify.stop()
	for i, data := range blocks {
		if b := first + int64(i); !c.known(b, data) {
			if f.checks == nil {
				f.checks = newChainCheck(c, f.content.Name, f.chainMismatch)
			}
			f.checks.add(b, data)
		}
	}
	var err error
	switch {
	case f.checks == nil:
	case reachesEnd:
		err = f.checks.wait()
		f.checks = nil
	default:
		err = f.checks.failed()
	}
	f.mu.Unlock()
	return err
}

// chainMismatch drops the content's blocks (the one that differs among
// them) and logs, as soon as a check beside the reads finds a block that
// differs from the verified bytes, whether or not a read comes after.
func (f *File) chainMismatch(err error) {
	f.c.DropContent(f.content.ID)
	f.c.verifyFailures.Add(err.Error())
	f.c.log.Error("block differs from the verified version", "uri", f.content.Name, "id", f.content.ID, "err", err)
}

// cachedBlock returns block b if it is cached with the right length.
func (f *File) cachedBlock(b int64) ([]byte, bool) {
	data, ok := f.c.peek(blockKey{f.content.ID, b})
	if _, n := f.blockRange(b); !ok || int64(len(data)) != n {
		return nil, false
	}
	return data, true
}

// checkEmpty verifies the hash of an empty content, once.
func (f *File) checkEmpty() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.emptyOK {
		if f.hasDigest {
			f.emptyErr = f.digest.checkData(f.content.Name, nil)
			if f.emptyErr != nil {
				f.logMismatch(f.emptyErr)
			}
		}
		f.emptyOK = true
	}
	return f.emptyErr
}

func (f *File) logMismatch(err error) {
	var m *hashMismatch
	if errors.As(err, &m) {
		f.c.verifyFailures.Add(err.Error())
		f.c.log.Error("content hash mismatch", "uri", m.uri, "alg", m.alg, "expected", m.want, "got", m.got, "id", f.content.ID)
	}
}

// blockOf returns the index of the block holding offset off.
func (f *File) blockOf(off int64) int64 { return off / int64(f.c.blockSize) }

// blockRange returns the offset and length of block b.
func (f *File) blockRange(b int64) (off, n int64) {
	off = b * int64(f.c.blockSize)
	return off, min(int64(f.c.blockSize), f.content.Size-off)
}
