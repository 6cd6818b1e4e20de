package zipindex

import (
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// DefaultCheckpointBytes bounds the process-wide checkpoint cache.
const DefaultCheckpointBytes = 64 << 20

var defaultCheckpoints = NewCheckpointCache(DefaultCheckpointBytes)

// CheckpointCache keeps inflate checkpoints (a deflate block boundary and the
// 32 KiB window before it) of large deflated members, bounded by bytes and
// evicted least recently used first. It is safe for concurrent use and may
// be shared by packages. simplelru keeps the recency order; its eviction
// callback keeps the byte count and the per-member index.
type CheckpointCache struct {
	mu      sync.Mutex
	max     int64
	used    int64
	lru     *simplelru.LRU[checkpointKey, *checkpoint]
	members map[memberKey][]*checkpoint // sorted by out
}

// checkpointKey names a checkpoint: its member and uncompressed offset.
type checkpointKey struct {
	member memberKey
	out    int64
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
}

// checkpointOverhead approximates a checkpoint's bookkeeping bytes.
const checkpointOverhead = 128

// NewCheckpointCache returns a cache holding up to maxBytes of checkpoints.
func NewCheckpointCache(maxBytes int64) *CheckpointCache {
	c := &CheckpointCache{max: maxBytes, members: map[memberKey][]*checkpoint{}}
	// The count bound is never reached: add evicts by bytes.
	lru, err := simplelru.NewLRU(math.MaxInt, c.dropped)
	if err != nil {
		panic(err) // only for a size <= 0
	}
	c.lru = lru
	return c
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
	c.lru.Get(checkpointKey{key, cp.out}) // most recently used
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
	c.lru.Add(checkpointKey{key, out}, cp)
	c.members[key] = insertAt(cps, i, cp)
	c.used += cost(cp)
	for c.used > c.max && c.lru.Len() > 0 {
		c.lru.RemoveOldest()
	}
}

// forget drops every checkpoint of pkg.
func (c *CheckpointCache) forget(pkg uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, cps := range c.members {
		if key.pkg == pkg {
			for _, cp := range slices.Clone(cps) {
				c.lru.Remove(checkpointKey{key, cp.out})
			}
		}
	}
}

// dropped accounts for a checkpoint leaving the LRU, whatever the reason.
func (c *CheckpointCache) dropped(_ checkpointKey, cp *checkpoint) {
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
