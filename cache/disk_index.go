package cache

// diskEntry is one block the disk cache knows of: a block file, or a
// record in a pack (disk_pack.go).
type diskEntry struct {
	key        diskKey
	size       int64    // file or record bytes, header included
	block      blockKey // zero id until known (found by the scan and not read since)
	pack       *packFile
	off        int64 // the record's offset in pack
	prev, next *diskEntry
}

// diskVictims are what the index forgot and the disk must lose: block
// files by key, packs, and records of a dropped content in packs that stay
// (their magic is cleared, so no later start serves them again).
type diskVictims struct {
	keys    []diskKey
	packs   []*packFile
	records []droppedRecord
}

type droppedRecord struct {
	pack *packFile
	off  int64
}

func (v *diskVictims) add(o diskVictims) {
	v.keys = append(v.keys, o.keys...)
	v.packs = append(v.packs, o.packs...)
	v.records = append(v.records, o.records...)
}

// diskIndex orders the known blocks by last use and indexes them by
// content id where the id is known. Its bytes are those of its block files
// and of its packs, whole: a pack's records of dropped contents stay on
// disk, and counted, until the pack goes. It is not safe for concurrent use.
type diskIndex struct {
	bytes   int64
	entries map[diskKey]*diskEntry
	byID    map[string]map[int64]*diskEntry
	root    diskEntry   // root.next is the most recent, root.prev the least
	emptied []*packFile // sealed packs left with no record the index holds
	// forgotten are the blocks forgotten while the startup scan runs
	// (nil once it has indexed what it found): a block file the scan
	// listed, then evicted or dropped by this run before the scan added it,
	// is gone from the disk, and must not be added back.
	forgotten map[diskKey]struct{}
}

func newDiskIndex() *diskIndex {
	ix := &diskIndex{entries: make(map[diskKey]*diskEntry), byID: make(map[string]map[int64]*diskEntry),
		forgotten: make(map[diskKey]struct{})}
	ix.root.next, ix.root.prev = &ix.root, &ix.root
	return ix
}

// touch records a use of block k as the most recent: for a block file, of
// size bytes (written or read); a record in a pack keeps its place.
func (ix *diskIndex) touch(dk diskKey, k blockKey, size int64) {
	e, ok := ix.entries[dk]
	switch {
	case ok && e.pack != nil:
		ix.unlink(e)
	case ok:
		ix.unlink(e)
		ix.bytes += size - e.size
		e.size = size
	default:
		e = &diskEntry{key: dk, size: size}
		ix.entries[dk] = e
		ix.bytes += size
	}
	ix.setBlock(e, k)
	ix.insertAfter(e, &ix.root)
}

// addPack counts a pack's bytes (those it has already: a pack found on
// disk).
func (ix *diskIndex) addPack(p *packFile) { ix.bytes += p.size }

// addPacked records block k's record, just appended to p at off, as the
// most recent; a record not live (its content was dropped meanwhile) only
// adds to p's bytes. It reports whether a block file held dk before.
func (ix *diskIndex) addPacked(dk diskKey, k blockKey, size int64, p *packFile, off int64, live bool) (oldFile bool) {
	if p.gone { // evicted while the record was written: the file is gone
		return false
	}
	p.size += size
	ix.bytes += size
	if !live {
		return false
	}
	e, ok := ix.entries[dk]
	if ok {
		oldFile = e.pack == nil
		ix.removeEntry(e)
	}
	e = &diskEntry{key: dk, size: size, pack: p, off: off}
	ix.entries[dk] = e
	p.members = append(p.members, e)
	p.live++
	ix.setBlock(e, k)
	ix.insertAfter(e, &ix.root)
	return oldFile
}

// sealPack records p's table and trailer (tail bytes). It reports whether
// p holds no record the index knows, and is forgotten.
func (ix *diskIndex) sealPack(p *packFile, tail int64) bool {
	p.sealed = true
	if p.gone {
		return false
	}
	p.size += tail
	ix.bytes += tail
	if p.live == 0 {
		ix.dropPack(p)
		return true
	}
	return false
}

// addScanned records a block file found by the scan as the least recent,
// unless it is known already. Files must be added newest first.
func (ix *diskIndex) addScanned(dk diskKey, size int64) {
	if _, ok := ix.entries[dk]; ok {
		return
	}
	if _, ok := ix.forgotten[dk]; ok {
		return
	}
	e := &diskEntry{key: dk, size: size}
	ix.entries[dk] = e
	ix.bytes += size
	ix.insertAfter(e, ix.root.prev)
}

// addScannedPacked records a record of a pack found on disk (added with
// addPack) as the least recent, unless its key is known already.
func (ix *diskIndex) addScannedPacked(dk diskKey, size int64, p *packFile, off int64) {
	if _, ok := ix.entries[dk]; ok {
		return
	}
	e := &diskEntry{key: dk, size: size, pack: p, off: off}
	ix.entries[dk] = e
	p.members = append(p.members, e)
	p.live++
	ix.insertAfter(e, ix.root.prev)
}

// holds reports whether a block was written or read since the index was
// made. (One known only from the scan may have been discarded since.)
func (ix *diskIndex) holds(dk diskKey) bool {
	e, ok := ix.entries[dk]
	return ok && e.block.id != ""
}

