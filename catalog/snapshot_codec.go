package catalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unsafe"
)

// This file holds the byte-level pieces of the snapshot format
// (snapshot.go): little-endian encoders and a bounds-checked decoder, the
// record codec, and the checksumming reader and writer.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordSize is a record's size on disk: the fields of fileRec in order,
// little-endian, without padding (links, at 52, was zero padding before
// version 3).
const recordSize = 56

// rawRecords is true when fileRec in memory is exactly its disk form
// (little-endian host, the expected layout), so records are copied as
// bytes; otherwise they are encoded field by field.
var rawRecords = recordLayoutIsDiskLayout()

func recordLayoutIsDiskLayout() bool {
	probe := uint16(1)
	littleEndian := *(*byte)(unsafe.Pointer(&probe)) == 1
	var f fileRec
	return littleEndian && unsafe.Sizeof(f) == recordSize &&
		unsafe.Offsetof(f.ino) == 0 && unsafe.Offsetof(f.size) == 8 && unsafe.Offsetof(f.mtime) == 16 &&
		unsafe.Offsetof(f.parent) == 24 && unsafe.Offsetof(f.nameOff) == 28 && unsafe.Offsetof(f.prefix) == 32 &&
		unsafe.Offsetof(f.suffix) == 36 && unsafe.Offsetof(f.hash) == 40 && unsafe.Offsetof(f.typ) == 44 &&
		unsafe.Offsetof(f.tzMin) == 46 && unsafe.Offsetof(f.nameLen) == 48 && unsafe.Offsetof(f.flags) == 49 &&
		unsafe.Offsetof(f.set) == 50 && unsafe.Offsetof(f.links) == 52
}

// recordsAsBytes views records as their bytes (only when rawRecords).
func recordsAsBytes(recs []fileRec) []byte {
	if len(recs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(recs))), len(recs)*recordSize)
}

// encodeRecords writes recs in disk form to dst (len(recs)*recordSize bytes).
func encodeRecords(dst []byte, recs []fileRec) {
	if rawRecords {
		copy(dst, recordsAsBytes(recs))
		return
	}
	le := binary.LittleEndian
	for i := range recs {
		f, b := &recs[i], dst[i*recordSize:(i+1)*recordSize]
		le.PutUint64(b[0:], f.ino)
		le.PutUint64(b[8:], uint64(f.size))
		le.PutUint64(b[16:], uint64(f.mtime))
		le.PutUint32(b[24:], f.parent)
		le.PutUint32(b[28:], f.nameOff)
		le.PutUint32(b[32:], f.prefix)
		le.PutUint32(b[36:], f.suffix)
		le.PutUint32(b[40:], f.hash)
		le.PutUint16(b[44:], f.typ)
		le.PutUint16(b[46:], uint16(f.tzMin))
		b[48], b[49] = f.nameLen, f.flags
		le.PutUint16(b[50:], f.set)
		le.PutUint32(b[52:], f.links)
	}
}

// decodeRecords fills recs from their disk form.
func decodeRecords(recs []fileRec, src []byte) {
	le := binary.LittleEndian
	for i := range recs {
		b := src[i*recordSize : (i+1)*recordSize]
		recs[i] = fileRec{
			ino: le.Uint64(b[0:]), size: int64(le.Uint64(b[8:])), mtime: int64(le.Uint64(b[16:])),
			parent: le.Uint32(b[24:]), nameOff: le.Uint32(b[28:]), prefix: le.Uint32(b[32:]),
			suffix: le.Uint32(b[36:]), hash: le.Uint32(b[40:]), typ: le.Uint16(b[44:]),
			tzMin: int16(le.Uint16(b[46:])), nameLen: b[48], flags: b[49], set: le.Uint16(b[50:]),
			links: le.Uint32(b[52:]),
		}
	}
}

// enc appends little-endian values.
type enc struct{ b []byte }

func (e *enc) u8(v uint8)   { e.b = append(e.b, v) }
func (e *enc) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) i64(v int64)  { e.u64(uint64(v)) }

func (e *enc) str(s string) {
	e.u32(uint32(len(s)))
	e.b = append(e.b, s...)
}

// section appends a framed section: tag, payload length, payload.
func (e *enc) section(tag uint32, payload []byte) {
	e.u32(tag)
	e.u64(uint64(len(payload)))
	e.b = append(e.b, payload...)
}

// dec reads little-endian values from a section's payload. The first
// overrun sets err; later reads return zero values.
type dec struct {
	b    []byte
	what string
	err  error
}

func (d *dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = corruptf("%s: runs past its section", d.what)
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *dec) u8() uint8 {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *dec) u32() uint32 {
	if b := d.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *dec) u64() uint64 {
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *dec) i64() int64 { return int64(d.u64()) }

func (d *dec) bytes() []byte { return d.take(int(d.u32())) }

func (d *dec) str() string { return string(d.bytes()) }

// count reads an element count, rejecting one the rest of the payload
// cannot hold at minSize bytes an element (so a bad count never allocates).
func (d *dec) count(minSize int) int {
	n := int(d.u32())
	if d.err == nil && n > len(d.b)/minSize {
		d.err = corruptf("%s: count %d exceeds its section", d.what, n)
		return 0
	}
	return n
}

// done reports the first error, or an error if bytes are left over.
func (d *dec) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = corruptf("%s: %d unexpected bytes at the end of its section", d.what, len(d.b))
	}
	return d.err
}

// crcWriter checksums what it passes on and counts it.
type crcWriter struct {
	w   io.Writer
	crc uint32
	n   int64
}

func (cw *crcWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.crc = crc32.Update(cw.crc, castagnoli, p[:n])
	cw.n += int64(n)
	return n, err
}

// snapReader reads a snapshot's bytes, checksumming them and never reading
// (or letting a length allocate) past the length the header declared.
type snapReader struct {
	r    io.Reader
	crc  uint32
	left int64 // bytes declared and not yet read, the trailer included
}

// full reads exactly len(p) bytes.
func (s *snapReader) full(p []byte, what string) error {
	if int64(len(p)) > s.left {
		return corruptf("%s: runs past the declared end of the snapshot", what)
	}
	if _, err := io.ReadFull(s.r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return corruptf("%s: truncated snapshot", what)
		}
		return fmt.Errorf("catalog: reading snapshot %s: %w", what, err)
	}
	s.crc = crc32.Update(s.crc, castagnoli, p)
	s.left -= int64(len(p))
	return nil
}

// section reads a section header, checks it is the expected one and returns
// its payload length.
func (s *snapReader) section(tag uint32, what string) (int64, error) {
	var hdr [12]byte
	if err := s.full(hdr[:], what+" header"); err != nil {
		return 0, err
	}
	if got := binary.LittleEndian.Uint32(hdr[:]); got != tag {
		return 0, corruptf("expected section %d (%s), found %d", tag, what, got)
	}
	n := binary.LittleEndian.Uint64(hdr[4:])
	if n > uint64(s.left-trailerSize) {
		return 0, corruptf("%s: length %d runs past the declared end of the snapshot", what, n)
	}
	return int64(n), nil
}

// payload reads a whole section into memory for a dec.
func (s *snapReader) payload(tag uint32, what string) (*dec, error) {
	n, err := s.section(tag, what)
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if err := s.full(b, what); err != nil {
		return nil, err
	}
	return &dec{b: b, what: what}, nil
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorruptSnapshot, fmt.Sprintf(format, args...))
}
