package zipindex

import (
	"container/list"
	"slices"
	"sort"
	"sync"
)

// DefaultCheckpointBytes bounds the process-wide checkpoint cache.
const DefaultCheckpointBytes = 64 << 20

var defaultCheckpoints = NewCheckpointCache(DefaultCheckpointBytes)

// CheckpointCache keeps inflate checkpoints (a deflate block boundary and the
// 32 KiB window before it) of large deflated members, bounded by bytes and
// evicted least recently used first. It is safe for concurrent use and may
// be shared by packages.
type CheckpointCache struct {
	mu      sync.Mutex
	max     int64
	used    int64
	lru     list.List // of *checkpoint, most recent first
	members map[memberKey][]*checkpoint
}

// memberKey names a member of an opened package.
type memberKey struct {
	pkg    uint64
	member int
}

// checkpoint is a place a deflate stream can be resumed from.
type checkpoint struct {
	key    memberKey
	inBits int64
	out    int64
	window []byte
	elem   *list.Element
}

// checkpointOverhead approximates a checkpoint's bookkeeping bytes.
const checkpointOverhead = 128

// NewCheckpointCache returns a cache holding up to maxBytes of checkpoints.
func NewCheckpointCache(maxBytes int64) *CheckpointCache {
	return &CheckpointCache{max: maxBytes, members: map[memberKey][]*checkpoint{}}
}

// Bytes reports the bytes held.
func (c *CheckpointCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Len reports the number of checkpoints held.
func (c *CheckpointCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// resumePoint is a checkpoint's position and window, safe to use unlocked
// (windows are never written after they are stored).
type resumePoint struct {
	inBits, out int64
	window      []byte
}

// nearest returns the checkpoint of key with the largest out <= off.
func (c *CheckpointCache) nearest(key memberKey, off int64) (resumePoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cps := c.members[key]
	i := sort.Search(len(cps), func(i int) bool { return cps[i].out > off }) - 1
	if i < 0 {
		return resumePoint{}, false
	}
	cp := cps[i]
	c.lru.MoveToFront(cp.elem)
	return resumePoint{cp.inBits, cp.out, cp.window}, true
}

// covered reports whether key has a checkpoint within spacing/2 of out, so
// that recording another one there would be a waste.
func (c *CheckpointCache) covered(key memberKey, out, spacing int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cps := c.members[key]
	i := sort.Search(len(cps), func(i int) bool { return cps[i].out >= out-spacing/2 })
	return i < len(cps) && cps[i].out <= out+spacing/2
}

// add stores a checkpoint, evicting old ones beyond the byte bound.
func (c *CheckpointCache) add(key memberKey, inBits, out int64, window []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cps := c.members[key]
	i := sort.Search(len(cps), func(i int) bool { return cps[i].out >= out })
	if i < len(cps) && cps[i].out == out {
		return
	}
	cp := &checkpoint{key: key, inBits: inBits, out: out, window: window}
	cp.elem = c.lru.PushFront(cp)
	c.members[key] = insertAt(cps, i, cp)
	c.used += cost(cp)
	for c.used > c.max && c.lru.Len() > 0 {
		c.evict(c.lru.Back().Value.(*checkpoint))
	}
}

// forget drops every checkpoint of pkg.
func (c *CheckpointCache) forget(pkg uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, cps := range c.members {
		if key.pkg == pkg {
			for _, cp := range slices.Clone(cps) {
				c.evict(cp)
			}
		}
	}
}

// evict removes cp.
func (c *CheckpointCache) evict(cp *checkpoint) {
	c.lru.Remove(cp.elem)
	c.used -= cost(cp)
	cps := c.members[cp.key]
	i := sort.Search(len(cps), func(i int) bool { return cps[i].out >= cp.out })
	if i < len(cps) && cps[i] == cp {
		cps = append(cps[:i], cps[i+1:]...)
	}
	if len(cps) == 0 {
		delete(c.members, cp.key)
		return
	}
	c.members[cp.key] = cps
}

func cost(cp *checkpoint) int64 { return int64(len(cp.window)) + checkpointOverhead }

func insertAt(cps []*checkpoint, i int, cp *checkpoint) []*checkpoint {
	cps = append(cps, nil)
	copy(cps[i+1:], cps[i:])
	cps[i] = cp
	return cps
}