// knows reports whether a block is in the index, from the scan or since.
func (ix *diskIndex) knows(dk diskKey) bool {
	_, ok := ix.entries[dk]
	return ok
}

// locate returns where block dk is: its entry (nil if unknown).
func (ix *diskIndex) locate(dk diskKey) *diskEntry { return ix.entries[dk] }

// remove forgets a block; a pack it leaves empty is among the victims.
func (ix *diskIndex) remove(dk diskKey) diskVictims {
	if e, ok := ix.entries[dk]; ok {
		ix.removeEntry(e)
	}
	return ix.takeEmptied()
}

// takeID forgets every known block of a content id: its block files, and
// the packs it leaves empty, are the victims.
func (ix *diskIndex) takeID(id string) diskVictims {
	var v diskVictims
	for _, e := range ix.byID[id] {
		if e.pack == nil {
			v.keys = append(v.keys, e.key)
		} else {
			v.records = append(v.records, droppedRecord{e.pack, e.off})
		}
		ix.removeEntry(e)
	}
	v.add(ix.takeEmptied())
	return v
}

// takeOldest forgets the least recently used blocks until the total is
// within maxBytes and returns what to remove; the least recent record of a
// pack takes the whole pack. Pinned blocks (rsfs warm), and packs holding
// one, are passed over, moved to the most recent end as they are, and
// taken only when the others are not enough.
func (ix *diskIndex) takeOldest(maxBytes int64, pinned func(diskKey) bool) diskVictims {
	var v diskVictims
	for seen := len(ix.entries); ix.bytes > maxBytes && seen > 0 && pinned != nil; seen-- {
		e := ix.root.prev
		switch {
		case e.pack == nil && pinned(e.key):
			ix.unlink(e)
			ix.insertAfter(e, &ix.root)
		case e.pack != nil && ix.pinnedPack(e.pack, pinned):
			seen -= ix.packToFront(e.pack) - 1
		default:
			ix.evict(e, &v)
		}
	}
	for ix.bytes > maxBytes && ix.root.prev != &ix.root {
		ix.evict(ix.root.prev, &v)
	}
	v.add(ix.takeEmptied())
	return v
}

func (ix *diskIndex) evict(e *diskEntry, v *diskVictims) {
	if p := e.pack; p != nil {
		ix.dropPack(p)
		v.packs = append(v.packs, p)
		return
	}
	v.keys = append(v.keys, e.key)
	ix.removeEntry(e)
}

// pinnedPack reports whether p holds a pinned block.
func (ix *diskIndex) pinnedPack(p *packFile, pinned func(diskKey) bool) bool {
	for _, e := range p.members {
		if ix.entries[e.key] == e && pinned(e.key) {
			return true
		}
	}
	return false
}

// packToFront makes p's blocks the most recent, as they were ordered, and
// returns how many it moved.
func (ix *diskIndex) packToFront(p *packFile) int {
	n := 0
	for _, e := range p.members {
		if ix.entries[e.key] == e {
			ix.unlink(e)
			ix.insertAfter(e, &ix.root)
			n++
		}
	}
	return n
}

// live reports whether e is still the index's entry for its key.
func (ix *diskIndex) live(e *diskEntry) bool { return ix.entries[e.key] == e }

// dropPack forgets a pack and every record of it the index holds.
func (ix *diskIndex) dropPack(p *packFile) {
	if p.gone {
		return
	}
	p.gone = true
	ix.bytes -= p.size
	for _, e := range p.members {
		if ix.live(e) {
			ix.forgetEntry(e)
		}
	}
	p.live, p.members = 0, nil
}

func (ix *diskIndex) takeEmptied() diskVictims {
	v := diskVictims{packs: ix.emptied}
	ix.emptied = nil
	return v
}

func (ix *diskIndex) len() int { return len(ix.entries) }

func (ix *diskIndex) setBlock(e *diskEntry, k blockKey) {
	if e.block.id != "" {
		return
	}
	e.block = k
	blocks := ix.byID[k.id]
	if blocks == nil {
		blocks = make(map[int64]*diskEntry)
		ix.byID[k.id] = blocks
	}
	blocks[k.block] = e
}

// removeEntry forgets one block: a block file's bytes leave the total, a
// record's stay with its pack, which is emptied when its last goes.
func (ix *diskIndex) removeEntry(e *diskEntry) {
	ix.forgetEntry(e)
	p := e.pack
	if p == nil {
		ix.bytes -= e.size
		return
	}
	p.live--
	if p.live == 0 && p.sealed && !p.gone {
		ix.dropPack(p)
		ix.emptied = append(ix.emptied, p)
	}
}

// forgetEntry takes e out of the order and the maps.
func (ix *diskIndex) forgetEntry(e *diskEntry) {
	ix.unlink(e)
	delete(ix.entries, e.key)
	if ix.forgotten != nil {
		ix.forgotten[e.key] = struct{}{}
	}
	if e.block.id == "" {
		return
	}
	if blocks := ix.byID[e.block.id]; blocks != nil && blocks[e.block.block] == e {
		delete(blocks, e.block.block)
		if len(blocks) == 0 {
			delete(ix.byID, e.block.id)
		}
	}
}

func (ix *diskIndex) unlink(e *diskEntry) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

func (ix *diskIndex) insertAfter(e, at *diskEntry) {
	e.prev = at
	e.next = at.next
	at.next.prev = e
	at.next = e
}
