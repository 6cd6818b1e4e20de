package zipindex

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
)

const (
	eocdSig       = 0x06054b50
	eocdLen       = 22
	zip64LocSig   = 0x07064b50
	zip64LocLen   = 20
	zip64EOCDSig  = 0x06064b50
	zip64EOCDLen  = 56
	dirHeaderLen  = 46
	maxCommentLen = 0xffff
	// tailRead is the first suffix read: 64 KiB of directory plus room for
	// the ZIP64 records and the longest comment.
	tailRead = 64<<10 + maxCommentLen + eocdLen + zip64LocLen + zip64EOCDLen
)

// dirEnd is what the end records say about the central directory.
type dirEnd struct {
	records   uint64
	dirSize   uint64
	dirOffset uint64
	endOffset int64 // where the end records start (the ZIP64 record, else the EOCD)
}

// tail is the end of the package read so far: buf holds bytes [off, size).
type tail struct {
	buf []byte
	off int64
}

// extend reads bytes [from, t.off) and prepends them.
func (t *tail) extend(ctx context.Context, r io.ReaderAt, from int64) error {
	if from >= t.off {
		return nil
	}
	head := make([]byte, t.off-from, t.off-from+int64(len(t.buf)))
	if _, err := readFull(ctx, r, head, from); err != nil {
		return err
	}
	t.buf, t.off = append(head, t.buf...), from
	return nil
}

// readFull reads len(p) bytes at off, treating io.EOF after a full read as
// success. A reader that is also a RangeReader is read through it, so that
// ctx bounds the request (an unmount must not wait on it); otherwise ctx is
// checked before the read.
func readFull(ctx context.Context, r io.ReaderAt, p []byte, off int64) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if rr, ok := r.(RangeReader); ok {
		return readFullRange(ctx, rr, p, off)
	}
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return n, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// readFullRange reads len(p) bytes at off in one ranged request.
func readFullRange(ctx context.Context, rr RangeReader, p []byte, off int64) (int, error) {
	rc, err := rr.ReadRange(ctx, off, int64(len(p)))
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := io.ReadFull(rc, p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// readTail reads the last tailRead bytes (or the whole package).
func (p *Package) readTail(ctx context.Context) (*tail, error) {
	n := min(p.Size, tailRead)
	t := &tail{buf: make([]byte, n), off: p.Size - n}
	if _, err := readFull(ctx, p.r, t.buf, t.off); err != nil {
		return nil, fmt.Errorf("zip %s: reading the last %d bytes: %w", p.Name, n, err)
	}
	return t, nil
}

// findEnd locates the end of central directory record (and the ZIP64 one),
// reading before the tail when the ZIP64 record lies there.
func (p *Package) findEnd(ctx context.Context, t *tail) (dirEnd, error) {
	pos := findEOCD(t.buf)
	if pos < 0 {
		return dirEnd{}, p.errorf(ErrCorrupt, "no end of central directory record")
	}
	b := t.buf[pos:]
	d := dirEnd{
		records:   uint64(le16(b[10:])),
		dirSize:   uint64(le32(b[12:])),
		dirOffset: uint64(le32(b[16:])),
		endOffset: t.off + int64(pos),
	}
	if d.records != 0xffff && d.dirSize != 0xffffffff && d.dirOffset != 0xffffffff {
		return d, nil
	}
	return p.readZip64End(ctx, t, pos, d)
}

// findEOCD returns the position of the last EOCD signature whose comment
// fits in buf, or -1.
func findEOCD(buf []byte) int {
	for i := len(buf) - eocdLen; i >= 0 && i >= len(buf)-eocdLen-maxCommentLen; i-- {
		if le32(buf[i:]) == eocdSig && i+eocdLen+int(le16(buf[i+20:])) <= len(buf) {
			return i
		}
	}
	return -1
}

// readZip64End follows the ZIP64 locator before the EOCD at pos.
func (p *Package) readZip64End(ctx context.Context, t *tail, pos int, d dirEnd) (dirEnd, error) {
	if pos < zip64LocLen || le32(t.buf[pos-zip64LocLen:]) != zip64LocSig {
		return d, nil // not ZIP64 after all: the 0xffff values are real
	}
	loc := t.buf[pos-zip64LocLen:]
	recOff := int64(le64(loc[8:]))
	if recOff < 0 || recOff+zip64EOCDLen > t.off+int64(pos-zip64LocLen) {
		return d, p.errorf(ErrHostile, "ZIP64 end record at %d is outside the package", recOff)
	}
	if err := t.extend(ctx, p.r, recOff); err != nil {
		return d, fmt.Errorf("zip %s: reading the ZIP64 end record: %w", p.Name, err)
	}
	rec := t.buf[recOff-t.off:]
	if le32(rec) != zip64EOCDSig {
		return d, p.errorf(ErrCorrupt, "no ZIP64 end record at %d", recOff)
	}
	d.records = le64(rec[32:])
	d.dirSize = le64(rec[40:])
	d.dirOffset = le64(rec[48:])
	d.endOffset = recOff
	return d, nil
}

// checkEnd bounds the directory against the file and the options.
func (p *Package) checkEnd(d dirEnd) error {
	switch {
	case d.dirSize > uint64(p.opts.MaxDirBytes):
		return p.errorf(ErrHostile, "central directory of %d bytes exceeds the limit of %d", d.dirSize, p.opts.MaxDirBytes)
	case d.records > uint64(p.opts.MaxMembers):
		return p.errorf(ErrHostile, "%d members exceed the limit of %d", d.records, p.opts.MaxMembers)
	case d.dirOffset+d.dirSize > uint64(d.endOffset):
		return p.errorf(ErrHostile, "central directory [%d, +%d) runs past its end record at %d", d.dirOffset, d.dirSize, d.endOffset)
	case d.records*dirHeaderLen > d.dirSize:
		return p.errorf(ErrHostile, "%d members cannot fit in a %d-byte directory", d.records, d.dirSize)
	}
	return nil
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
