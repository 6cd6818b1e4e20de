package cache

// OnDisk is how many bytes of content ct its disk cache holds: the blocks
// of ct its index knows (written, read, or found by the startup scan; not
// those still waiting to be written). 0 without a disk cache.
func (c *Cache) OnDisk(ct Content) int64 {
	if c.disk == nil || ct.Size <= 0 {
		return 0
	}
	bs := int64(c.blockSize)
	n := (ct.Size + bs - 1) / bs
	var have int64
	c.disk.mu.Lock()
	defer c.disk.mu.Unlock()
	for b := range n {
		dk := c.disk.key(blockKey{ct.ID, b})
		if c.disk.index.knows(dk) {
			have += min(bs, ct.Size-b*bs)
		}
	}
	return have
}
