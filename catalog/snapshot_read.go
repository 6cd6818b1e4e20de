package catalog

import (
	"encoding/binary"

	"rsfs/resourcesync"
)

// snapshotParts is a snapshot as read, before it is checked and becomes a
// catalog.
type snapshotParts struct {
	origin       string
	state        []byte
	recordCount  uint32
	dirCount     uint32
	indexNameOff uint32
	live         uint64
	liveBytes    int64
	renamed      uint64
	arenaNext    uint64
	arenaHeld    int64
	arenaSlots   uint32
	uriBits      uint8

	prefixes []string
	shared   []uint32 // prefixes new resources may share
	types    []string
	overflow map[NodeID]string
	links    map[NodeID][]resourcesync.Link
	altIno   map[uint64]NodeID
	dirs     []dirRec
	nkids    []uint32 // child count of each directory
	files    fileStore
	arena    arena
}

// readImage reads every section and the trailer, checking the checksum.
func readImage(s *snapReader) (*snapshotParts, error) {
	p := &snapshotParts{}
	steps := []func(*snapReader) error{
		p.readMeta, p.readState, p.readPrefixes, p.readTypes, p.readOverflow, p.readLinks,
		p.readAltIno, p.readDirs, p.readChildren, p.readRecords, p.readArena,
	}
	for _, step := range steps {
		if err := step(s); err != nil {
			return nil, err
		}
	}
	if s.left != trailerSize {
		return nil, corruptf("%d unexpected bytes before the trailer", s.left-trailerSize)
	}
	want := s.crc
	var trailer [trailerSize]byte
	if err := s.full(trailer[:], "trailer"); err != nil {
		return nil, err
	}
	if got := binary.LittleEndian.Uint32(trailer[:]); got != want {
		return nil, corruptf("checksum mismatch (stored %08x, computed %08x)", got, want)
	}
	return p, nil
}

func (p *snapshotParts) readMeta(s *snapReader) error {
	d, err := s.payload(secMeta, "meta")
	if err != nil {
		return err
	}
	p.origin = d.str()
	p.recordCount = d.u32()
	p.dirCount = d.u32()
	p.indexNameOff = d.u32()
	p.live = d.u64()
	p.liveBytes = d.i64()
	p.renamed = d.u64()
	p.arenaNext = d.u64()
	p.arenaHeld = d.i64()
	p.arenaSlots = d.u32()
	p.uriBits = d.u8()
	if err := d.done(); err != nil {
		return err
	}
	switch {
	case p.recordCount == 0 || NodeID(p.recordCount) > dirBit:
		return corruptf("meta: %d records", p.recordCount)
	case p.dirCount == 0 || NodeID(p.dirCount) > dirBit:
		return corruptf("meta: %d directories", p.dirCount)
	case p.live >= uint64(p.recordCount):
		return corruptf("meta: %d live of %d records", p.live, p.recordCount)
	case p.uriBits < minTableBits || p.uriBits > 31 || p.uriBits > minTableBits && uint64(1)<<p.uriBits > 4*uint64(p.recordCount):
		return corruptf("meta: URI index of 2^%d slots", p.uriBits)
	case uint64(p.arenaSlots) > arenaMaxSize>>arenaChunkBits || p.arenaNext > uint64(p.arenaSlots)<<arenaChunkBits:
		return corruptf("meta: arena of %d chunks ending at %d", p.arenaSlots, p.arenaNext)
	}
	return nil
}

func (p *snapshotParts) readState(s *snapReader) error {
	n, err := s.section(secState, "state")
	if err != nil {
		return err
	}
	if n > 0 {
		p.state = make([]byte, n)
		return s.full(p.state, "state")
	}
	return nil
}

func (p *snapshotParts) readPrefixes(s *snapReader) error {
	d, err := s.payload(secPrefixes, "prefixes")
	if err != nil {
		return err
	}
	p.prefixes = make([]string, d.count(4))
	for i := range p.prefixes {
		p.prefixes[i] = d.str()
	}
	p.shared = make([]uint32, d.count(4))
	for i := range p.shared {
		p.shared[i] = d.u32()
	}
	return d.done()
}

