package catalog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
)

// snapshotImage is a catalog copied for writing: everything but the arena
// is copied (the arena's written bytes never change, so its chunks are only
// sliced at their current lengths).
type snapshotImage struct {
	small   []byte   // sections meta to children, framed
	records []byte   // the records section's payload, in scratch memory
	arena   [][]byte // arena chunk slots as of the capture
	release func()   // gives records back; the image is unusable after
}

// captureSnapshot copies the catalog under its read lock.
func (c *Catalog) captureSnapshot(state []byte) (*snapshotImage, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.sealed {
		return nil, errors.New("catalog: cannot snapshot a catalog that is not sealed")
	}
	if c.protocol != DefaultProtocol || len(c.props) > 0 {
		// The format holds neither (yet): a snapshot would come back as a
		// ResourceSync catalog without its properties.
		return nil, fmt.Errorf("catalog: snapshots of %s catalogs are not supported", c.protocol)
	}
	var e enc
	c.encodeMeta(&e)
	e.section(secState, state)
	c.encodePrefixes(&e)
	c.encodeTypes(&e)
	if err := c.encodeLinks(&e); err != nil {
		return nil, err
	}
	c.encodeAltIno(&e)
	c.encodeDirs(&e)
	records, release := c.recordsImage()
	return &snapshotImage{small: e.b, records: records, arena: slices.Clone(c.arena.chunks), release: release}, nil
}

// begin starts a section whose length end fills in.
func (e *enc) begin(tag uint32) int {
	e.u32(tag)
	e.u64(0)
	return len(e.b)
}

func (e *enc) end(start int) {
	binary.LittleEndian.PutUint64(e.b[start-8:], uint64(len(e.b)-start))
}

func (c *Catalog) encodeMeta(e *enc) {
	s := e.begin(secMeta)
	e.str(c.origin)
	e.u32(uint32(c.files.next))
	e.u32(uint32(len(c.dirs)))
	e.u32(c.indexNameOff)
	e.u64(uint64(c.live))
	e.i64(c.liveBytes)
	e.u64(uint64(c.renamed))
	e.u64(c.arena.next)
	e.i64(c.arena.held)
	e.u32(uint32(len(c.arena.chunks)))
	e.u8(uint8(32 - c.uris.shift))
	e.end(s)
}

func (c *Catalog) encodePrefixes(e *enc) {
	s := e.begin(secPrefixes)
	e.u32(uint32(len(c.prefixes)))
	for _, p := range c.prefixes {
		e.str(p)
	}
	shared := slices.Sorted(maps.Values(c.prefixIndex))
	e.u32(uint32(len(shared)))
	for _, i := range shared {
		e.u32(i)
	}
	e.end(s)
}

func (c *Catalog) encodeTypes(e *enc) {
	s := e.begin(secTypes)
	e.u32(uint32(len(c.types)))
	for _, t := range c.types {
		e.str(t)
	}
	e.end(s)
	s = e.begin(secOverflow)
	e.u32(uint32(len(c.typeOverflow)))
	for _, id := range slices.Sorted(maps.Keys(c.typeOverflow)) {
		e.u32(uint32(id))
		e.str(c.typeOverflow[id])
	}
	e.end(s)
}

// encodeLinks writes the links section empty: since version 3 a file's
// links are in the arena (links.go); versions 1 and 2 listed them here.
func (c *Catalog) encodeLinks(e *enc) error {
	s := e.begin(secLinks)
	e.u32(0)
	e.end(s)
	return nil
}

func (c *Catalog) encodeAltIno(e *enc) {
	s := e.begin(secAltIno)
	e.u32(uint32(len(c.altIno)))
	for _, ino := range slices.Sorted(maps.Keys(c.altIno)) {
		e.u64(ino)
		e.u32(uint32(c.altIno[ino]))
	}
	e.end(s)
}

// dirRecordSize is a directory record's size in the dirs section.
const dirRecordSize = 34

