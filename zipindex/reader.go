package zipindex

import (
	"bufio"
	"context"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"

	"rsfs/zipindex/inflate"
)

const (
	// checkpointMinSize is the smallest deflated member that gets
	// checkpoints; smaller ones are inflated from their start.
	checkpointMinSize = 2 << 20
	minSpacing        = 1 << 20
	maxSpacing        = 4 << 20
	// zstdMaxWindow bounds a zstd frame's window (memory per reader).
	zstdMaxWindow = 64 << 20
)

// Reader returns bytes [off, off+n) of m's uncompressed data as a stream;
// n is cut to the member's end. m must come from p's Members or Lookup. The
// first call for a member reads its local header (one request); later calls
// reuse the data offset. A read from 0 to the end verifies the CRC-32; every
// read verifies that the data is as long as the directory says.
func (p *Package) Reader(ctx context.Context, m *Member, off, n int64) (io.ReadCloser, error) {
	if off < 0 || n < 0 || off > m.Size {
		return nil, p.memberErrorf(m, ErrCorrupt, "range [%d, +%d) outside a %d-byte member", off, n, m.Size)
	}
	n = min(n, m.Size-off)
	if err := p.checkMember(m); err != nil {
		return nil, err
	}
	dataOff, err := p.dataOffset(ctx, m)
	if err != nil {
		return nil, err
	}
	if n == 0 && off > 0 {
		return io.NopCloser(eofReader{}), nil
	}
	src, start, err := p.decoded(ctx, m, dataOff, off)
	if err != nil {
		return nil, err
	}
	return p.newChecked(m, src, start, off, n)
}

// checkMember refuses unsupported methods and implausible sizes.
func (p *Package) checkMember(m *Member) error {
	switch m.Method {
	case MethodStored:
		if m.Size != m.CompressedSize {
			return p.memberErrorf(m, ErrHostile, "stored with %d bytes but %d compressed", m.Size, m.CompressedSize)
		}
	case MethodDeflate, MethodZstd:
		if m.Size/max(m.CompressedSize, 1) > p.opts.MaxRatio {
			return p.memberErrorf(m, ErrHostile, "ratio %d/%d exceeds %d", m.Size, m.CompressedSize, p.opts.MaxRatio)
		}
	default:
		return p.memberErrorf(m, ErrUnsupportedMethod, "method %d", m.Method)
	}
	return nil
}

// decoded returns a stream of m's uncompressed data starting at some
// position start <= off, and start.
func (p *Package) decoded(ctx context.Context, m *Member, dataOff, off int64) (io.ReadCloser, int64, error) {
	switch {
	case m.Method == MethodStored:
		rc, err := p.stream(ctx, dataOff+off, m.Size-off)
		return rc, off, err
	case m.Method == MethodDeflate && m.Size >= checkpointMinSize:
		return p.inflateFrom(ctx, m, dataOff, off)
	}
	rc, err := p.stream(ctx, dataOff, m.CompressedSize)
	if err != nil {
		return nil, 0, err
	}
	if m.Method == MethodDeflate {
		return withCloser(flate.NewReader(bufio.NewReaderSize(rc, 64<<10)), rc), 0, nil
	}
	dec, err := zstd.NewReader(rc, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(zstdMaxWindow))
	if err != nil {
		rc.Close()
		return nil, 0, p.wrapMember(m, "starting zstd", err)
	}
	return withCloser(dec.IOReadCloser(), rc), 0, nil
}

// inflateFrom inflates m from its nearest checkpoint at or before off,
// recording new checkpoints on the way.
func (p *Package) inflateFrom(ctx context.Context, m *Member, dataOff, off int64) (io.ReadCloser, int64, error) {
	i, _ := p.index(m)
	key := memberKey{pkg: p.id, member: i}
	cache := p.opts.Checkpoints
	rp, _ := cache.nearest(key, off)
	skip := rp.inBits / 8
	rc, err := p.stream(ctx, dataOff+skip, m.CompressedSize-skip)
	if err != nil {
		return nil, 0, err
	}
	spacing := min(max(m.Size/512, minSpacing), maxSpacing)
	last := rp.out
	record := func(b inflate.Boundary) {
		if b.Out-last < spacing || cache.covered(key, b.Out, spacing) {
			return
		}
		last = b.Out
		cache.add(key, b.InBits, b.Out, b.Window(make([]byte, 0, 32<<10)))
	}
	dec := inflate.NewResumed(bufio.NewReaderSize(rc, 64<<10), rp.inBits, rp.out, rp.window, inflate.Options{OnBlock: record})
	return withCloser(dec, rc), rp.out, nil
}

// withCloser pairs a decoder with the stream it reads.
func withCloser(r io.Reader, c io.Closer) io.ReadCloser {
	return &readCloser{Reader: r, closers: []io.Closer{c}}
}

type readCloser struct {
	io.Reader
	closers []io.Closer
}

func (rc *readCloser) Close() error {
	var first error
	if c, ok := rc.Reader.(io.Closer); ok {
		_ = c.Close() // a decoder's Close reports its stream error, already seen by Read
	}
	for _, c := range rc.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