func (p *snapshotParts) readTypes(s *snapReader) error {
	d, err := s.payload(secTypes, "types")
	if err != nil {
		return err
	}
	p.types = make([]string, d.count(4))
	for i := range p.types {
		p.types[i] = d.str()
	}
	return d.done()
}

func (p *snapshotParts) readOverflow(s *snapReader) error {
	d, err := s.payload(secOverflow, "overflow types")
	if err != nil {
		return err
	}
	n := d.count(8)
	p.overflow = make(map[NodeID]string, n)
	for range n {
		id := NodeID(d.u32())
		p.overflow[id] = d.str()
	}
	return d.done()
}

// clearLinkOffsets zeroes the records' links offsets, for a version whose
// records had padding there (their links are in the links section).
func (p *snapshotParts) clearLinkOffsets() {
	for _, chunk := range p.files.chunks {
		for i := range chunk {
			chunk[i].links = 0
		}
	}
}

func (p *snapshotParts) readLinks(s *snapReader) error {
	d, err := s.payload(secLinks, "links")
	if err != nil {
		return err
	}
	n := d.count(8)
	p.links = make(map[NodeID][]resourcesync.Link, n)
	for range n {
		id := NodeID(d.u32())
		ls := make([]resourcesync.Link, d.count(40))
		for i := range ls {
			decodeLink(d, &ls[i])
		}
		p.links[id] = ls
	}
	return d.done()
}

func decodeLink(d *dec, l *resourcesync.Link) {
	l.Rel = d.str()
	l.Href = d.str()
	l.Pri = int(d.i64())
	l.Length = d.i64()
	if m := d.bytes(); len(m) > 0 && d.err == nil {
		if err := l.Modified.UnmarshalBinary(m); err != nil {
			d.err = corruptf("links: modified time: %v", err)
		}
	}
	l.Type = d.str()
	l.Path = d.str()
	if n := d.count(8); n > 0 {
		l.Hashes = make([]resourcesync.Hash, n)
		for i := range l.Hashes {
			l.Hashes[i] = resourcesync.Hash{Alg: d.str(), Value: d.str()}
		}
	}
}

func (p *snapshotParts) readAltIno(s *snapReader) error {
	d, err := s.payload(secAltIno, "alternative inodes")
	if err != nil {
		return err
	}
	n := d.count(12)
	p.altIno = make(map[uint64]NodeID, n)
	for range n {
		ino := d.u64()
		p.altIno[ino] = NodeID(d.u32())
	}
	return d.done()
}

func (p *snapshotParts) readDirs(s *snapReader) error {
	d, err := s.payload(secDirs, "directories")
	if err != nil {
		return err
	}
	if n := d.count(dirRecordSize); d.err == nil && n != int(p.dirCount) {
		return corruptf("directories: %d records, meta says %d", n, p.dirCount)
	}
	p.dirs = make([]dirRec, p.dirCount)
	p.nkids = make([]uint32, p.dirCount)
	for i := range p.dirs {
		r := &p.dirs[i]
		r.ino = d.u64()
		r.mtime = d.i64()
		r.parent = d.u32()
		r.nameOff = d.u32()
		r.subdirs = d.u32()
		r.nameLen = d.u8()
		r.deleted = d.u8() != 0
		p.nkids[i] = d.u32()
	}
	return d.done()
}

