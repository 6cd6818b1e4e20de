package catalog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"rsfs/atomicfile"
)

// Snapshots: the whole sealed catalog, plus opaque state of the caller (the
// Change List positions it has reached), in one file that a remount reads
// back instead of rebuilding the tree from the Resource Lists.
//
// Format, version 3, all integers little-endian:
//
//	header   "RSFSCAT1", version u32, total length u64 (the whole file),
//	         CRC-32C u32 of the 20 bytes before it
//	sections each: tag u32, payload length u64, payload; in this order:
//	          1 meta      origin, counters, arena and index sizes
//	          2 state     the caller's bytes
//	          3 prefixes  URI prefixes, then those shareable by new resources
//	          4 types     the media type table
//	          5 overflow  media types of files beyond the table
//	          6 links     empty (versions 1 and 2: each file's links, times in
//	                      time.MarshalBinary form; read into the arena)
//	          7 altino    inode numbers that are not a file's URI hash
//	          8 dirs      the directory records, with child counts
//	          9 children  every directory's sorted child IDs, u32 each
//	         10 records   the file records, 56 bytes each, ID 0 included,
//	                      deleted ones kept (so IDs never shift); since
//	                      version 3 with the arena offset of the file's
//	                      links (links.go), zero padding before
//	         11 arena     each arena chunk: kind u8 (0 absent, 1 chunk with
//	                      its written length u32 and bytes, 2 an oversized
//	                      item: its length u64 and bytes, covering as many
//	                      chunk slots as it needs)
//	trailer  CRC-32C u32 of everything before it
//
// The records and arena are the catalog's own memory, so loading is mostly
// reading; only the URI index and the maps keyed by name are rebuilt. A
// snapshot is checked in full (length, checksum, then every offset and
// index) before a catalog is returned: a torn or damaged file is an error
// wrapping ErrCorruptSnapshot, never a partial catalog.
//
// Version 2 is version 1 written by a program whose path mapping escapes
// every control character in a name (rules 2 and 3 of mapping.go); version
// 1 mapped %0A to a newline. A version 1 snapshot is read when none of its
// names holds a control character, as its paths are then what version 2
// maps; otherwise it is refused as corrupt, so that the Source is read
// again and its paths mapped anew.
//
// Version 3 keeps a file's links in the arena, at an offset in its record
// where versions 1 and 2 had padding; their links section is read into
// the arena as the catalog is built.

const (
	snapshotMagic   = "RSFSCAT1"
	snapshotVersion = 3
	// linksSectionVersion is the last version that kept links in their
	// section rather than in the arena.
	linksSectionVersion = 2
	// rawControlVersion is the last version whose names may hold raw
	// control characters.
	rawControlVersion = 1
	headerSize        = 24
	trailerSize       = 4
)

// Section tags, in file order.
const (
	secMeta uint32 = iota + 1
	secState
	secPrefixes
	secTypes
	secOverflow
	secLinks
	secAltIno
	secDirs
	secChildren
	secRecords
	secArena
)

// ErrCorruptSnapshot is wrapped by every error about a snapshot's content:
// wrong magic or version, truncation, checksum mismatch, inconsistent data.
var ErrCorruptSnapshot = errors.New("catalog: corrupt snapshot")

// ErrSnapshotOrigin is returned when a snapshot was saved for another Source.
var ErrSnapshotOrigin = errors.New("catalog: snapshot is of another origin")

// WriteSnapshot writes the whole catalog, which must be sealed, and state
// (opaque to the catalog, e.g. Change List positions) to w. The catalog is
// copied under its read lock, briefly; the writing happens without it, so
// state should describe the catalog as of the call.
func (c *Catalog) WriteSnapshot(w io.Writer, state []byte) error {
	img, err := c.captureSnapshot(state)
	if err != nil {
		return err
	}
	defer img.release()
	return img.writeTo(w)
}

// SaveSnapshot writes a snapshot to path atomically: to a temporary file in
// the same directory, synced, renamed over path, and the directory synced.
// On any failure path is left as it was.
func (c *Catalog) SaveSnapshot(path string, state []byte) error {
	if err := atomicfile.Write(path, func(w io.Writer) error { return c.WriteSnapshot(w, state) }); err != nil {
		return fmt.Errorf("catalog: saving snapshot: %w", err)
	}
	return nil
}

