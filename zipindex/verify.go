package zipindex

import (
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// checked serves [off, end) of a member from a decoded stream positioned at
// start, and verifies length and (on a pass from 0) the CRC-32.
type checked struct {
	p        *Package
	m        *Member
	src      io.ReadCloser
	pos, off int64 // pos: the member offset of src's next byte
	end      int64
	crc      hash.Hash32 // nil unless the pass started at 0
	err      error       // sticky
}

func (p *Package) newChecked(m *Member, src io.ReadCloser, start, off, n int64) (io.ReadCloser, error) {
	c := &checked{p: p, m: m, src: src, pos: start, off: off, end: off + n}
	if start == 0 {
		c.crc = crc32.NewIEEE()
	}
	return c, nil
}

func (c *checked) Read(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if err := c.skipToOff(); err != nil {
		c.err = err
		return 0, err
	}
	if c.pos >= c.end {
		c.err = c.finish()
		return 0, c.err
	}
	b = b[:min(int64(len(b)), c.end-c.pos)]
	n, err := c.src.Read(b)
	c.consume(b[:n])
	switch {
	case err == io.EOF && c.pos < c.end:
		c.err = c.p.memberErrorf(c.m, ErrCorrupt, "data ends after %d of %d bytes", c.pos, c.m.Size)
	case err == io.EOF:
		c.err = c.finish()
	case err != nil:
		c.err = c.readError(err)
	}
	if n > 0 && c.err != nil && c.err != io.EOF {
		return n, nil // report the error on the next call
	}
	return n, c.err
}

// skipToOff decodes and drops the bytes between the stream's start and off.
func (c *checked) skipToOff() error {
	var buf []byte
	for c.pos < c.off {
		if len(buf) == 0 {
			buf = make([]byte, 64<<10)
		}
		n, err := c.src.Read(buf[:min(int64(len(buf)), c.off-c.pos)])
		c.consume(buf[:n])
		if err == io.EOF && c.pos < c.off {
			return c.p.memberErrorf(c.m, ErrCorrupt, "data ends after %d of %d bytes", c.pos, c.m.Size)
		}
		if err != nil && err != io.EOF {
			return c.readError(err)
		}
	}
	return nil
}

func (c *checked) consume(b []byte) {
	c.pos += int64(len(b))
	if c.crc != nil {
		c.crc.Write(b)
	}
}

// finish ends the read at c.end; at the member's end it checks that the
// data stops there and, on a whole pass, its CRC-32.
func (c *checked) finish() error {
	if c.pos < c.m.Size {
		return io.EOF
	}
	var one [1]byte
	for range 100 {
		n, err := c.src.Read(one[:])
		if n > 0 {
			return c.p.memberErrorf(c.m, ErrCorrupt, "data runs past its size %d", c.m.Size)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return c.readError(err)
		}
	}
	if c.crc != nil && c.crc.Sum32() != c.m.CRC32 {
		return c.p.memberErrorf(c.m, ErrCorrupt, "CRC-32 %08x, directory says %08x", c.crc.Sum32(), c.m.CRC32)
	}
	return io.EOF
}

// readError classifies a read failure: the package's reader failing passes
// through; anything else is bad data.
func (c *checked) readError(err error) error {
	var se *streamError
	if errors.As(err, &se) {
		return c.p.wrapMember(c.m, fmt.Sprintf("reading at %d", c.pos), se.err)
	}
	return fmt.Errorf("zip %s: member %q: decoding at %d: %w: %w", c.p.Name, c.m.Name, c.pos, ErrCorrupt, err)
}

func (c *checked) Close() error { return c.src.Close() }