func (p *snapshotParts) readChildren(s *snapReader) error {
	total := uint64(0)
	for _, n := range p.nkids {
		total += uint64(n)
	}
	n, err := s.section(secChildren, "children")
	if err != nil {
		return err
	}
	if uint64(n) != 4*total {
		return corruptf("children: %d bytes for %d children", n, total)
	}
	raw := make([]byte, n)
	if err := s.full(raw, "children"); err != nil {
		return err
	}
	flat := make([]NodeID, total)
	for i := range flat {
		flat[i] = NodeID(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	at := 0
	for i, k := range p.nkids {
		if k > 0 {
			// A full slice expression: growing one list never writes into the next.
			p.dirs[i].children = flat[at : at+int(k) : at+int(k)]
		}
		at += int(k)
	}
	return nil
}

func (p *snapshotParts) readRecords(s *snapReader) error {
	n, err := s.section(secRecords, "records")
	if err != nil {
		return err
	}
	count := int(p.recordCount)
	if n != int64(count)*recordSize {
		return corruptf("records: %d bytes for %d records", n, count)
	}
	p.files.next = NodeID(count)
	if count == 1 { // only the unused ID 0: an empty store has no chunk
		var zero [recordSize]byte
		return s.full(zero[:], "records")
	}
	var buf []byte
	for first := 0; first < count; first += fileChunkSize {
		chunk := make([]fileRec, fileChunkSize)
		p.files.chunks = append(p.files.chunks, chunk)
		part := chunk[:min(fileChunkSize, count-first)]
		if rawRecords {
			if err := s.full(recordsAsBytes(part), "records"); err != nil {
				return err
			}
			continue
		}
		buf = buf[:0]
		buf = append(buf, make([]byte, len(part)*recordSize)...)
		if err := s.full(buf, "records"); err != nil {
			return err
		}
		decodeRecords(part, buf)
	}
	return nil
}

// readArena rebuilds the arena's chunk slots. Only the chunk the arena
// appends to next gets a chunk's full capacity; the others are exactly their
// written length.
func (p *snapshotParts) readArena(s *snapReader) error {
	n, err := s.section(secArena, "arena")
	if err != nil {
		return err
	}
	end := s.left - n
	a := &p.arena
	a.next, a.held = p.arenaNext, p.arenaHeld
	held := int64(0)
	for len(a.chunks) < int(p.arenaSlots) {
		var hdr [8]byte
		if err := s.full(hdr[:1], "arena"); err != nil {
			return err
		}
		switch hdr[0] {
		case slotAbsent:
			a.chunks = append(a.chunks, nil)
		case slotChunk:
			if err := s.full(hdr[:4], "arena"); err != nil {
				return err
			}
			size := binary.LittleEndian.Uint32(hdr[:4])
			if size > arenaChunkSize || int64(size) > s.left-end {
				return corruptf("arena: chunk of %d bytes", size)
			}
			capacity := int(size)
			if len(a.chunks) == int(p.arenaNext>>arenaChunkBits) {
				capacity = arenaChunkSize
			}
			buf := make([]byte, size, capacity)
			if err := s.full(buf, "arena"); err != nil {
				return err
			}
			a.chunks = append(a.chunks, buf)
			held += arenaChunkSize
		case slotLarge:
			if err := s.full(hdr[:8], "arena"); err != nil {
				return err
			}
			size := binary.LittleEndian.Uint64(hdr[:8])
			if size <= arenaChunkSize || size > uint64(s.left-end) ||
				len(a.chunks)+largeSlots(int(size)) > int(p.arenaSlots) {
				return corruptf("arena: oversized item of %d bytes", size)
			}
			big := make([]byte, size)
			if err := s.full(big, "arena"); err != nil {
				return err
			}
			for j := range largeSlots(len(big)) {
				a.chunks = append(a.chunks, big[j*arenaChunkSize:])
			}
			held += int64(size)
		default:
			return corruptf("arena: chunk kind %d", hdr[0])
		}
	}
	if s.left != end {
		return corruptf("arena: %d bytes left in its section", s.left-end)
	}
	if held != a.held {
		return corruptf("arena: %d bytes of chunks, meta says %d", held, a.held)
	}
	return p.checkArenaEnd()
}

// checkArenaEnd checks that the arena's next offset is where its last
// chunk's written bytes end (or at a chunk boundary past them).
func (p *snapshotParts) checkArenaEnd() error {
	a := &p.arena
	k := int(a.next >> arenaChunkBits)
	switch {
	case k == len(a.chunks):
		return nil
	case k == len(a.chunks)-1 && a.chunks[k] != nil && cap(a.chunks[k]) == arenaChunkSize &&
		uint64(len(a.chunks[k])) == a.next&arenaChunkMask:
		return nil
	}
	return corruptf("arena: next offset %d does not end the arena", a.next)
}
