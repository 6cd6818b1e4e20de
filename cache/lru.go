package cache

import (
	"math"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// blockKey names one block of one content version.
type blockKey struct {
	id    string
	block int64
}

// byteLRU is a least-recently-used set of blocks bounded by their total
// bytes, with an index by content id: simplelru keeps the recency order,
// and its eviction callback keeps the byte counts and the index. It is not
// safe for concurrent use.
type byteLRU struct {
	maxBytes  int64
	bytes     int64
	evictions uint64
	warmBytes int64                 // bytes of the warm blocks
	warm      map[blockKey]struct{} // blocks stored by Warm and not read since
	blocks    *simplelru.LRU[blockKey, []byte]
	byID      map[string]map[int64]struct{}
}

func newByteLRU(maxBytes int64) *byteLRU {
	l := &byteLRU{maxBytes: maxBytes, warm: make(map[blockKey]struct{}), byID: make(map[string]map[int64]struct{})}
	// The count bound is never reached: add evicts by bytes.
	blocks, err := simplelru.NewLRU(math.MaxInt, l.dropped)
	if err != nil {
		panic(err) // only for a size <= 0
	}
	l.blocks = blocks
	return l
}

// dropped accounts for a block leaving the LRU, whatever the reason.
func (l *byteLRU) dropped(k blockKey, data []byte) {
	l.bytes -= int64(len(data))
	l.unwarm(k, data)
	if blocks := l.byID[k.id]; blocks != nil {
		delete(blocks, k.block)
		if len(blocks) == 0 {
			delete(l.byID, k.id)
		}
	}
}

// get returns a block and marks it most recently used.
func (l *byteLRU) get(k blockKey) ([]byte, bool) {
	data, ok := l.blocks.Get(k)
	if ok {
		l.unwarm(k, data)
	}
	return data, ok
}

// peek returns a block without touching its recency.
func (l *byteLRU) peek(k blockKey) ([]byte, bool) { return l.blocks.Peek(k) }

// markWarm flags a cached block as stored by Warm and not read yet.
func (l *byteLRU) markWarm(k blockKey) {
	if _, warm := l.warm[k]; warm {
		return
	}
	if data, ok := l.blocks.Peek(k); ok {
		l.warm[k] = struct{}{}
		l.warmBytes += int64(len(data))
	}
}

// unwarm clears a block's warm flag.
func (l *byteLRU) unwarm(k blockKey, data []byte) {
	if _, warm := l.warm[k]; warm {
		delete(l.warm, k)
		l.warmBytes -= int64(len(data))
	}
}

// contains reports whether a block is cached without touching its recency.
func (l *byteLRU) contains(k blockKey) bool { return l.blocks.Contains(k) }

// add stores a block as the most recently used, then evicts the least
// recently used blocks until the total is within maxBytes. A block larger
// than maxBytes is not stored (and replaces nothing).
func (l *byteLRU) add(k blockKey, data []byte) bool {
	if int64(len(data)) > l.maxBytes {
		return false
	}
	l.blocks.Remove(k) // a replaced block leaves through dropped
	l.blocks.Add(k, data)
	blocks := l.byID[k.id]
	if blocks == nil {
		blocks = make(map[int64]struct{})
		l.byID[k.id] = blocks
	}
	blocks[k.block] = struct{}{}
	l.bytes += int64(len(data))
	for l.bytes > l.maxBytes {
		l.blocks.RemoveOldest()
		l.evictions++
	}
	return true
}

// removeID drops every block of a content id and returns how many.
func (l *byteLRU) removeID(id string) int {
	blocks := l.byID[id]
	n := len(blocks)
	for block := range blocks {
		l.blocks.Remove(blockKey{id, block})
	}
	return n
}

// len returns the number of cached blocks.
func (l *byteLRU) len() int { return l.blocks.Len() }