func (c *Catalog) encodeDirs(e *enc) {
	s := e.begin(secDirs)
	e.u32(uint32(len(c.dirs)))
	children := 0
	for i := range c.dirs {
		d := &c.dirs[i]
		e.u64(d.ino)
		e.i64(d.mtime)
		e.u32(d.parent)
		e.u32(d.nameOff)
		e.u32(d.subdirs)
		e.u8(d.nameLen)
		e.u8(boolByte(d.deleted))
		e.u32(uint32(len(d.children)))
		children += len(d.children)
	}
	e.end(s)
	s = e.begin(secChildren)
	e.b = slices.Grow(e.b, 4*children)
	for i := range c.dirs {
		for _, id := range c.dirs[i].children {
			e.u32(uint32(id))
		}
	}
	e.end(s)
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// recordsImage copies the records (IDs 0 to next-1) in disk form, into
// scratch memory that release gives back to the OS.
func (c *Catalog) recordsImage() (out []byte, release func()) {
	n := int(c.files.next)
	out, release = scratch(n * recordSize)
	for ci, chunk := range c.files.chunks {
		first := ci * fileChunkSize
		if first >= n {
			break
		}
		count := min(fileChunkSize, n-first)
		encodeRecords(out[first*recordSize:], chunk[:count])
	}
	return out, release
}

// Arena slot kinds in the arena section.
const (
	slotAbsent uint8 = iota
	slotChunk
	slotLarge
)

// eachArenaSlot calls fn for each slot the arena section describes: an
// oversized item stands for all the chunk slots it covers.
func eachArenaSlot(slots [][]byte, fn func(kind uint8, data []byte)) {
	for i := 0; i < len(slots); {
		s := slots[i]
		switch {
		case s == nil:
			fn(slotAbsent, nil)
			i++
		case cap(s) > arenaChunkSize:
			fn(slotLarge, s)
			i += largeSlots(len(s))
		default:
			fn(slotChunk, s)
			i++
		}
	}
}

// largeSlots is how many chunk slots an oversized item of n bytes covers.
func largeSlots(n int) int { return (n + arenaChunkSize - 1) / arenaChunkSize }

func (img *snapshotImage) arenaPayloadLen() int64 {
	var n int64
	eachArenaSlot(img.arena, func(kind uint8, data []byte) {
		switch kind {
		case slotAbsent:
			n++
		case slotChunk:
			n += 1 + 4 + int64(len(data))
		case slotLarge:
			n += 1 + 8 + int64(len(data))
		}
	})
	return n
}

// writeTo writes the snapshot: header, sections, trailer.
func (img *snapshotImage) writeTo(w io.Writer) error {
	arenaLen := img.arenaPayloadLen()
	total := int64(headerSize+len(img.small)+12+len(img.records)+12+trailerSize) + arenaLen
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &crcWriter{w: bw}
	ew := &errWriter{w: cw}
	ew.write(appendHeader(nil, total))
	ew.write(img.small)
	var e enc
	e.u32(secRecords)
	e.u64(uint64(len(img.records)))
	ew.write(e.b)
	ew.write(img.records)
	e.b = e.b[:0]
	e.u32(secArena)
	e.u64(uint64(arenaLen))
	ew.write(e.b)
	eachArenaSlot(img.arena, func(kind uint8, data []byte) {
		e.b = append(e.b[:0], kind)
		switch kind {
		case slotChunk:
			e.u32(uint32(len(data)))
		case slotLarge:
			e.u64(uint64(len(data)))
		}
		ew.write(e.b)
		ew.write(data)
	})
	if ew.err != nil {
		return fmt.Errorf("catalog: writing snapshot: %w", ew.err)
	}
	if cw.n != total-trailerSize {
		return fmt.Errorf("catalog: writing snapshot: wrote %d bytes, expected %d", cw.n, total-trailerSize)
	}
	if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, cw.crc)); err != nil {
		return fmt.Errorf("catalog: writing snapshot: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("catalog: writing snapshot: %w", err)
	}
	return nil
}

// errWriter keeps the first write error and skips later writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (ew *errWriter) write(p []byte) {
	if ew.err == nil && len(p) > 0 {
		_, ew.err = ew.w.Write(p)
	}
}
