package catalog

import (
	"encoding/binary"
	"maps"
	"slices"
	"strings"
)

// build checks a snapshot's parts against each other (every offset and index
// the queries follow) and assembles the catalog, rebuilding the URI index
// and the maps keyed by name.
func (p *snapshotParts) build() (*Catalog, error) {
	c := &Catalog{
		origin:       p.origin,
		sealed:       true,
		arena:        p.arena,
		files:        p.files,
		dirs:         p.dirs,
		dirIndex:     make(map[dirKey]uint32, len(p.dirs)),
		prefixes:     p.prefixes,
		prefixIndex:  make(map[string]uint32, len(p.shared)),
		types:        p.types,
		typeIndex:    make(map[string]uint16, len(p.types)),
		typeOverflow: p.overflow,
		props:        make(map[NodeID][]Property),
		protocol:     DefaultProtocol,
		altIno:       p.altIno,
		indexNameOff: p.indexNameOff,
		live:         int(p.live),
		liveBytes:    p.liveBytes,
		renamed:      int(p.renamed),
	}
	for _, i := range p.shared {
		if int(i) >= len(p.prefixes) {
			return nil, corruptf("shared prefix %d of %d", i, len(p.prefixes))
		}
	}
	checks := []func() error{c.checkTables, c.checkDirs, c.checkFiles, c.checkChildren, c.checkFileMaps, c.checkAltIno}
	for _, check := range checks {
		if err := check(); err != nil {
			return nil, err
		}
	}
	if err := c.moveOldLinks(p.links); err != nil {
		return nil, err
	}
	for _, i := range p.shared {
		c.prefixIndex[c.prefixes[i]] = i
	}
	for i, t := range c.types {
		c.typeIndex[t] = uint16(i)
	}
	if err := c.indexDirs(); err != nil {
		return nil, err
	}
	c.indexURIs(p.uriBits)
	return c, nil
}

// arenaHas reports whether n bytes at off are written arena bytes.
func (c *Catalog) arenaHas(off uint32, n int) bool {
	k := int(off >> arenaChunkBits)
	if off == 0 || k >= len(c.arena.chunks) {
		return false
	}
	return int(off&arenaChunkMask)+n <= len(c.arena.chunks[k])
}

// prefixedValid reports whether a length-prefixed string is at off.
func (c *Catalog) prefixedValid(off uint32) bool {
	if !c.arenaHas(off, 1) {
		return false
	}
	n, h := binary.Uvarint(c.arena.tail(off))
	return h > 0 && n < arenaChunkSize*arenaChunkSize && c.arenaHas(off+uint32(h), int(n))
}

// linksBlobValid reports whether a links blob (links.go) is at off.
func (c *Catalog) linksBlobValid(off uint32) bool {
	if !c.arenaHas(off, 1) {
		return false
	}
	_, ok := decodeLinks(c.arena.tail(off))
	return ok
}

// moveOldLinks stores in the arena the links a snapshot of version 3's
// predecessors kept in its links section.
func (c *Catalog) moveOldLinks(links map[NodeID][]Link) error {
	for _, id := range slices.Sorted(maps.Keys(links)) {
		ls := links[id]
		if !c.liveFileID(id) || len(ls) == 0 || c.files.at(id).links != 0 {
			return corruptf("links of %d", id)
		}
		blob := appendLinks(nil, ls)
		if !c.arena.fits(len(blob)) {
			return corruptf("links of %d: no room in the arena", id)
		}
		c.setLinks(c.files.at(id), blob)
	}
	return nil
}

// hashBlobValid reports whether a hash blob (hashes.go) is at off.
func (c *Catalog) hashBlobValid(off uint32) bool {
	if !c.arenaHas(off, 1) {
		return false
	}
	b := c.arena.tail(off)
	n, pos := int(b[0]), 1
	for range n {
		if pos >= len(b) {
			return false
		}
		code := b[pos]
		pos++
		switch {
		case code > maxAlgCode:
			return false
		case code != algOther:
			pos += algSize(code)
		default:
			for range 2 {
				if pos >= len(b) {
					return false
				}
				pos += 1 + int(b[pos])
			}
		}
	}
	return pos <= len(b)
}

