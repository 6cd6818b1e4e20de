package zipindex

import (
	"context"
	"fmt"
	"io"
)

// RangeReader is implemented by package readers that can stream a byte range
// in one request (e.g. an HTTP Range GET). Reader uses it when the
// io.ReaderAt given to Open has it; otherwise it reads ranges by ReadAt in
// chunks that grow from 64 KiB to 4 MiB.
type RangeReader interface {
	ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error)
}

const (
	firstChunk = 64 << 10
	maxChunk   = 4 << 20
)

// stream returns bytes [off, off+n) of the package as a stream.
func (p *Package) stream(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	if rr, ok := p.r.(RangeReader); ok {
		rc, err := rr.ReadRange(ctx, off, n)
		if err != nil {
			return nil, err
		}
		return &markedStream{rc}, nil
	}
	return &markedStream{&chunkReader{ctx: ctx, r: p.r, off: off, end: off + n, chunk: firstChunk}}, nil
}

// streamError is a failure to read the package (network, changed
// representation), as opposed to bad data inside it.
type streamError struct{ err error }

func (e *streamError) Error() string { return e.err.Error() }
func (e *streamError) Unwrap() error { return e.err }

// markedStream marks its reader's errors, other than io.EOF, as streamError.
type markedStream struct{ io.ReadCloser }

func (s *markedStream) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = &streamError{err}
	}
	return n, err
}

// chunkReader streams a range through ReadAt calls of growing size, so that
// a short read costs one small request and a long one few large requests.
type chunkReader struct {
	ctx      context.Context
	r        io.ReaderAt
	off, end int64
	chunk    int
	buf      []byte
	pos      int // unread bytes are buf[pos:]
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.pos == len(c.buf) {
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.buf[c.pos:])
	c.pos += n
	return n, nil
}

// fill reads the next chunk.
func (c *chunkReader) fill() error {
	if c.off >= c.end {
		return io.EOF
	}
	if err := c.ctx.Err(); err != nil {
		return err
	}
	n := int(min(int64(c.chunk), c.end-c.off))
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	c.buf = c.buf[:n]
	if _, err := readFull(c.ctx, c.r, c.buf, c.off); err != nil {
		c.buf = c.buf[:0]
		return fmt.Errorf("reading %d bytes at %d: %w", n, c.off, err)
	}
	c.off += int64(n)
	c.pos = 0
	c.chunk = min(2*c.chunk, maxChunk)
	return nil
}

func (c *chunkReader) Close() error { return nil }