// LoadSnapshot reads the snapshot at path into a new sealed catalog and
// returns it with the state saved alongside. opts.Origin must be the origin
// the catalog had (ErrSnapshotOrigin otherwise); an empty opts.Origin
// accepts the saved one (the caller checks the state saved with it).
func LoadSnapshot(path string, opts Options) (*Catalog, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("catalog: loading snapshot: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("catalog: loading snapshot: %w", err)
	}
	c, state, err := readSnapshot(f, opts, info.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, state, nil
}

// ReadSnapshot reads a snapshot written by WriteSnapshot from r (which it
// reads no further than the snapshot's end, give or take buffering).
func ReadSnapshot(r io.Reader, opts Options) (*Catalog, []byte, error) {
	return readSnapshot(r, opts, -1)
}

// readSnapshot reads a snapshot; size is the length r holds, -1 if unknown.
func readSnapshot(r io.Reader, opts Options, size int64) (*Catalog, []byte, error) {
	var hdr [headerSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil, corruptf("truncated header")
		}
		return nil, nil, fmt.Errorf("catalog: reading snapshot header: %w", err)
	}
	total, version, err := parseHeader(hdr[:])
	if err != nil {
		return nil, nil, err
	}
	if size >= 0 && size != total {
		return nil, nil, corruptf("file is %d bytes but its header says %d (truncated or torn)", size, total)
	}
	s := &snapReader{
		r:    bufio.NewReaderSize(r, 1<<20),
		crc:  crc32.Update(0, castagnoli, hdr[:]),
		left: total - headerSize,
	}
	img, err := readImage(s)
	if err != nil {
		return nil, nil, err
	}
	if want := normalizeOrigin(opts.Origin); opts.Origin != "" && img.origin != want {
		return nil, nil, fmt.Errorf("%w: saved for %q, not %q", ErrSnapshotOrigin, img.origin, want)
	}
	if version <= linksSectionVersion {
		img.clearLinkOffsets()
	}
	c, err := img.build()
	if err != nil {
		return nil, nil, err
	}
	if version <= rawControlVersion && c.hasControlName() {
		return nil, nil, corruptf("version %d maps a control character (%%0A...) in a URI raw into a name; read again for the escaped names of version %d", version, snapshotVersion)
	}
	return c, img.state, nil
}

// parseHeader checks the header and returns the declared total length and
// the version.
func parseHeader(hdr []byte) (int64, uint32, error) {
	if string(hdr[:8]) != snapshotMagic {
		return 0, 0, corruptf("not a catalog snapshot (magic %q)", hdr[:8])
	}
	if got, want := binary.LittleEndian.Uint32(hdr[20:]), crc32.Checksum(hdr[:20], castagnoli); got != want {
		return 0, 0, corruptf("header checksum mismatch")
	}
	v := binary.LittleEndian.Uint32(hdr[8:])
	if v < rawControlVersion || v > snapshotVersion {
		return 0, 0, corruptf("unsupported version %d (this program reads %d to %d)", v, rawControlVersion, snapshotVersion)
	}
	total := binary.LittleEndian.Uint64(hdr[12:])
	if total < headerSize+trailerSize || total > 1<<46 {
		return 0, 0, corruptf("implausible length %d", total)
	}
	return int64(total), v, nil
}

// hasControlName reports whether a name in the catalog, of a directory or
// a file, deleted ones included, holds a control character.
func (c *Catalog) hasControlName() bool {
	for i := range c.dirs {
		if hasControl(c.nameOf(dirID(uint32(i)))) {
			return true
		}
	}
	for id := NodeID(1); id < c.files.next; id++ {
		if hasControl(c.fileName(c.files.at(id))) {
			return true
		}
	}
	return false
}

// appendHeader appends the header of a snapshot of total bytes.
func appendHeader(dst []byte, total int64) []byte {
	start := len(dst)
	dst = append(dst, snapshotMagic...)
	dst = binary.LittleEndian.AppendUint32(dst, snapshotVersion)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(total))
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}