func (c *Catalog) checkTables() error {
	if !c.arenaHas(c.indexNameOff, len(IndexName)) || c.arena.str(c.indexNameOff, len(IndexName)) != IndexName {
		return corruptf("the index name is not in the arena")
	}
	if len(c.types) == 0 || c.types[0] != "" || len(c.types) > typeTableMax {
		return corruptf("media type table of %d entries", len(c.types))
	}
	return nil
}

func (c *Catalog) checkDirs() error {
	root := &c.dirs[0]
	if root.deleted || root.parent != 0 || root.ino != 1 {
		return corruptf("root directory record")
	}
	for i := 1; i < len(c.dirs); i++ {
		d := &c.dirs[i]
		if d.deleted {
			if len(d.children) != 0 {
				return corruptf("deleted directory %d has children", i)
			}
			continue
		}
		if int(d.parent) >= i || c.dirs[d.parent].deleted || d.nameLen == 0 || !c.arenaHas(d.nameOff, int(d.nameLen)) {
			return corruptf("directory %d: parent %d, name at %d", i, d.parent, d.nameOff)
		}
	}
	return nil
}

func (c *Catalog) checkFiles() error {
	live := 0
	for id := NodeID(1); id < c.files.next; id++ {
		f := c.files.at(id)
		if f.flags&flagDeleted != 0 {
			continue
		}
		live++
		if err := c.checkFile(id, f); err != nil {
			return err
		}
		if f.links != 0 {
			c.withLinks++
		}
	}
	if live != c.live {
		return corruptf("%d live records, meta says %d", live, c.live)
	}
	return nil
}

func (c *Catalog) checkFile(id NodeID, f *fileRec) error {
	switch {
	case int(f.prefix) >= len(c.prefixes) || !c.prefixedValid(f.suffix):
		return corruptf("file %d: URI", id)
	case f.nameLen == 0 || !c.arenaHas(f.nameOff, int(f.nameLen)):
		return corruptf("file %d: name", id)
	case f.hash != 0 && !c.hashBlobValid(f.hash):
		return corruptf("file %d: hashes", id)
	case f.links != 0 && !c.linksBlobValid(f.links):
		return corruptf("file %d: links", id)
	case int(f.parent) >= len(c.dirs) || c.dirs[f.parent].deleted:
		return corruptf("file %d: parent %d", id, f.parent)
	case f.flags&flagInoNotRaw != 0 && c.altIno[f.ino] != id:
		return corruptf("file %d: inode %d", id, f.ino)
	}
	if f.flags&flagTypeOverflow != 0 {
		if _, ok := c.typeOverflow[id]; !ok {
			return corruptf("file %d: overflow type", id)
		}
	} else if int(f.typ) >= len(c.types) {
		return corruptf("file %d: type %d", id, f.typ)
	}
	return nil
}

// checkChildren checks that each directory lists its live files and
// subdirectories, each once, in strictly increasing name order.
func (c *Catalog) checkChildren() error {
	files, dirs, liveDirs := 0, 0, 0
	for i := range c.dirs {
		d := &c.dirs[i]
		if d.deleted {
			continue
		}
		liveDirs++
		subdirs := uint32(0)
		for k, id := range d.children {
			if !c.childOf(uint32(i), id) {
				return corruptf("directory %d: child %#x", i, uint32(id))
			}
			if id.IsDir() {
				subdirs++
			}
			if k > 0 && strings.Compare(c.nameOf(d.children[k-1]), c.nameOf(id)) >= 0 {
				return corruptf("directory %d: children out of order", i)
			}
		}
		if subdirs != d.subdirs {
			return corruptf("directory %d: %d subdirectories listed, %d counted", i, subdirs, d.subdirs)
		}
		dirs += int(subdirs)
		files += len(d.children) - int(subdirs)
	}
	if files != c.live || dirs != liveDirs-1 {
		return corruptf("%d files and %d directories listed, of %d and %d", files, dirs, c.live, liveDirs-1)
	}
	return nil
}

