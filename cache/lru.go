package cache

// blockKey names one block of one content version.
type blockKey struct {
	id    string
	block int64
}

// lruEntry is a cached block on the recency list.
type lruEntry struct {
	key        blockKey
	data       []byte
	warm       bool // stored by Warm and not read since
	prev, next *lruEntry
}

// byteLRU is a least-recently-used set of blocks bounded by their total
// bytes, with an index by content id. It is not safe for concurrent use.
type byteLRU struct {
	maxBytes  int64
	bytes     int64
	evictions uint64
	warmBytes int64 // bytes of the warm entries
	entries   map[blockKey]*lruEntry
	byID      map[string]map[int64]*lruEntry
	root      lruEntry // root.next is the most recent, root.prev the least
}

func newByteLRU(maxBytes int64) *byteLRU {
	l := &byteLRU{
		maxBytes: maxBytes,
		entries:  make(map[blockKey]*lruEntry),
		byID:     make(map[string]map[int64]*lruEntry),
	}
	l.root.next, l.root.prev = &l.root, &l.root
	return l
}

// get returns a block and marks it most recently used.
func (l *byteLRU) get(k blockKey) ([]byte, bool) {
	e, ok := l.entries[k]
	if !ok {
		return nil, false
	}
	l.unlink(e)
	l.pushFront(e)
	if e.warm {
		e.warm = false
		l.warmBytes -= int64(len(e.data))
	}
	return e.data, true
}

// markWarm flags a cached block as stored by Warm and not read yet.
func (l *byteLRU) markWarm(k blockKey) {
	if e, ok := l.entries[k]; ok && !e.warm {
		e.warm = true
		l.warmBytes += int64(len(e.data))
	}
}

// contains reports whether a block is cached without touching its recency.
func (l *byteLRU) contains(k blockKey) bool {
	_, ok := l.entries[k]
	return ok
}

// add stores a block as the most recently used, then evicts the least
// recently used blocks until the total is within maxBytes. A block larger
// than maxBytes is not stored (and replaces nothing).
func (l *byteLRU) add(k blockKey, data []byte) bool {
	if int64(len(data)) > l.maxBytes {
		return false
	}
	if old, ok := l.entries[k]; ok {
		l.remove(old)
	}
	e := &lruEntry{key: k, data: data}
	l.entries[k] = e
	blocks := l.byID[k.id]
	if blocks == nil {
		blocks = make(map[int64]*lruEntry)
		l.byID[k.id] = blocks
	}
	blocks[k.block] = e
	l.bytes += int64(len(data))
	l.pushFront(e)
	for l.bytes > l.maxBytes {
		l.remove(l.root.prev)
		l.evictions++
	}
	return true
}

// removeID drops every block of a content id and returns how many.
func (l *byteLRU) removeID(id string) int {
	blocks := l.byID[id]
	n := len(blocks)
	for _, e := range blocks {
		l.remove(e)
	}
	return n
}

// len returns the number of cached blocks.
func (l *byteLRU) len() int { return len(l.entries) }

func (l *byteLRU) remove(e *lruEntry) {
	l.unlink(e)
	delete(l.entries, e.key)
	if blocks := l.byID[e.key.id]; blocks != nil {
		delete(blocks, e.key.block)
		if len(blocks) == 0 {
			delete(l.byID, e.key.id)
		}
	}
	l.bytes -= int64(len(e.data))
	if e.warm {
		l.warmBytes -= int64(len(e.data))
	}
}

func (l *byteLRU) unlink(e *lruEntry) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

func (l *byteLRU) pushFront(e *lruEntry) {
	e.prev = &l.root
	e.next = l.root.next
	l.root.next.prev = e
	l.root.next = e
}
