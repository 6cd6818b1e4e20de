package cache

// diskEntry is one block file the disk cache knows of.
type diskEntry struct {
	key        diskKey
	size       int64    // file bytes, header included
	block      blockKey // zero id until known (a file found by the scan and not read since)
	prev, next *diskEntry
}

// diskIndex orders the known block files by last use and indexes them by
// content id where the id is known. It is not safe for concurrent use.
type diskIndex struct {
	bytes   int64
	entries map[diskKey]*diskEntry
	byID    map[string]map[int64]*diskEntry
	root    diskEntry // root.next is the most recent, root.prev the least
}

func newDiskIndex() *diskIndex {
	ix := &diskIndex{entries: make(map[diskKey]*diskEntry), byID: make(map[string]map[int64]*diskEntry)}
	ix.root.next, ix.root.prev = &ix.root, &ix.root
	return ix
}

// touch records a use of block k's file (of size bytes) as the most recent.
func (ix *diskIndex) touch(dk diskKey, k blockKey, size int64) {
	e, ok := ix.entries[dk]
	if ok {
		ix.unlink(e)
		ix.bytes += size - e.size
		e.size = size
	} else {
		e = &diskEntry{key: dk, size: size}
		ix.entries[dk] = e
		ix.bytes += size
	}
	ix.setBlock(e, k)
	ix.insertAfter(e, &ix.root)
}

// addScanned records a file found by the scan as the least recent, unless
// it is known already. Files must be added newest first.
func (ix *diskIndex) addScanned(dk diskKey, size int64) {
	if _, ok := ix.entries[dk]; ok {
		return
	}
	e := &diskEntry{key: dk, size: size}
	ix.entries[dk] = e
	ix.bytes += size
	ix.insertAfter(e, ix.root.prev)
}

// holds reports whether a file was written or read since the index was
// made. (A file known only from the scan may have been discarded since.)
func (ix *diskIndex) holds(dk diskKey) bool {
	e, ok := ix.entries[dk]
	return ok && e.block.id != ""
}

// knows reports whether a file is in the index, from the scan or since.
func (ix *diskIndex) knows(dk diskKey) bool {
	_, ok := ix.entries[dk]
	return ok
}

// remove forgets a file.
func (ix *diskIndex) remove(dk diskKey) {
	if e, ok := ix.entries[dk]; ok {
		ix.removeEntry(e)
	}
}

// takeID forgets every known file of a content id and returns their keys.
func (ix *diskIndex) takeID(id string) []diskKey {
	blocks := ix.byID[id]
	keys := make([]diskKey, 0, len(blocks))
	for _, e := range blocks {
		keys = append(keys, e.key)
		ix.removeEntry(e)
	}
	return keys
}

// takeOldest forgets the least recently used files until the total is
// within maxBytes and returns their keys. Pinned files (rsfs warm) are
// passed over, moved to the most recent end as they are, and taken only
// when the others are not enough.
func (ix *diskIndex) takeOldest(maxBytes int64, pinned func(diskKey) bool) []diskKey {
	var keys []diskKey
	for seen := len(ix.entries); ix.bytes > maxBytes && seen > 0 && pinned != nil; seen-- {
		e := ix.root.prev
		if pinned(e.key) {
			ix.unlink(e)
			ix.insertAfter(e, &ix.root)
			continue
		}
		keys = append(keys, e.key)
		ix.removeEntry(e)
	}
	for ix.bytes > maxBytes && ix.root.prev != &ix.root {
		e := ix.root.prev
		keys = append(keys, e.key)
		ix.removeEntry(e)
	}
	return keys
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

func (ix *diskIndex) removeEntry(e *diskEntry) {
	ix.unlink(e)
	delete(ix.entries, e.key)
	ix.bytes -= e.size
	if e.block.id == "" {
		return
	}
	if blocks := ix.byID[e.block.id]; blocks != nil {
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