// childOf reports whether id is a live node whose parent is d.
func (c *Catalog) childOf(d uint32, id NodeID) bool {
	if id.IsDir() {
		i := uint32(id &^ dirBit)
		return i != 0 && int(i) < len(c.dirs) && !c.dirs[i].deleted && c.dirs[i].parent == d
	}
	if !c.files.valid(id) {
		return false
	}
	f := c.files.at(id)
	return f.flags&flagDeleted == 0 && f.parent == d
}

// liveFileID reports whether id is a live file record.
func (c *Catalog) liveFileID(id NodeID) bool {
	return !id.IsDir() && c.files.valid(id) && c.files.at(id).flags&flagDeleted == 0
}

func (c *Catalog) checkFileMaps() error {
	for id := range c.typeOverflow {
		if !c.liveFileID(id) || c.files.at(id).flags&flagTypeOverflow == 0 {
			return corruptf("overflow type of %d", id)
		}
	}
	return nil
}

func (c *Catalog) checkAltIno() error {
	for ino, id := range c.altIno {
		if id.IsDir() {
			i := int(id &^ dirBit)
			if i == 0 || i >= len(c.dirs) || c.dirs[i].deleted || c.dirs[i].ino != ino {
				return corruptf("inode %d of directory %d", ino, i)
			}
			continue
		}
		if !c.liveFileID(id) || c.files.at(id).ino != ino {
			return corruptf("inode %d of file %d", ino, id)
		}
	}
	return nil
}

// indexDirs rebuilds the directory index of live directories.
func (c *Catalog) indexDirs() error {
	for i := 1; i < len(c.dirs); i++ {
		d := &c.dirs[i]
		if d.deleted {
			continue
		}
		k := dirKey{d.parent, c.arena.str(d.nameOff, int(d.nameLen))}
		if _, dup := c.dirIndex[k]; dup {
			return corruptf("directory %d: name %q twice in directory %d", i, k.name, d.parent)
		}
		c.dirIndex[k] = uint32(i)
	}
	return nil
}

// indexURIs rebuilds the URI index at the size it had (larger should that
// be too small). Entries are placed in order of their home slots, so the
// table fills front to back instead of by random access.
func (c *Catalog) indexURIs(bits uint8) {
	entries := make([]uint64, 0, c.live)
	for id := NodeID(1); id < c.files.next; id++ {
		if c.files.at(id).flags&flagDeleted == 0 {
			entries = append(entries, uint64(uriTag(c.rawHash(id)))<<32|uint64(id))
		}
	}
	for len(entries)*4 > (1<<bits)*3 {
		bits++
	}
	c.uris.slots = make([]uint64, 1<<bits)
	c.uris.shift = 32 - uint(bits)
	sortByHome(entries, 32+c.uris.shift)
	for _, e := range entries {
		c.uris.place(e)
	}
	c.uris.count = len(entries)
}

// sortByHome sorts entries by entry>>shift (their home slot), least
// significant digit first, 11 bits a pass.
func sortByHome(entries []uint64, shift uint) {
	const digitBits = 11
	if len(entries) < 2 {
		return
	}
	tmp := make([]uint64, len(entries))
	src, dst := entries, tmp
	for low := shift; low < 64; low += digitBits {
		var counts [1 << digitBits]int
		for _, e := range src {
			counts[(e>>low)&(1<<digitBits-1)]++
		}
		sum := 0
		for i, n := range counts {
			counts[i], sum = sum, sum+n
		}
		for _, e := range src {
			d := (e >> low) & (1<<digitBits - 1)
			dst[counts[d]] = e
			counts[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &entries[0] {
		copy(entries, src)
	}
}
